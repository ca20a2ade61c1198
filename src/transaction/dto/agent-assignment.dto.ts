import { DateField, IntField, IntOrTextField, ListField, TextField, WireRecord } from '../../wire';

/** One member of a change, with its values typed as the member is: an id (brokerid…) or a name. */
@WireRecord({ name: 'AgentChange' })
export class AgentChangeDto {
  @TextField() field?: string | null;
  @IntOrTextField() before?: number | string | null;
  @IntOrTextField() after?: number | string | null;
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
  /**
   * The transaction's row version after this change: the one its AgentsChanged event carries and its
   * ETag then named. Null on an entry older than the member whose version could not be derived.
   */
  @IntField() row_version?: number | null;
}
