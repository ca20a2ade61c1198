import { DataSource } from 'typeorm';
import { BatchedReactions } from '../src/event-relay/batched-reactions';
import { DataImportModule } from '../src/data-import';
import { AGENTS_CHANGED, TransactionModule, TransactionQueries } from '../src/transaction';
import {
  BARRED_BROKER,
  EventHandlersModule,
  flaky,
  type HandlerCall,
  handlerCalls,
  NOTIFICATION_SENT,
  SlowRecount,
  slowRecount,
  TallyModule,
} from './support/event-handlers.module';
import { Scenario } from './support/scenario';
import { expectAgentChainAsRead } from './support/event-collector';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { IMPORT_MAIN, runNode } from './support/processes';
import { TEST_LEDGER_SPLITS_CHANGED } from './support/test-ledger/test-ledger.events';
import { type Environment, relayIdle, RunningApp, type StartOptions } from './support/test-app';
import { createTestDatabase, type TestDatabase, testDatabaseKinds } from './support/test-database';

const UPDATE = '/api/Transaction/UpdateAgents';
const HANDLERS = { EVENTS_POLL_MS: '50' };
/**
 * What the cases about which events the outbox stores mount of the service: the modules they seed and
 * update through, and no other, so that a module added to the service that handles events (whose
 * kinds the outbox then stores) leaves them true.
 */
const STORING_FEATURES = [DataImportModule, TransactionModule];

async function eventually<T>(read: () => T | Promise<T>, done: (value: T) => boolean, ms = 10_000) {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > until) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const callsOf = (handler: string, subject?: string): HandlerCall[] =>
  handlerCalls.filter(
    (call) => call.handler === handler && (subject === undefined || call.event.subject === subject),
  );

for (const kind of testDatabaseKinds()) {
  describe(`Integration events through the outbox [${kind}]`, () => {
    let database: TestDatabase;
    let running: RunningApp | undefined;

    const start = async (
      env: Environment = {},
      withHandlers = true,
      scenario = true,
      features?: StartOptions['features'],
    ) => {
      await running?.close();
      running = await RunningApp.start(
        database.url,
        { ...HANDLERS, ...env },
        withHandlers ? [EventHandlersModule] : [],
        { reactor: withHandlers, scenario, features },
      );
      return running;
    };
    const count = async (sql: string, parameters: unknown[] = []) => {
      const [{ n }] = await running!.app
        .get(DataSource)
        .query<[{ n: number | string }]>(sql, parameters);
      return Number(n);
    };
    const outboxRows = () => count('SELECT COUNT(*) AS n FROM event_outbox');
    const scenario = () => new Scenario(running!.app);
    const update = (body: object, headers: Record<string, string> = {}) =>
      running!.http
        .post(UPDATE)
        .set(headers)
        .send({ financetype: 'Cash', ...body });

    beforeAll(async () => {
      database = await createTestDatabase(kind);
    });
    beforeEach(() => {
      handlerCalls.length = 0;
      flaky.failuresLeft = 0;
      slowRecount.msPerKey = 0;
    });
    afterAll(async () => {
      await running?.close();
      await database?.drop();
    });

    it('writes no outbox row while no broker is set and no module handles events', async () => {
      const app = await start({}, false, false, STORING_FEATURES);
      await app.seed({ requirements: CATALOGUE, transactions: [transactionRecord(1)] });
      await update({ transaction_id: 1, brokerid: 12 }).expect(204);
      expect(await outboxRows()).toBe(0);
    });

    it('stores only the kinds of events a handler hears while no broker is set', async () => {
      const app = await start({}, true, false, STORING_FEATURES);
      await app.seed({ transactions: [transactionRecord(50)] });
      await relayIdle(app);
      const rowsOf = (kind: { routingKey: string }) =>
        count('SELECT COUNT(*) AS n FROM event_outbox WHERE routing_key = ?', [kind.routingKey]);
      const agentsChanged = await rowsOf(AGENTS_CHANGED);
      await update({ transaction_id: 50, brokerid: 14 }).expect(204);
      await relayIdle(app);
      // The reacting module recomputed the splits and published them, but nothing consumes its
      // event here: it is not written.
      expect(
        await count('SELECT COUNT(*) AS n FROM test_ledger_split WHERE transaction_id = ?', [50]),
      ).toBeGreaterThan(0);
      expect(await rowsOf(TEST_LEDGER_SPLITS_CHANGED)).toBe(0);
      expect(await rowsOf(NOTIFICATION_SENT)).toBe(0);
      expect(await rowsOf(AGENTS_CHANGED)).toBe(agentsChanged + 1);
    });

    it('hands each committed change to every handler once, as it committed', async () => {
      const app = await start();
      await app.seed({ transactions: [transactionRecord(2)] });
      await update(
        { transaction_id: 2, brokerid: 13, brokername: 'Ana Reyes' },
        { Authorization: 'ignored' },
      ).expect(204);
      const read = await app.http.get('/api/Transaction/GetTransaction/2').expect(200);
      const [history] = (await app.http.get('/api/Transaction/GetAgentHistory/2').expect(200))
        .body as { stamp: string; row_version: number }[];

      const [audit] = await eventually(
        () => callsOf('AuditTrail', '2'),
        (calls) => calls.length > 0,
      );
      expect(audit.inTransaction).toBe(true);
      expect(audit.event).toMatchObject({
        type: 'property-sales.transaction.agents-changed',
        source: 'urn:property-sales-service',
        subject: '2',
        time: history.stamp,
      });
      expect(audit.event.data).toMatchObject({
        transaction_id: 2,
        row_version: 2,
        etag: read.headers.etag,
        changes: [
          { field: 'brokerid', before: 11, after: 13 },
          { field: 'brokername', before: 'Ramon Dela Cruz', after: 'Ana Reyes' },
        ],
      });
      expect((audit.event.data as { stamp: Date }).stamp).toEqual(new Date(history.stamp));
      // The event, the history entry of its change and a read after it name one version.
      expect([history.row_version, (read.body as { row_version: number }).row_version]).toEqual([
        2, 2,
      ]);
      expectAgentChainAsRead(audit.event.data, read.body as Record<string, unknown>);
      await eventually(
        () => callsOf('FlakyNotifier', '2'),
        (calls) => calls.length > 0,
      );
      expect(callsOf('AuditTrail', '2')).toHaveLength(1);
      expect(callsOf('FlakyNotifier', '2')).toHaveLength(1);
    });

    it('retries a failing handler without holding up the others, committing what it publishes with the step that handled its event, and nothing for a failed step', async () => {
      const app = await start();
      await app.seed({ transactions: [transactionRecord(3)] });
      flaky.failuresLeft = 2;
      const notifications = scenario()
        .stimulate(() => update({ transaction_id: 3, managerid: 77 }).expect(204))
        .andWaitForEventOfType(NOTIFICATION_SENT)
        .matching((event) => event.subject === '3');
      expect(
        await eventually(
          () => callsOf('AuditTrail', '3'),
          (calls) => calls.length > 0,
          2000,
        ),
      ).toHaveLength(1);
      // The notifier failed once, and waits a second before its next try.
      expect(callsOf('FlakyNotifier', '3')).toHaveLength(0);
      const sent = await notifications.toArrive();
      expect(sent.data).toEqual({ transaction_id: 3, text: 'Agents changed.' });
      expect(flaky.failuresLeft).toBe(0);
      // Two failed steps published theirs too, and rolled them back with the rest.
      expect(await notifications.allWithin(500)).toHaveLength(1);
      expect(callsOf('FlakyNotifier', '3')).toHaveLength(1);
      const metrics = (await app.http.get('/metrics').expect(200)).text;
      expect(metrics).toContain('event_handler_failures_total{handler="FlakyNotifier.notify"} 2');
      expect(metrics).toContain('events_handled_total{handler="AuditTrail.record"}');
    });

    it('publishes nothing for a write that is refused or changes nothing', async () => {
      const app = await start();
      await app.seed({
        transactions: [transactionRecord(4), transactionRecord(5, { locked: true })],
      });
      await update({ transaction_id: 4, brokerid: 99 }, { 'If-Match': '"4.99"' }).expect(412);
      await update({ transaction_id: 5, brokerid: 99 }).expect(409);
      await update({ transaction_id: 404, brokerid: 99 }).expect(404);
      await update({ transaction_id: 4, brokerid: 'not a number' }).expect(400);
      await update({ transaction_id: 4, brokerid: 11 }).expect(204);
      // A change after them: once it is handled, anything before it would have been too.
      await update({ transaction_id: 4, directorid: 5 }).expect(204);
      const read = await app.http.get('/api/Transaction/GetTransaction/4').expect(200);
      await eventually(
        () => callsOf('AuditTrail'),
        (calls) => calls.length > 0,
      );
      expect(callsOf('AuditTrail').map((call) => call.event.data)).toEqual([
        expect.objectContaining({
          transaction_id: 4,
          row_version: 2,
          changes: [{ field: 'directorid', before: 21, after: 5 }],
        }),
      ]);
      expectAgentChainAsRead(
        callsOf('AuditTrail')[0].event.data,
        read.body as Record<string, unknown>,
      );
    });

    it('tells of an import run in one event, with its counts and id ranges', async () => {
      const app = await start();
      await app.seed({ transactions: [transactionRecord(20), transactionRecord(7)] });
      const [imported] = await eventually(
        () => callsOf('ImportWatcher'),
        (calls) => calls.length > 0,
      );
      expect(imported.event.type).toBe('property-sales.data.imported');
      expect(imported.event.subject).toBeUndefined();
      expect(imported.event.data).toMatchObject({
        transactions_created: 2,
        transactions_updated: 0,
        transaction_id_from: 7,
        transaction_id_to: 20,
        requirement_types_created: 0,
        requirement_type_id_from: null,
      });
      expect(callsOf('AuditTrail')).toHaveLength(0);
    });

    it("tells the service's handlers of an import command's run, with no broker", async () => {
      await start();
      const directory = await mkdtemp(join(tmpdir(), 'events-import-'));
      try {
        const file = join(directory, 'transactions.json');
        await writeFile(file, JSON.stringify([transactionRecord(30), transactionRecord(31)]));
        const result = await runNode(IMPORT_MAIN, ['--transactions', file, '--quiet'], {
          env: { DATABASE_URL: database.url },
        });
        expect(result.stderr).toBe('');
        expect(result.code).toBe(0);
      } finally {
        await rm(directory, { recursive: true, force: true });
      }
      const [imported] = await eventually(
        () => callsOf('ImportWatcher'),
        (calls) => calls.length > 0,
      );
      expect(imported.event.data).toMatchObject({
        transactions_created: 2,
        transaction_id_from: 30,
        transaction_id_to: 31,
      });
    });

    it('never runs a handled event again after a restart, and goes on with new ones', async () => {
      const app = await start();
      await app.seed({ transactions: [transactionRecord(8)] });
      await update({ transaction_id: 8, salesagentid: 1 }).expect(204);
      await eventually(
        () => callsOf('FlakyNotifier', '8'),
        (calls) => calls.length > 0,
      );
      await start();
      await update({ transaction_id: 8, salesagentid: 2 }).expect(204);
      const calls = await eventually(
        () => callsOf('FlakyNotifier', '8'),
        (found) => found.length > 1,
      );
      expect(calls.map((call) => (call.event.data as { row_version: number }).row_version)).toEqual(
        [2, 3],
      );
      // The audit trail's step runs at its own pace, apart from the notifier's.
      expect(
        await eventually(
          () => callsOf('AuditTrail', '8'),
          (found) => found.length > 1,
        ),
      ).toHaveLength(2);
    });

    it("runs an in-transaction handler inside the change's own transaction: its writes commit with it", async () => {
      const app = await start();
      await app.seed({ transactions: [transactionRecord(11)] });
      await update({ transaction_id: 11, managerid: 5 }).expect(204);
      // No waiting: the change and the handler's row committed together, before the answer.
      const [guard] = callsOf('ChainGuard', '11');
      expect(guard.inTransaction).toBe(true);
      expect(guard.event.data).toMatchObject({ transaction_id: 11, managerid: 5, row_version: 2 });
      expect(
        await count(
          'SELECT COUNT(*) AS n FROM chain_guard_log WHERE transaction_id = ? AND row_version = ?',
          [11, 2],
        ),
      ).toBe(1);
      // The after-commit handlers hear the same event, by the same id.
      const [audit] = await eventually(
        () => callsOf('AuditTrail', '11'),
        (calls) => calls.length > 0,
      );
      expect(audit.event.id).toBe(guard.event.id);
    });

    it('rolls the change back when an in-transaction handler refuses it: its error, nothing stored, no event', async () => {
      const app = await start();
      await app.seed({ transactions: [transactionRecord(12)] });
      const before = await app.http.get('/api/Transaction/GetTransaction/12').expect(200);
      const published = scenario()
        .stimulate(async () => {
          const refused = await update({ transaction_id: 12, brokerid: BARRED_BROKER }).expect(422);
          expect(refused.body).toMatchObject({ Message: `The broker ${BARRED_BROKER} is barred.` });
        })
        .andWaitForEventOfType(AGENTS_CHANGED);
      expect(await published.allWithin(500)).toEqual([]);
      const after = await app.http.get('/api/Transaction/GetTransaction/12').expect(200);
      expect(after.body).toEqual(before.body);
      expect(after.headers.etag).toBe(before.headers.etag);
      expect((await app.http.get('/api/Transaction/GetAgentHistory/12').expect(200)).body).toEqual(
        [],
      );
      expect(
        await count('SELECT COUNT(*) AS n FROM chain_guard_log WHERE transaction_id = ?', [12]),
      ).toBe(0);
      expect(callsOf('AuditTrail', '12')).toEqual([]);
    });

    it("has in-transaction handlers hear an import inside its transaction, reading its rows through a module's door", async () => {
      const app = await start();
      await app.seed({
        transactions: [transactionRecord(40, { brokerid: 77 }), transactionRecord(41)],
      });
      const [guard] = callsOf('ChainGuard').filter(
        (call) => call.event.type === 'property-sales.data.imported',
      );
      expect(guard.inTransaction).toBe(true);
      expect(guard.event.data).toMatchObject({ transaction_id_from: 40, first_broker: 77 });
    });

    it('shrinks the batches of a reaction too slow for one transaction until each commits in time', async () => {
      const app = await start({ DATABASE_TIMEOUT_MS: '400' });
      const ids = Array.from({ length: 500 }, (_, index) => 2001 + index);
      await app.seed({ transactions: ids.map((id) => transactionRecord(id)) });
      // A first batch of 500 keys takes 500 ms, past the time bound; one of 250 keys commits.
      slowRecount.msPerKey = 1;
      await app.app.get(BatchedReactions).start(SlowRecount, 'recount', 2000);
      const done = await eventually(
        () => count('SELECT COUNT(*) AS n FROM slow_recount_log WHERE last_id = ?', [2500]),
        (n) => n > 0,
        30_000,
      );
      expect(done).toBe(1);
      const batches = await app.app
        .get(DataSource)
        .query<{ first_id: number; last_id: number; keys_done: number; ms: number }[]>(
          'SELECT first_id, last_id, keys_done, ms FROM slow_recount_log ORDER BY first_id',
        );
      // Every key once, in order, and no committed batch near the time bound.
      expect(batches.reduce((keys, batch) => keys + Number(batch.keys_done), 0)).toBe(500);
      batches.forEach((batch, index) =>
        expect(Number(batch.first_id)).toBe(
          index === 0 ? 2001 : Number(batches[index - 1].last_id) + 1,
        ),
      );
      for (const batch of batches) expect(Number(batch.ms)).toBeLessThan(400);
      const metrics = (await app.http.get('/metrics').expect(200)).text;
      expect(metrics).toMatch(
        /event_reaction_failures_total\{reaction="SlowRecount.recount"\} [1-9]/,
      );
    });

    it('back-fills a reaction once a database: every transaction there at its first start, not again at the next', async () => {
      const app = await start();
      const ids = Array.from({ length: 600 }, (_, index) => 3001 + index);
      await app.seed({
        requirements: CATALOGUE,
        transactions: ids.map((id) => transactionRecord(id)),
      });
      const deploy = async () => {
        await running?.close();
        running = await RunningApp.start(database.url, HANDLERS, [TallyModule], {
          reactor: false,
        });
        await relayIdle(running, 30_000);
      };
      const tally = () =>
        running!.app
          .get(DataSource)
          .query<{ first_id: number; last_id: number; keys_done: number }[]>(
            'SELECT first_id, last_id, keys_done FROM tally_log ORDER BY first_id',
          );
      await deploy();
      const batches = await tally();
      const every = await running!.app.get(TransactionQueries).idsAfter(0, 1_000_000);
      expect(every).toEqual(expect.arrayContaining(ids));
      // Every transaction once, in order, in batches of at most 250.
      expect(batches.reduce((keys, batch) => keys + Number(batch.keys_done), 0)).toBe(every.length);
      expect(Number(batches[0].first_id)).toBe(every[0]);
      expect(Number(batches.at(-1)!.last_id)).toBe(every.at(-1));
      for (const batch of batches) expect(Number(batch.keys_done)).toBeLessThanOrEqual(250);
      // The next start finds it back-filled.
      await deploy();
      expect(await tally()).toEqual(batches);
    });

    it('purges events every consumer has, once their retention has passed', async () => {
      const app = await start({ EVENTS_RETENTION_MS: '0' });
      await app.seed({ transactions: [transactionRecord(9)] });
      await update({ transaction_id: 9, brokerid: 3 }).expect(204);
      expect(await eventually(outboxRows, (rows) => rows === 0, 5000)).toBe(0);
      expect(callsOf('AuditTrail', '9')).toHaveLength(1);
    });
  });
}
