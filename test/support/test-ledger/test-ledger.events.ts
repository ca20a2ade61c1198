import { declareIntegrationEvent } from '../../../src/events/integration-event';
import { DecimalField, IntField, ListField, TextField, WireRecord } from '../../../src/wire';

/** One agent's share of a transaction's commission. */
@WireRecord({ name: 'TestLedgerSplit' })
export class TestLedgerSplitDto {
  /** The agent chain's role: brokerid, directorid, salesagentid… */
  @TextField() role?: string | null;
  @IntField() agent_id?: number | null;
  @DecimalField({ scale: 4, precision: 9 }) rate?: number | null;
  @DecimalField({ scale: 2, precision: 15 }) amount?: number | null;
}

/** A transaction's splits as they stand after a change of its agent chain: all of them, not a delta. */
@WireRecord({ name: 'TestLedgerSplitsChanged' })
export class TestLedgerSplitsChangedDto {
  @IntField() transaction_id?: number | null;
  /** The transaction's row version the splits were computed from. */
  @IntField() row_version?: number | null;
  @ListField(() => TestLedgerSplitDto) splits?: TestLedgerSplitDto[] | null;
}

/** What one batch of a recomputation did: the range of transactions it recomputed. */
@WireRecord({ name: 'TestLedgerRecomputed' })
export class TestLedgerRecomputedDto {
  @IntField() transaction_id_from?: number | null;
  @IntField() transaction_id_to?: number | null;
  @IntField() transactions?: number | null;
}

export const TEST_LEDGER_SPLITS_CHANGED = declareIntegrationEvent({
  type: 'property-sales.test-ledger.splits-changed',
  routingKey: 'test-ledger.splits-changed',
  payload: TestLedgerSplitsChangedDto,
  summary: "A transaction's commission splits changed.",
  description: 'Every split of the transaction, as recomputed after its agent chain changed.',
  subject: 'The transaction id, as text.',
  example: {
    transaction_id: 1001,
    row_version: 4,
    splits: [{ role: 'brokerid', agent_id: 11, rate: 0.01, amount: 45000 }],
  },
  exampleSubject: '1001',
});

export const TEST_LEDGER_RECOMPUTED = declareIntegrationEvent({
  type: 'property-sales.test-ledger.recomputed',
  routingKey: 'test-ledger.recomputed',
  payload: TestLedgerRecomputedDto,
  summary: "A batch of transactions' commission splits was recomputed.",
  description: 'One batch of a recomputation (after an import): the ids it covered.',
  example: { transaction_id_from: 1, transaction_id_to: 500, transactions: 500 },
});
