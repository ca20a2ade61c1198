import { declareIntegrationEvent } from '../events/integration-event';
import { DateField, IntField, WireRecord } from '../wire';

/**
 * What an import run committed: counts and id ranges, not its records. A consumer reads what changed
 * with ListTransactions (`changed_since`, or the id range) and GetRequirements.
 */
@WireRecord({ name: 'DataImported' })
export class DataImportedDto {
  /** When the import committed. */
  @DateField() stamp?: Date | null;
  @IntField() transactions_created?: number | null;
  @IntField() transactions_updated?: number | null;
  /** The lowest and highest transaction_id the run wrote; null when it wrote no transaction. */
  @IntField() transaction_id_from?: number | null;
  @IntField() transaction_id_to?: number | null;
  @IntField() requirement_types_created?: number | null;
  @IntField() requirement_types_updated?: number | null;
  /** The lowest and highest requirement_type_id the run wrote; null when it wrote no catalogue. */
  @IntField() requirement_type_id_from?: number | null;
  @IntField() requirement_type_id_to?: number | null;
  @IntField() acquisitions_created?: number | null;
  @IntField() acquisitions_updated?: number | null;
}

export const DATA_IMPORTED = declareIntegrationEvent({
  type: 'property-sales.data.imported',
  routingKey: 'data.imported',
  payload: DataImportedDto,
  summary: 'An import run committed.',
  description:
    'One run of the import command (npm run data:import), all or nothing: how many transactions, ' +
    'requirement types and acquisition records it created and updated, and the range of ids it ' +
    'wrote. One event a run, not one a record: read the transactions it changed with ' +
    'ListTransactions (changed_since, or paging through the id range).',
  example: {
    stamp: new Date('2024-05-06T02:00:04.125Z'),
    transactions_created: 1200,
    transactions_updated: 35,
    transaction_id_from: 1,
    transaction_id_to: 1235,
    requirement_types_created: 0,
    requirement_types_updated: 12,
    requirement_type_id_from: 1,
    requirement_type_id_to: 12,
    acquisitions_created: 0,
    acquisitions_updated: 30,
  },
});
