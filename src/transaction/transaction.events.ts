import { declareIntegrationEvent } from '../events/integration-event';
import { DateField, IntField, ListField, TextField, WireRecord } from '../wire';
import { AgentChangeDto } from './dto/agent-assignment.dto';

/** A transaction's strong ETag: its id and row version, the same for every representation. */
export const etagOf = (transactionId: number, version: number) => `"${transactionId}.${version}"`;

/** What an AgentsChanged event tells: one UpdateAgents that changed a transaction's agent chain. */
@WireRecord({ name: 'AgentsChanged' })
export class AgentsChangedDto {
  @IntField() transaction_id?: number | null;
  /** When the change was committed: the transaction's new stamp, its history entry's stamp. */
  @DateField() stamp?: Date | null;
  /** The caller's identity, when the request carried one. */
  @TextField() changed_by?: string | null;
  /** The transaction's row version after the change. */
  @IntField() row_version?: number | null;
  /** Its ETag after the change, as GetTransaction answers it: If-Match on the next UpdateAgents. */
  @TextField() etag?: string | null;
  /** Each member that changed, before and after. */
  @ListField(() => AgentChangeDto) changes?: AgentChangeDto[] | null;
}

export const AGENTS_CHANGED = declareIntegrationEvent({
  type: 'property-sales.transaction.agents-changed',
  routingKey: 'transaction.agents-changed',
  payload: AgentsChangedDto,
  summary: "A transaction's agent chain changed.",
  description:
    'One UpdateAgents call that changed at least one member of the agent chain, as it committed: ' +
    'every member it changed with its value before and after, who changed it, and the row version and ' +
    "ETag the transaction has since. A transaction's events come in the order they committed.",
  subject: 'The transaction id, as text.',
  example: {
    transaction_id: 1001,
    stamp: new Date('2024-05-06T09:30:15.250Z'),
    changed_by: 'crm-sync',
    row_version: 4,
    etag: '"1001.4"',
    changes: [
      { field: 'salesagentid', before: 88, after: 97 },
      { field: 'salesagentname', before: 'Ana Reyes', after: 'Ben Cruz' },
    ],
  },
  exampleSubject: '1001',
});
