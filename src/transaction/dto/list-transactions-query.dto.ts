import { DateField, IntField, TextField, WireRecord } from '../../wire';

/** The largest page ListTransactions answers, and the size of a page the caller does not size. */
export const PAGE_LIMIT = { max: 500, default: 50 } as const;

/**
 * ListTransactions' query string, read as Web API bound URI values: names in any case, the first of
 * repeated names, an empty value as absent, values as the form binder converts them; violations in
 * ModelState keyed `query.<name>`.
 */
@WireRecord({ name: 'Query', schemaName: 'ListTransactionsQuery' })
export class ListTransactionsQueryDto {
  @IntField({ min: 1, max: PAGE_LIMIT.max }) limit?: number | null;
  @TextField() status?: string | null;
  @TextField() financetype?: string | null;
  @IntField() agent_id?: number | null;
  @DateField() changed_since?: Date | null;
  @TextField() cursor?: string | null;
}
