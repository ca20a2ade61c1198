/** The agents of a chain, by id: where ListTransactions looks for an agent_id. */
export const AGENT_ID_FIELDS = [
  'brokerid',
  'directorid',
  'directorid_recruit',
  'managerid',
  'managerid_recruit',
  'salesagentid',
  'salesagentid_recruit',
] as const;

/** The agent chain: the only members UpdateAgents writes (CONTRACT §8). */
export const AGENT_CHAIN_FIELDS = [
  ...AGENT_ID_FIELDS,
  'brokername',
  'directorname',
  'directorname_recruit',
  'managername',
  'managername_recruit',
  'salesagentname',
  'salesagentname_recruit',
] as const;

export type AgentChainField = (typeof AGENT_CHAIN_FIELDS)[number];

export type AgentChainValue = number | string | null;

/** One field of one change, as the history keeps it. */
export interface AgentChange {
  readonly field: AgentChainField;
  readonly before: AgentChainValue;
  readonly after: AgentChainValue;
}
