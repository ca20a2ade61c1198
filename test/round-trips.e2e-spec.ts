import { CommitGate } from './support/commit-gate';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { describeOnMariaDb, relayIdle, RunningApp } from './support/test-app';
import { createTestDatabase, type TestDatabase } from './support/test-database';
import { getTransactionPath, UPDATE_AGENTS } from './support/update-agents-cases';

const TRANSACTION = 5151;

/**
 * How many times a request waits on MariaDB, counted by a relay between the service and the server:
 * GetTransaction sends its two SELECTs in one query, UpdateAgents its five statements in two (and a
 * call that changes nothing its locking read and ROLLBACK in two), whatever else changes.
 */
describeOnMariaDb('round trips to MariaDB per request', () => {
  let database: TestDatabase;
  let gate: CommitGate;
  let running: RunningApp;

  beforeAll(async () => {
    database = await createTestDatabase('mariadb');
    gate = await CommitGate.start(database.url);
    running = await RunningApp.start(gate.urlFor(database.url), { MIGRATIONS_RUN: 'true' });
    await running.seed({ requirements: CATALOGUE, transactions: [transactionRecord(TRANSACTION)] });
    // The pool's connection is open before anything is counted.
    await running.http.get(getTransactionPath(TRANSACTION)).expect(200);
  }, 60000);

  afterAll(async () => {
    await running?.close();
    await gate?.close();
    await database?.drop();
  });

  /**
   * The queries `send` made the service send for its request, on the connection that carried the
   * statement `marker` finds, once the reacting module has handled the changes before: its steps,
   * which a change sets off, run on connections of their own.
   */
  async function queriesOf(send: () => Promise<unknown>, marker: string | RegExp): Promise<number> {
    await relayIdle(running);
    return gate.roundTripsOf(send, marker);
  }
  /** UpdateAgents' locking read of the transaction (the relay's claims skip locked rows). */
  const LOCKING_READ = /`sales_transaction`.* FOR UPDATE$/;

  const updateAgents = (brokerid: number) =>
    running.http
      .post(UPDATE_AGENTS)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ transaction_id: TRANSACTION, financetype: 'Cash', brokerid }))
      .expect(204);

  it('GetTransaction: one', async () => {
    expect(
      await queriesOf(
        () => running.http.get(getTransactionPath(TRANSACTION)).expect(200),
        String(TRANSACTION),
      ),
    ).toBe(1);
  });

  it('UpdateAgents that changes a member: two, and the change is stored', async () => {
    expect(await queriesOf(() => updateAgents(8080), LOCKING_READ)).toBe(2);
    const stored = await running.http.get(getTransactionPath(TRANSACTION)).expect(200);
    expect((stored.body as { brokerid: number }).brokerid).toBe(8080);
  });

  it('UpdateAgents that changes nothing: two', async () => {
    expect(await queriesOf(() => updateAgents(8080), LOCKING_READ)).toBe(2);
  });
});
