import { declareIntegrationEvent } from '../events/integration-event';
import { DateField, IntField, ListField, TextField, WireRecord } from '../wire';
import { AgentChangeDto } from './dto/agent-assignment.dto';
import { STORED } from './dto/transaction.dto';

/** A transaction's strong ETag: its id and row version, the same for every representation. */
export const etagOf = (transactionId: number, version: number) => `"${transactionId}.${version}"`;

/**
 * What an AgentsChanged event tells: one UpdateAgents that changed a transaction's agent chain, with
 * the whole chain as it stands after, so a consumer needs no read-back.
 */
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
  // The agent chain after the change, every member named and typed as the Transaction's.
  @IntField() brokerid?: number | null;
  @IntField() directorid?: number | null;
  @IntField() directorid_recruit?: number | null;
  @IntField() managerid?: number | null;
  @IntField() managerid_recruit?: number | null;
  @IntField() salesagentid?: number | null;
  @IntField() salesagentid_recruit?: number | null;
  @TextField(STORED) brokername?: string | null;
  @TextField(STORED) directorname?: string | null;
  @TextField(STORED) directorname_recruit?: string | null;
  @TextField(STORED) managername?: string | null;
  @TextField(STORED) managername_recruit?: string | null;
  @TextField(STORED) salesagentname?: string | null;
  @TextField(STORED) salesagentname_recruit?: string | null;
}

export const AGENTS_CHANGED = declareIntegrationEvent({
  type: 'property-sales.transaction.agents-changed',
  routingKey: 'transaction.agents-changed',
  payload: AgentsChangedDto,
  summary: "A transaction's agent chain changed.",
  description:
    'One UpdateAgents call that changed at least one member of the agent chain, as it committed: ' +
    'every member it changed with its value before and after, who changed it, the row version and ' +
    'ETag the transaction has since, and its whole agent chain as it stands after the change (the ' +
    "fourteen members, named as the Transaction's), so a consumer needs no read-back. A " +
    "transaction's events come in the order they committed.",
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
    brokerid: 11,
    directorid: 21,
    directorid_recruit: null,
    managerid: 31,
    managerid_recruit: null,
    salesagentid: 97,
    salesagentid_recruit: null,
    brokername: 'Ramon Dela Cruz',
    directorname: 'Teresa Villanueva',
    directorname_recruit: null,
    managername: 'Paolo Reyes',
    managername_recruit: null,
    salesagentname: 'Ben Cruz',
    salesagentname_recruit: null,
  },
  exampleSubject: '1001',
});
