import { DateField, IntField, ListField, TextField, WireRecord } from '../../wire';

/** One field of a change; values are written as text, since the chain mixes ids and names. */
@WireRecord({ name: 'AgentChange' })
export class AgentChangeDto {
  @TextField() field?: string | null;
  @TextField() before?: string | null;
  @TextField() after?: string | null;
}

/** One accepted change of a transaction's agent chain (GetAgentHistory). */
@WireRecord({ name: 'AgentAssignment' })
export class AgentAssignmentDto {
  @IntField() assignment_id?: number | null;
  @IntField() transaction_id?: number | null;
  /** When the change was committed. */
  @DateField() stamp?: Date | null;
  /** The caller's identity, when the request carried one. */
  @TextField() changed_by?: string | null;
  @ListField(() => AgentChangeDto) changes?: AgentChangeDto[] | null;
}
