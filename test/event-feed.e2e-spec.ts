import { CloudEvent } from 'cloudevents';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type AsyncMessage, Connection } from 'rabbitmq-client';
import { type Response } from 'supertest';
import { DataSource } from 'typeorm';
import { DataImportModule } from '../src/data-import';
import { OutboxStore } from '../src/event-relay/outbox-store';
import { EventFeedModule } from '../src/event-feed';
import { TransactionModule } from '../src/transaction';
import { apiKeyEntry } from './support/auth-credentials';
import {
  TEST_LEDGER_SPLITS_CHANGED,
  TEST_LEDGER_RECOMPUTED,
} from './support/test-ledger/test-ledger.events';
import { TEST_BROKER_URL, uniqueExchange } from './support/event-collector';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { IMPORT_MAIN, runNode, startOnNewSqlite, TemporaryDirectories } from './support/processes';
import { fullScans } from './support/query-plans';
import {
  describeOnEachDatabase,
  describeOnSqlite,
  relayIdle,
  SuiteContext,
} from './support/test-app';
import { createTestDatabase, onEachDatabaseAtOnce } from './support/test-database';

/**
 * The HTTP feed of the committed events (GET /api/Events, EVENTS_FEED=true), read as its readers read
 * it: page by page from the last event id they hold, waiting with `timeout`, on each database; its
 * events the very bodies the broker gets; a consumer that lost its queue rebuilding its state from
 * it; its answers when it is off, misread or not granted. The feed serves every committed event, the
 * reacting test module's among them: each test tells the service's own events apart from the
 * module's, and checks the module's as the consequences of the service's.
 */

const FEED = '/api/Events';
const UPDATE = '/api/Transaction/UpdateAgents';
const AGENTS_CHANGED = 'property-sales.transaction.agents-changed';
const DATA_IMPORTED = 'property-sales.data.imported';
const SPLITS_CHANGED = TEST_LEDGER_SPLITS_CHANGED.type;
const RECOMPUTED = TEST_LEDGER_RECOMPUTED.type;
/**
 * The feature modules of the suites that count the feed's events: what publishes them (the import
 * and the transaction module) and the feed, beside the reacting test module; a module added to the
 * service, which may publish events of its own, leaves them true.
 */
const FEED_FEATURES = [DataImportModule, TransactionModule, EventFeedModule];
/** The feed on, and other instances' commits looked for often, so the suite waits little. */
const FEED_ON = { EVENTS_FEED: 'true', EVENTS_POLL_MS: '50' };

interface FeedEvent {
  readonly [attribute: string]: unknown;
  readonly id: string;
  readonly type: string;
  readonly subject?: string;
  readonly data: Record<string, unknown>;
}

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 10_000) {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > until) return value;
    await sleep(25);
  }
}

const eventsOf = (answer: Response) => answer.body as FeedEvent[];

/** A change of agents through the service, acknowledged. */
const updateAgents = (context: SuiteContext, body: object) =>
  context.http
    .post(UPDATE)
    .send({ financetype: 'Cash', ...body })
    .expect(204);

/** The service's own events: the reacting module's set aside. */
const serviceEvents = (events: readonly FeedEvent[]) =>
  events.filter((event) => event.type !== SPLITS_CHANGED && event.type !== RECOMPUTED);

/**
 * Waits until the reacting module has handled every committed change (its recomputations done) and
 * every event has its position: the feed then holds all there will be, and nothing more commits.
 */
async function settle(context: SuiteContext): Promise<void> {
  await relayIdle(context.running);
  const dataSource = context.running.app.get(DataSource);
  const unpositioned = async () =>
    Number(
      (
        await dataSource.query<[{ n: number | string }]>(
          'SELECT COUNT(*) AS n FROM event_outbox WHERE position IS NULL',
        )
      )[0].n,
    );
  expect(await eventually(unpositioned, (count) => count === 0)).toBe(0);
}

/**
 * The reacting module's TestLedgerSplitsChanged among `events`, as consequences of the AgentsChanged
 * among them: each after the change it names (its transaction and row version), and one for every
 * transaction's last change (a step handling several changes of a transaction publishes its splits
 * after the last of them only).
 */
function expectSplitsAfterChanges(events: readonly FeedEvent[]): void {
  const changedAt = new Map<string, number>();
  const lastChange = new Map<string | undefined, string>();
  const splits: { change: string; index: number }[] = [];
  events.forEach((event, index) => {
    const change = `${event.subject}:${event.data.row_version as number}`;
    if (event.type === AGENTS_CHANGED) {
      changedAt.set(change, index);
      lastChange.set(event.subject, change);
    } else if (event.type === SPLITS_CHANGED) splits.push({ change, index });
  });
  expect(
    splits.filter(({ change, index }) => !((changedAt.get(change) ?? Infinity) < index)),
  ).toEqual([]);
  expect(
    [...lastChange.values()].filter((change) => !splits.some((split) => split.change === change)),
  ).toEqual([]);
}

/** The feed's query string: lastEventId when there is one, and the rest. */
const feedPath = (lastEventId: string | undefined, query = '') =>
  `${FEED}?${[lastEventId && `lastEventId=${lastEventId}`, query].filter(Boolean).join('&')}`;

/** Every event after `lastEventId` (from the oldest without it), read page by page. */
async function readToTheEnd(
  context: SuiteContext,
  lastEventId?: string,
  limit = 3,
): Promise<{ events: FeedEvent[]; pages: Response[] }> {
  const events: FeedEvent[] = [];
  const pages: Response[] = [];
  let after = lastEventId;
  for (;;) {
    const page = await context.http.get(feedPath(after, `limit=${limit}`)).expect(200);
    pages.push(page);
    events.push(...eventsOf(page));
    if (eventsOf(page).length < limit) return { events, pages };
    after = eventsOf(page).at(-1)!.id;
  }
}

/** The id of the newest event the feed holds now (undefined when it holds none). */
async function newestId(context: SuiteContext): Promise<string | undefined> {
  return (await readToTheEnd(context, undefined, 1000)).events.at(-1)?.id;
}

/** What a consumer keeps of each transaction: its agent chain and the version it is at. */
type Holdings = Map<number, { rowVersion: number; brokerid: unknown; managerid: unknown }>;

/**
 * Applies an event as the consumer guide says: an AgentsChanged carries the whole chain after its
 * change, and one whose row_version is not above what is held is old news (a redelivery).
 */
function apply(held: Holdings, event: FeedEvent): void {
  if (event.type !== AGENTS_CHANGED) return;
  const data = event.data as { transaction_id: number; row_version: number } & Record<
    string,
    unknown
  >;
  const current = held.get(data.transaction_id);
  if (current && current.rowVersion >= data.row_version) return;
  held.set(data.transaction_id, {
    rowVersion: data.row_version,
    brokerid: data.brokerid,
    managerid: data.managerid,
  });
}

describeOnEachDatabase(
  'The event feed',
  (context) => {
    const update = (body: object) => updateAgents(context, body);

    beforeAll(async () => {
      await context.running.seed({
        requirements: CATALOGUE,
        transactions: [transactionRecord(1), transactionRecord(2), transactionRecord(3)],
      });
    });

    // Each test starts once what came before it is all in the feed: the seed's DataImported, the
    // recomputation it set off, a test's changes and the splits they changed.
    beforeEach(() => settle(context));

    it('serves every committed event from the oldest, in commit order, page by page', async () => {
      await update({ transaction_id: 1, brokerid: 12 });
      await update({ transaction_id: 2, managerid: 33 });
      await update({ transaction_id: 1, brokerid: 13 });
      await update({ transaction_id: 1, managerid: 34 });
      await update({ transaction_id: 2, managerid: 35 });
      // Positions are given after the commit: within EVENTS_POLL_MS.
      await settle(context);
      const { events, pages } = await readToTheEnd(context);
      const own = serviceEvents(events);

      expect(own.map((event) => event.type)).toEqual([
        DATA_IMPORTED,
        ...Array(5).fill(AGENTS_CHANGED),
      ]);
      expect(own[0].data).toMatchObject({ transactions_created: 3, transaction_id_from: 1 });
      expect(own.map((event) => [event.subject, event.data.row_version])).toEqual([
        [undefined, undefined],
        ['1', 2],
        ['2', 2],
        ['1', 3],
        ['1', 4],
        ['2', 3],
      ]);
      // The reacting module's: the recomputation the import set off, done before these changes,
      // and the splits they changed, each after its change.
      expect(events[1]).toMatchObject({
        type: RECOMPUTED,
        data: { transaction_id_from: 1, transaction_id_to: 3, transactions: 3 },
      });
      expectSplitsAfterChanges(events);
      expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
      for (const event of events) expect(() => new CloudEvent(event, true)).not.toThrow();
      // Pages of three: full ones, which never change, and a shorter one (perhaps empty) at the end.
      const full = Math.floor(events.length / 3);
      expect(pages.map((page) => [eventsOf(page).length, page.headers['cache-control']])).toEqual([
        ...Array<unknown>(full).fill([3, 'private, max-age=86400, immutable']),
        [events.length % 3, 'no-store'],
      ]);
      for (const page of pages) {
        expect(page.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(page.headers.vary).toBe('Accept, Content-Type');
      }
      // A page starts right after the event it names.
      const after = await context.http.get(feedPath(events[2].id, 'limit=2')).expect(200);
      expect(eventsOf(after).map((event) => event.id)).toEqual([events[3].id, events[4].id]);
      // Each AgentsChanged tells the chain as GetTransaction answers it after the change.
      const read = await context.http.get('/api/Transaction/GetTransaction/1').expect(200);
      expect(own[4].data).toMatchObject({
        etag: read.headers.etag,
        brokerid: 13,
        managerid: 34,
        changes: [{ field: 'managerid', before: 31, after: 34 }],
      });
    });

    it('answers 410 Gone, saying how to rebuild, for an id it does not hold', async () => {
      const gone = await context.http
        .get(feedPath('0f885bb6-753a-41fd-8260-12984b535119'))
        .expect(410);
      expect(gone.body).toMatchObject({
        status: 410,
        type: 'urn:property-sales:problem:event_gone',
        Message: expect.stringContaining('ListTransactions?changed_since=') as unknown,
      });
      expect(gone.body.Message).toContain("'0f885bb6-753a-41fd-8260-12984b535119'");
    });

    it('keeps a waiting reader until an event commits, then answers at once', async () => {
      const last = await newestId(context);
      const started = Date.now();
      const waiting = context.http.get(feedPath(last, 'timeout=20000')).then((answer) => answer);
      await sleep(300);
      await update({ transaction_id: 3, brokerid: 77 });
      const answer = await waiting;
      const waited = Date.now() - started;

      expect(answer.status).toBe(200);
      // The change first; the reacting module's splits of it may have committed in time to follow.
      const [change, ...after] = eventsOf(answer);
      expect([change.type, change.subject, change.data.brokerid]).toEqual([
        AGENTS_CHANGED,
        '3',
        77,
      ]);
      expect(after.map((event) => [event.type, event.subject])).toEqual(
        after.map(() => [SPLITS_CHANGED, '3']),
      );
      expect(waited).toBeGreaterThanOrEqual(300);
      expect(waited).toBeLessThan(5000);
      expect(answer.headers['cache-control']).toBe('no-store');
    });

    it('answers every reader waiting, at one position or another, once an event commits', async () => {
      const last = await newestId(context);
      // Readers at the same position and limit share one read and its body; another limit is
      // another answer.
      const waiting = [
        ...Array.from({ length: 100 }, () => feedPath(last, 'timeout=20000')),
        ...Array.from({ length: 10 }, () => feedPath(last, 'timeout=20000&limit=1')),
      ].map((path) => context.http.get(path).then((answer) => answer));
      await sleep(300);
      await update({ transaction_id: 2, brokerid: 78 });
      const answers = await Promise.all(waiting);

      for (const answer of answers) {
        expect(answer.status).toBe(200);
        const [change] = eventsOf(answer);
        expect([change.type, change.subject, change.data.brokerid]).toEqual([
          AGENTS_CHANGED,
          '2',
          78,
        ]);
      }
      expect(answers.slice(100).map((answer) => eventsOf(answer).length)).toEqual(
        answers.slice(100).map(() => 1),
      );
    });

    it('wakes its waiting readers once per interval through a burst of commits: every event once, in order, on pages they share', async () => {
      // Twenty readers waiting: the interval between wake-ups is 20 × 100 ms, above its least.
      await context.restart({ EVENTS_FEED_WAKE_MS: '1000', EVENTS_FEED_WAKE_MS_PER_READER: '100' });
      try {
        const INTERVAL = 2000;
        const last = await newestId(context);
        // Sales agents the other tests leave alone.
        const CHANGES = 10;
        const lastChange = 90 + CHANGES - 1;
        /** A reader that reads on from its answers, waiting, until it holds the burst's last change. */
        const reader = async () => {
          const answers: { at: number; text: string }[] = [];
          const events: FeedEvent[] = [];
          let after = last;
          while (!events.some((event) => event.data.salesagentid === lastChange)) {
            const answer = await context.http
              .get(feedPath(after, 'timeout=20000&limit=1000'))
              .expect(200);
            answers.push({ at: Date.now(), text: answer.text });
            events.push(...eventsOf(answer));
            after = events.at(-1)?.id ?? after;
          }
          return { answers, events };
        };
        const readers = Array.from({ length: 20 }, reader);
        // Every reader waiting, and the interval over that the first look at where they wait may
        // start (when it finds positions the relay gave since the instance last looked).
        await sleep(INTERVAL + 300);
        const started = Date.now();
        for (let change = 0; change < CHANGES; change++)
          await update({ transaction_id: 1 + (change % 3), salesagentid: 90 + change });
        const burst = Date.now() - started;
        const read = await Promise.all(readers);
        await settle(context);
        const { events } = await readToTheEnd(context, last, 1000);

        for (const { events: held } of read) {
          // Each event once, in the feed's order, the burst's changes all among them.
          expect(held.map((event) => event.id)).toEqual(
            events.slice(0, held.length).map((event) => event.id),
          );
          expect(serviceEvents(held).map((event) => [event.type, event.data.salesagentid])).toEqual(
            Array.from({ length: CHANGES }, (_, change) => [AGENTS_CHANGED, 90 + change]),
          );
        }
        // Woken together, at one position: one page for all, byte for byte.
        expect(new Set(read.map(({ answers }) => answers[0].text)).size).toBe(1);
        for (const { answers } of read) {
          // The first commit woke them at once; the commits after it, within the interval, were
          // gathered into one wake-up at its end, and so on: no more answers than intervals.
          expect(answers[0].at - started).toBeLessThan(INTERVAL * 0.75);
          expect(answers[1].at - answers[0].at).toBeGreaterThan(INTERVAL * 0.75);
          expect(answers.length).toBeLessThanOrEqual(1 + Math.ceil(burst / INTERVAL));
        }
      } finally {
        await context.restart();
      }
    });

    it('answers an empty page when nothing commits within the timeout', async () => {
      const last = await newestId(context);
      const started = Date.now();
      const answer = await context.http.get(feedPath(last, 'timeout=400')).expect(200);
      const waited = Date.now() - started;

      expect(answer.text).toBe('[]');
      expect(waited).toBeGreaterThanOrEqual(400);
      expect(waited).toBeLessThan(3000);
    });

    it("wakes a waiting reader with another process's commit (the import command)", async () => {
      const last = await newestId(context);
      const directory = await mkdtemp(join(tmpdir(), 'event-feed-import-'));
      try {
        const waiting = context.http
          .get(feedPath(last, 'timeout=25000'))
          .then((answer) => ({ answer, at: Date.now() }));
        const file = join(directory, 'transactions.json');
        await writeFile(file, JSON.stringify([transactionRecord(40)]));
        const result = await runNode(IMPORT_MAIN, ['--transactions', file, '--quiet'], {
          env: { DATABASE_URL: context.database.url, EVENTS_FEED: 'true' },
        });
        const committed = Date.now();
        expect(result.stderr).toBe('');
        expect(result.code).toBe(0);
        const { answer, at } = await waiting;

        // The import's event first; the recomputation it set off here may have committed in time
        // to follow.
        const [imported, ...after] = eventsOf(answer);
        expect([imported.type, imported.data.transaction_id_to]).toEqual([DATA_IMPORTED, 40]);
        expect(after.map((event) => [event.type, event.data])).toEqual(
          after.map(() => [
            RECOMPUTED,
            { transaction_id_from: 40, transaction_id_to: 40, transactions: 1 },
          ]),
        );
        // Within a few of the service's looks at the outbox (EVENTS_POLL_MS) after the command
        // committed and exited, not at the timeout.
        expect(at - committed).toBeLessThan(3000);
      } finally {
        await rm(directory, { recursive: true, force: true });
      }
    });

    it('gives a consumer that lost its queue every event it missed, each the body the broker sent', async () => {
      const exchange = uniqueExchange(`event-feed.${context.kind}`);
      const queue = `${exchange}.crm`;
      await context.restart({ EVENTS_URL: TEST_BROKER_URL, EVENTS_EXCHANGE: exchange });
      const connection = new Connection({ url: TEST_BROKER_URL, connectionTimeout: 5000 });
      connection.on('error', () => undefined);
      try {
        await connection.onConnect(10_000, true);
        const before = await newestId(context);
        // The consumer: a durable queue of its own, what it holds, and the last event it handled.
        const held: Holdings = new Map();
        const received: { id: string; body: string }[] = [];
        const consumer = connection.createConsumer(
          {
            queue,
            queueOptions: { durable: true },
            exchanges: [{ exchange, type: 'topic', durable: true }],
            queueBindings: [{ queue, exchange, routingKey: '#' }],
          },
          (message: AsyncMessage) => {
            const body = (message.body as Buffer).toString('utf8');
            const event = JSON.parse(body) as FeedEvent;
            apply(held, event);
            received.push({ id: event.id, body });
          },
        );
        consumer.on('error', () => undefined);
        await new Promise<void>((resolve) => consumer.once('ready', resolve));
        await update({ transaction_id: 1, brokerid: 51 });
        await update({ transaction_id: 2, brokerid: 52 });
        await update({ transaction_id: 1, managerid: 53 });
        // Every event published (the broker's checkpoint past them all) and received: the changes
        // and the reacting module's splits of them.
        await settle(context);
        const sent = await context.http.get(feedPath(before, 'limit=1000')).expect(200);
        await eventually(
          () => Promise.resolve(received.length),
          (count) => count === eventsOf(sent).length,
        );
        expect(
          received.filter(({ body }) => body.includes(`"type":"${AGENTS_CHANGED}"`)),
        ).toHaveLength(3);
        // The feed's events are the very bodies the broker delivered, byte for byte, in order.
        expect(sent.text).toBe(`[${received.map(({ body }) => body).join(',')}]`);

        // Its queue is deleted (by an operator, or a policy): what follows reaches nobody.
        await consumer.close();
        await connection.queueDelete({ queue });
        await update({ transaction_id: 1, brokerid: 61 });
        await update({ transaction_id: 3, managerid: 62 });
        await update({ transaction_id: 2, brokerid: 63 });

        // It catches up from the last event it handled.
        await settle(context);
        const missed = await readToTheEnd(context, received.at(-1)!.id);
        for (const event of missed.events) apply(held, event);
        expect(
          serviceEvents(missed.events).map(({ subject, data }) => [
            subject,
            data.brokerid,
            data.managerid,
          ]),
        ).toEqual([
          ['1', 61, 53],
          ['3', 77, 62],
          ['2', 63, 35],
        ]);
        expectSplitsAfterChanges(missed.events);
        // What it holds is what the service holds.
        for (const id of [1, 2, 3]) {
          const read = await context.http.get(`/api/Transaction/GetTransaction/${id}`).expect(200);
          const { brokerid, managerid } = read.body as Record<string, unknown>;
          expect({ id, ...held.get(id) }).toEqual({
            id,
            rowVersion: Number(/\.(\d+)"$/.exec(read.headers.etag)![1]),
            brokerid,
            managerid,
          });
        }
      } finally {
        await connection.queueDelete({ queue }).catch(() => undefined);
        await connection.exchangeDelete({ exchange }).catch(() => undefined);
        await connection.close();
        await context.restart();
      }
    });
  },
  // Many readers wait from the one address here.
  { ...FEED_ON, EVENTS_FEED_MAX_WAITING_PER_CALLER: '1000' },
  [],
  FEED_FEATURES,
);

describe('The event feed’s retention, on each database at once', () => {
  it('keeps events EVENTS_RETENTION_MS, and a caught-up reader’s last one however long after', () =>
    onEachDatabaseAtOnce(async (kind) => {
      // Purged each second: an event is kept a second after the one after it.
      const context = new SuiteContext(kind, { ...FEED_ON, EVENTS_RETENTION_MS: '1000' });
      context.database = await createTestDatabase(kind);
      try {
        await context.start();
        await context.running.seed({
          requirements: CATALOGUE,
          transactions: [transactionRecord(3)],
        });
        await settle(context);
        const update = (body: object) => updateAgents(context, body);
        const dataSource = context.running.app.get(DataSource);
        const outboxRows = async () =>
          Number(
            (
              await dataSource.query<[{ n: number | string }]>(
                'SELECT COUNT(*) AS n FROM event_outbox',
              )
            )[0].n,
          );
        const oldest = eventsOf(await context.http.get(feedPath(undefined, 'limit=1')).expect(200));
        await update({ transaction_id: 3, brokerid: 81 });
        await update({ transaction_id: 3, brokerid: 82 });
        await settle(context);
        // Nobody reads: the events still get their positions, and are purged once past retention
        // but the newest, which a reader holding its id needs: the reacting module's splits after
        // the last change.
        expect(await eventually(outboxRows, (rows) => rows === 1)).toBe(1);
        const [newest] = eventsOf(await context.http.get(FEED).expect(200));
        expect(newest).toMatchObject({ type: SPLITS_CHANGED, subject: '3' });
        expect(newest.data.splits).toContainEqual(
          expect.objectContaining({ role: 'brokerid', agent_id: 82 }),
        );
        await context.http.get(feedPath(oldest[0].id)).expect(410);
        // Two purges later, past twice its retention, the reader holding the newest id goes on.
        await sleep(2200);
        expect((await context.http.get(feedPath(newest.id)).expect(200)).text).toBe('[]');
        await update({ transaction_id: 3, brokerid: 83 });
        const next = eventsOf(
          await context.http.get(feedPath(newest.id, 'timeout=5000')).expect(200),
        );
        expect([next[0].type, next[0].data.brokerid]).toEqual([AGENTS_CHANGED, 83]);
        await settle(context);
        // Once the event after it is past retention, its id is gone, and the newest stays: the
        // splits of that change.
        expect(
          await eventually(
            async () => (await context.http.get(feedPath(newest.id))).status,
            (status) => status === 410,
          ),
        ).toBe(410);
        expect(await eventually(outboxRows, (rows) => rows === 1)).toBe(1);
        const [last] = eventsOf(await context.http.get(FEED).expect(200));
        expect(last).toMatchObject({ type: SPLITS_CHANGED, subject: '3' });
        expect(last.data.splits).toContainEqual(
          expect.objectContaining({ role: 'brokerid', agent_id: 83 }),
        );
        expect((await context.http.get(feedPath(last.id)).expect(200)).text).toBe('[]');
      } finally {
        await context.running?.close();
        await context.database.drop();
      }
    }));
});

describeOnEachDatabase("The event feed's reads", (context) => {
  /** Enough events that a scan and an index lookup differ, for the planner as for the tests. */
  const EVENTS = 20_000;

  it('look the reader’s last event up by its id and read the page after it by position: no scan', async () => {
    const dataSource = context.running.app.get(DataSource);
    const sqlite = dataSource.options.type === 'better-sqlite3';
    const numbers = sqlite
      ? `WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ${EVENTS}) SELECT n FROM s`
      : `SELECT seq AS n FROM seq_1_to_${EVENTS}`;
    const id = sqlite
      ? `printf('%08d-0000-4000-8000-%012d', n, n)`
      : `CONCAT(LPAD(n, 8, '0'), '-0000-4000-8000-', LPAD(n, 12, '0'))`;
    await dataSource.query(
      `INSERT INTO event_outbox (position, event_id, routing_key, time, body) SELECT n, ${id}, 'transaction.agents-changed', '2026-01-01 00:00:00.000', '{}' FROM (${numbers}) numbers`,
    );
    await dataSource.query(sqlite ? 'ANALYZE' : 'ANALYZE TABLE event_outbox');
    const store = new OutboxStore(dataSource);
    // As a reader that does not wait reads, and up to the latest position given as one that waits.
    const reads = [
      ...store.feedStatements('00012345-0000-4000-8000-000000012345', 100),
      ...store.feedStatements(undefined, 1000),
      ...store.feedStatements('00012345-0000-4000-8000-000000012345', 100, 12_400),
      ...store.feedStatements(undefined, 1000, 12_400),
    ];
    for (const statement of reads)
      expect({
        sql: statement.sql,
        scans: await fullScans(dataSource, statement, { sorts: true }),
      }).toEqual({ sql: statement.sql, scans: [] });
    // The page after that event is there, and up to a position the part of it up to there: the
    // plans are those of real reads.
    const rows = ({ sql, parameters }: (typeof reads)[number]) =>
      dataSource.query<unknown[]>(sql, [...parameters]);
    expect(await rows(reads[0])).toHaveLength(100);
    expect(await rows(reads[3])).toHaveLength(55);
  });
});

describeOnSqlite('The event feed, off', (context) => {
  // That the feed off leaves the outbox off when nothing else needs it (no broker, no handler) is the
  // events suite's "writes no outbox row while no broker is set and no module handles events".
  it('answers 404 saying how to turn it on, though the outbox holds events for the reacting module', async () => {
    await context.running.seed({ requirements: CATALOGUE, transactions: [transactionRecord(1)] });
    await context.http
      .post(UPDATE)
      .send({ transaction_id: 1, financetype: 'Cash', brokerid: 5 })
      .expect(204);
    await relayIdle(context.running);
    const [{ n }] = await context.running.app
      .get(DataSource)
      .query<[{ n: number }]>('SELECT COUNT(*) AS n FROM event_outbox');
    expect(n).toBeGreaterThan(0);
    const off = await context.http.get(FEED).expect(404);
    expect(off.body).toMatchObject({
      type: 'urn:property-sales:problem:event_feed_off',
      Message: expect.stringContaining('EVENTS_FEED=true') as unknown,
    });
  });
});

describeOnSqlite(
  'The event feed: its query, media types and scope',
  (context) => {
    /** The seed's DataImported and its recomputation, the change and its splits. */
    const HELD = 4;

    it('reads its query as every query string is read, and refuses what is out of bounds', async () => {
      await context.running.seed({ requirements: CATALOGUE, transactions: [transactionRecord(1)] });
      await context.http
        .post(UPDATE)
        .send({ transaction_id: 1, financetype: 'Cash', brokerid: 5 })
        .expect(204);
      await settle(context);
      expect(eventsOf(await context.http.get(FEED))).toHaveLength(HELD);
      // Names in any case, the first of repeated names, an empty value as absent.
      expect(eventsOf(await context.http.get(`${FEED}?LIMIT=1&limit=5&lastEventId=`))).toHaveLength(
        1,
      );
      for (const [query, key, message] of [
        ['limit=0', 'query.limit', 'The field limit must be between 1 and 1000.'],
        ['limit=1001', 'query.limit', 'The field limit must be between 1 and 1000.'],
        ['limit=many', 'query.limit', "The value 'many' is not valid for limit."],
        ['timeout=30001', 'query.timeout', 'The field timeout must be between 0 and 30000.'],
        ['timeout=-1', 'query.timeout', 'The field timeout must be between 0 and 30000.'],
      ]) {
        const refused = await context.http.get(`${FEED}?${query}`).expect(400);
        expect({ query, modelState: refused.body.ModelState as unknown }).toEqual({
          query,
          modelState: { [key]: [message] },
        });
      }
    });

    it('writes JSON unless Accept asks for the CloudEvents batch type (or text/json)', async () => {
      for (const [accept, written] of [
        [undefined, 'application/json'],
        ['*/*', 'application/json'],
        ['application/xml', 'application/json'],
        ['application/cloudevents-batch+json', 'application/cloudevents-batch+json'],
        [
          'application/json;q=0.5, application/cloudevents-batch+json',
          'application/cloudevents-batch+json',
        ],
        ['text/json', 'text/json'],
      ] as const) {
        const call = context.http.get(FEED);
        const answer = await (accept ? call.set('Accept', accept) : call).expect(200);
        expect({ accept, type: answer.headers['content-type'] }).toEqual({
          accept,
          type: `${written}; charset=utf-8`,
        });
        expect(JSON.parse(answer.text)).toHaveLength(HELD);
      }
    });
  },
  FEED_ON,
  [],
  FEED_FEATURES,
);

describeOnSqlite(
  'The event feed under authorization',
  (context) => {
    it('serves a caller granted events:read, and no other', async () => {
      await context.http.get(FEED).expect(401);
      await context.http.get(FEED).set('X-Api-Key', 'feed-other-5c1e0b9d27a4f386').expect(403);
      const granted = await context.http
        .get(FEED)
        .set('X-Api-Key', 'feed-reader-9a7d3c51e8f20b64')
        .expect(200);
      expect(granted.text).toBe('[]');
    });
  },
  {
    ...FEED_ON,
    AUTH_MODE: 'apikey',
    AUTH_API_KEYS: [
      apiKeyEntry('reader', 'feed-reader-9a7d3c51e8f20b64', ['events:read']),
      apiKeyEntry('other', 'feed-other-5c1e0b9d27a4f386', ['transactions:read']),
    ].join(','),
  },
);

describeOnEachDatabase(
  'The event feed’s places for waiting readers',
  (context) => {
    const KEYS = {
      first: 'feed-first-3b8e1d0c6a2f5947',
      second: 'feed-second-7d4a9c2e1b0f8356',
    };
    // Nothing commits here: the feed stays empty, and every wait lasts its time.
    const wait = (key: string, ms: number) =>
      context.http
        .get(`${FEED}?timeout=${ms}`)
        .set('X-Api-Key', key)
        .then((answer) => answer);

    it('refuses a caller past its own with 429, and past the instance’s with 503, until a wait ends', async () => {
      const held = [wait(KEYS.first, 1500), wait(KEYS.first, 1500), wait(KEYS.second, 1500)];
      await sleep(300);
      const overCaller = await wait(KEYS.first, 1000);
      const overAll = await wait(KEYS.second, 1000);
      // A read that does not wait takes no place.
      await context.http.get(FEED).set('X-Api-Key', KEYS.second).expect(200);

      expect([overCaller.status, overCaller.headers['retry-after']]).toEqual([429, '2']);
      expect(overCaller.body).toMatchObject({
        type: 'urn:property-sales:problem:event_feed_waits_exceeded',
        status: 429,
      });
      expect([overAll.status, overAll.headers['retry-after']]).toEqual([503, '2']);
      expect(overAll.body).toMatchObject({
        type: 'urn:property-sales:problem:event_feed_full',
        status: 503,
      });
      for (const answer of await Promise.all(held)) expect(answer.status).toBe(200);
      expect((await wait(KEYS.first, 100)).status).toBe(200);
      expect((await wait(KEYS.second, 100)).status).toBe(200);
    });
  },
  {
    ...FEED_ON,
    EVENTS_FEED_MAX_WAITING: '3',
    EVENTS_FEED_MAX_WAITING_PER_CALLER: '2',
    AUTH_MODE: 'apikey',
    AUTH_API_KEYS: [
      apiKeyEntry('first', 'feed-first-3b8e1d0c6a2f5947', ['events:read']),
      apiKeyEntry('second', 'feed-second-7d4a9c2e1b0f8356', ['events:read']),
    ].join(','),
  },
);

describe('The event feed at shutdown', () => {
  const directories = new TemporaryDirectories('event-feed');
  afterAll(() => directories.removeAll());

  it('answers a waiting reader by the end of the drain, so the service stops in time', async () => {
    const service = await startOnNewSqlite(await directories.make(), {
      ...FEED_ON,
      SHUTDOWN_DRAIN_MS: '1000',
      LOG_LEVEL: 'warn',
    });
    try {
      // The demo data's DataImported and the reacting module's recomputation after it (one batch),
      // once they have their positions: nothing commits after them (the service's other modules
      // may publish theirs meanwhile).
      const events = await eventually(
        async () => (await (await fetch(`${service.baseUrl}${FEED}`)).json()) as FeedEvent[],
        (held) => held.some((event) => event.type === RECOMPUTED),
      );
      expect(
        events
          .map((event) => event.type)
          .filter((type) => type === DATA_IMPORTED || type === RECOMPUTED),
      ).toEqual([DATA_IMPORTED, RECOMPUTED]);
      const started = Date.now();
      const waiting = fetch(`${service.baseUrl}${feedPath(events.at(-1)!.id, 'timeout=30000')}`);
      await sleep(300);
      service.child.kill('SIGTERM');
      const answer = await waiting;

      expect(answer.status).toBe(200);
      expect(await answer.text()).toBe('[]');
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
      expect(Date.now() - started).toBeLessThan(5000);
      expect((await service.exit()).code).toBe(0);
    } finally {
      await service.stop();
    }
  });
});
