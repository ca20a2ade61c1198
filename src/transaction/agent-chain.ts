/**
 * The roles of an agent chain, each named by its agent's id member: what a module paying or listing
 * agents goes through (ListTransactions looks for an agent_id in each).
 */
export const AGENT_ROLES = [
  'brokerid',
  'directorid',
  'directorid_recruit',
  'managerid',
  'managerid_recruit',
  'salesagentid',
  'salesagentid_recruit',
] as const;

export type AgentRole = (typeof AGENT_ROLES)[number];

/** The agent chain: the only members UpdateAgents writes (CONTRACT §8). */
export const AGENT_CHAIN_FIELDS = [
  ...AGENT_ROLES,
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
