import { DataSource } from 'typeorm';
import { UnitOfWork } from '../src/database/unit-of-work';
import { BatchedReactions } from '../src/event-relay/batched-reactions';
import { TestLedger, splitsOf } from './support/test-ledger/test-ledger';
import {
  TEST_LEDGER_SPLITS_CHANGED,
  TEST_LEDGER_RECOMPUTED,
  type TestLedgerRecomputedDto,
} from './support/test-ledger/test-ledger.events';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { asJson, Scenario } from './support/scenario';
import { describeOnEachDatabase, relayIdle } from './support/test-app';

const UPDATE = '/api/Transaction/UpdateAgents';
const SELLING_PRICE = 2850000.5;

/**
 * The reacting test module every suite mounts (test/support/test-ledger): it keeps commission splits
 * from the transaction module's events, through its door, and publishes its own. What a module the
 * team adds can count on.
 */
describeOnEachDatabase('a module that reacts to events and publishes its own', (context) => {
  const ledger = () => context.running.app.get(TestLedger);
  const storedSplits = (transactionId: number) =>
    ledger().splitsOf(context.running.app.get(DataSource).manager, transactionId);
  const scenario = () => new Scenario(() => context.running.app);
  beforeAll(async () => {
    await context.running.seed({ requirements: CATALOGUE, transactions: [transactionRecord(1)] });
    // The import's recomputation has written every split: a change then writes the ones it moves.
    await relayIdle(context.running);
  });

  it("recomputes a transaction's splits from the event's chain and the door's amounts, and publishes them whole", async () => {
    const event = await scenario()
      .stimulate(() =>
        context.http
          .post(UPDATE)
          .send({ transaction_id: 1, financetype: 'Cash', salesagentid: 97, brokerid: null })
          .expect(204),
      )
      .andWaitForEventOfType(TEST_LEDGER_SPLITS_CHANGED)
      .matching((received) => received.subject === '1')
      .toArrive();
    const read = await context.http.get('/api/Transaction/GetTransaction/1').expect(200);
    const expected = splitsOf(read.body as Record<string, number>, SELLING_PRICE);
    expect(expected.map((split) => split.role)).not.toContain('brokerid');
    expect(expected).toContainEqual({
      role: 'salesagentid',
      agent_id: 97,
      rate: 0.03,
      amount: 85500.02,
    });
    expect(asJson(event.data)).toEqual({
      transaction_id: 1,
      row_version: Number(/\.(\d+)"$/.exec(read.headers.etag)![1]),
      splits: expected,
    });
    expect(await storedSplits(1)).toEqual(
      [...expected].sort((a, b) => a.role!.localeCompare(b.role!)),
    );
  });

  it('publishes nothing for a change that is refused or changes nothing', async () => {
    await context.running.seed({ transactions: [transactionRecord(2, { locked: true })] });
    const refused = await scenario()
      .stimulate(async () => {
        await context.http
          .post(UPDATE)
          .send({ transaction_id: 2, financetype: 'Cash', brokerid: 5 })
          .expect(409);
        await context.http
          .post(UPDATE)
          .set('If-Match', '"1.99"')
          .send({ transaction_id: 1, financetype: 'Cash', brokerid: 5 })
          .expect(412);
        await context.http
          .post(UPDATE)
          .send({ transaction_id: 1, financetype: 'Cash', salesagentid: 97 })
          .expect(204);
      })
      .andWaitForEventOfType(TEST_LEDGER_SPLITS_CHANGED)
      .allWithin(1000);
    expect(refused).toEqual([]);
  });

  it('recomputes every imported transaction in bounded batches, each committed with its checkpoint', async () => {
    const ids = Array.from({ length: 1200 }, (_, index) => 1001 + index);
    const batches = await scenario()
      .stimulate(() =>
        context.running.seed({ transactions: ids.map((id) => transactionRecord(id)) }),
      )
      .andWaitForEventOfType(TEST_LEDGER_RECOMPUTED)
      .toArriveUntil(
        (events) => events.some((event) => event.data.transaction_id_to === 2200),
        60_000,
      );
    expectPartition(
      batches.map((event) => event.data),
      ids,
      500,
    );
    for (const id of [1001, 1500, 2200]) expect(await storedSplits(id)).toHaveLength(7);
  });

  it('goes on from its checkpoint after a restart, doing no batch twice', async () => {
    const ids = Array.from({ length: 3000 }, (_, index) => 10_001 + index);
    await scenario()
      .stimulate(() =>
        context.running.seed({ transactions: ids.map((id) => transactionRecord(id)) }),
      )
      .andWaitForEventOfType(TEST_LEDGER_RECOMPUTED)
      .toArriveUntil(
        (events) => events.some((event) => event.data.transaction_id_to === 13_000),
        60_000,
      );
    // The run ends with a batch that finds no key left, which removes its checkpoint.
    await relayIdle(context.running);
    // A run an instance left half done when it stopped: its checkpoint, past 11,500.
    const options = context.running.app.get(DataSource).options;
    const leaveHalfDone = async () => {
      const left = new DataSource({ ...options, migrationsRun: false });
      await left.initialize();
      try {
        await left.query('DELETE FROM test_ledger_split WHERE transaction_id > ?', [11_500]);
        await left.query('INSERT INTO event_checkpoint (consumer, position) VALUES (?, ?)', [
          'reaction:TestLedger.recompute',
          11_500,
        ]);
      } finally {
        await left.destroy();
      }
    };
    const resumed = await scenario()
      .stimulate(() => context.restart({}, leaveHalfDone))
      .andWaitForEventOfType(TEST_LEDGER_RECOMPUTED)
      .toArriveUntil(
        (events) => events.some((event) => event.data.transaction_id_to === 13_000),
        60_000,
      );
    expectPartition(
      resumed.map((event) => event.data),
      ids.filter((id) => id > 11_500),
      500,
    );
    expect(await storedSplits(11_501)).toHaveLength(7);
    expect(await storedSplits(13_000)).toHaveLength(7);
  });

  it("recomputes an import's transactions and not those after them, two imports' runs covering both", async () => {
    const range = (from: number, count: number) =>
      Array.from({ length: count }, (_, index) => from + index);
    const records = (ids: readonly number[]) => ids.map((id) => transactionRecord(id));
    const later = range(50_001, 600);
    await context.running.seed({ transactions: records(later) });
    await relayIdle(context.running, 60_000);
    // What a recomputation of the transactions after the imports would write again.
    await context.running.app
      .get(DataSource)
      .query('DELETE FROM test_ledger_split WHERE transaction_id > ?', [50_000]);
    const first = range(20_001, 100);
    const second = range(30_001, 700);
    const batches = await scenario()
      .stimulate(async () => {
        await context.running.seed({ transactions: records(first) });
        await context.running.seed({ transactions: records(second) });
      })
      .andWaitForEventOfType(TEST_LEDGER_RECOMPUTED)
      .toArriveUntil(
        (events) => events.some((event) => event.data.transaction_id_to! >= 30_700),
        60_000,
      );
    await relayIdle(context.running, 60_000);
    expectPartition(
      batches.map((event) => event.data),
      [...first, ...second],
      500,
    );
    expect(await storedSplits(20_001)).toHaveLength(7);
    expect(await storedSplits(30_700)).toHaveLength(7);
    expect(await storedSplits(50_001)).toEqual([]);
    expect(await storedSplits(50_600)).toEqual([]);
  });

  it('widens a run under way to cover a second start: from the lower key to the higher bound', async () => {
    const reactions = context.running.app.get(BatchedReactions);
    const batches = await scenario()
      .stimulate(() =>
        context.running.app.get(UnitOfWork).write(async () => {
          await reactions.start(TestLedger, 'recompute', 30_600, 30_700);
          await reactions.start(TestLedger, 'recompute', 20_050, 20_100);
        }),
      )
      .andWaitForEventOfType(TEST_LEDGER_RECOMPUTED)
      .toArriveUntil(
        (events) => events.some((event) => event.data.transaction_id_to! >= 30_700),
        60_000,
      );
    const ids = (from: number, to: number) =>
      Array.from({ length: to - from + 1 }, (_, index) => from + index);
    expectPartition(
      batches.map((event) => event.data),
      [...ids(20_051, 20_100), ...ids(30_001, 30_700)],
      500,
    );
  });
});

/** The batches' ranges, in order: they must cover `ids` once each, none larger than `size`. */
export function expectPartition(
  batches: readonly TestLedgerRecomputedDto[],
  ids: readonly number[],
  size: number,
): void {
  const covered = batches.flatMap(({ transaction_id_from, transaction_id_to }) =>
    ids.filter((id) => id >= transaction_id_from! && id <= transaction_id_to!),
  );
  expect(covered).toEqual(ids);
  for (const batch of batches) expect(batch.transactions).toBeLessThanOrEqual(size);
}
