import { CloudEvent } from 'cloudevents';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type AsyncMessage, Connection } from 'rabbitmq-client';
import { type Response } from 'supertest';
import { DataSource } from 'typeorm';
import { OutboxStore } from '../src/event-relay/outbox-store';
import { apiKeyEntry } from './support/auth-credentials';
import { TEST_BROKER_URL, uniqueExchange } from './support/event-collector';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { IMPORT_MAIN, runNode, startOnNewSqlite, TemporaryDirectories } from './support/processes';
import { fullScans } from './support/query-plans';
import { describeOnEachDatabase, describeOnSqlite, type SuiteContext } from './support/test-app';

/**
 * The HTTP feed of the committed events (GET /api/Events, EVENTS_FEED=true), read as its readers read
 * it: page by page from the last event id they hold, waiting with `timeout`, on each database; its
 * events the very bodies the broker gets; a consumer that lost its queue rebuilding its state from
 * it; its answers when it is off, misread or not granted.
 */

const FEED = '/api/Events';
const UPDATE = '/api/Transaction/UpdateAgents';
const AGENTS_CHANGED = 'property-sales.transaction.agents-changed';
const DATA_IMPORTED = 'property-sales.data.imported';
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
    const update = (body: object) =>
      context.http
        .post(UPDATE)
        .send({ financetype: 'Cash', ...body })
        .expect(204);

    beforeAll(async () => {
      await context.running.seed({
        requirements: CATALOGUE,
        transactions: [transactionRecord(1), transactionRecord(2), transactionRecord(3)],
      });
      // Its DataImported, once positioned, is the feed's first event for every test.
      await eventually(
        async () => eventsOf(await context.http.get(FEED)).length,
        (count) => count === 1,
      );
    });

    it('serves every committed event from the oldest, in commit order, page by page', async () => {
      await update({ transaction_id: 1, brokerid: 12 });
      await update({ transaction_id: 2, managerid: 33 });
      await update({ transaction_id: 1, brokerid: 13 });
      await update({ transaction_id: 1, managerid: 34 });
      await update({ transaction_id: 2, managerid: 35 });
      // Positions are given after the commit: within EVENTS_POLL_MS.
      const { events, pages } = await eventually(
        () => readToTheEnd(context),
        ({ events: read }) => read.length === 6,
      );

      expect(events.map((event) => event.type)).toEqual([
        DATA_IMPORTED,
        ...Array(5).fill(AGENTS_CHANGED),
      ]);
      expect(events[0].data).toMatchObject({ transactions_created: 3, transaction_id_from: 1 });
      expect(events.map((event) => [event.subject, event.data.row_version])).toEqual([
        [undefined, undefined],
        ['1', 2],
        ['2', 2],
        ['1', 3],
        ['1', 4],
        ['2', 3],
      ]);
      expect(new Set(events.map((event) => event.id)).size).toBe(6);
      for (const event of events) expect(() => new CloudEvent(event, true)).not.toThrow();
      // Pages of three: two full ones, which never change, and the empty one at the end.
      expect(pages.map((page) => [eventsOf(page).length, page.headers['cache-control']])).toEqual([
        [3, 'private, max-age=86400, immutable'],
        [3, 'private, max-age=86400, immutable'],
        [0, 'no-store'],
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
      expect(events[4].data).toMatchObject({
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
      expect(eventsOf(answer).map((event) => [event.subject, event.data.brokerid])).toEqual([
        ['3', 77],
      ]);
      expect(waited).toBeGreaterThanOrEqual(300);
      expect(waited).toBeLessThan(5000);
      expect(answer.headers['cache-control']).toBe('no-store');
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

        expect(eventsOf(answer).map((event) => [event.type, event.data.transaction_id_to])).toEqual(
          [[DATA_IMPORTED, 40]],
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
        await eventually(
          () => Promise.resolve(received.length),
          (count) => count === 3,
        );
        expect(received).toHaveLength(3);

        // Its queue is deleted (by an operator, or a policy): what follows reaches nobody.
        await consumer.close();
        await connection.queueDelete({ queue });
        await update({ transaction_id: 1, brokerid: 61 });
        await update({ transaction_id: 3, managerid: 62 });
        await update({ transaction_id: 2, brokerid: 63 });

        // It catches up from the last event it handled.
        const missed = await eventually(
          () => readToTheEnd(context, received.at(-1)!.id),
          ({ events }) => events.length === 3,
        );
        for (const event of missed.events) apply(held, event);
        expect(
          missed.events.map(({ subject, data }) => [subject, data.brokerid, data.managerid]),
        ).toEqual([
          ['1', 61, 53],
          ['3', 77, 62],
          ['2', 63, 35],
        ]);
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
        // The feed's events are the very bodies the broker delivered, byte for byte, in order.
        const page = await context.http.get(feedPath(before, 'limit=3')).expect(200);
        expect(page.text).toBe(`[${received.map(({ body }) => body).join(',')}]`);
      } finally {
        await connection.queueDelete({ queue }).catch(() => undefined);
        await connection.exchangeDelete({ exchange }).catch(() => undefined);
        await connection.close();
        await context.restart();
      }
    });

    it('keeps events EVENTS_RETENTION_MS, and a caught-up reader’s last one however long after', async () => {
      await context.restart({ EVENTS_RETENTION_MS: '1500' });
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
      // Nobody reads: the events still get their positions, and are purged once past retention
      // but the newest, which a reader holding its id needs.
      expect(await eventually(outboxRows, (rows) => rows === 1)).toBe(1);
      const [newest] = eventsOf(await context.http.get(FEED).expect(200));
      expect(newest.data).toMatchObject({ transaction_id: 3, brokerid: 82 });
      await context.http.get(feedPath(oldest[0].id)).expect(410);
      // Two purges later, long past its retention, the reader holding the newest id goes on.
      await sleep(3500);
      expect((await context.http.get(feedPath(newest.id)).expect(200)).text).toBe('[]');
      await update({ transaction_id: 3, brokerid: 83 });
      const next = eventsOf(
        await context.http.get(feedPath(newest.id, 'timeout=5000')).expect(200),
      );
      expect(next.map((event) => event.data.brokerid)).toEqual([83]);
      // Once the event after it is past retention, its id is gone, and the newest stays.
      await eventually(
        async () => (await context.http.get(feedPath(newest.id))).status,
        (status) => status === 410,
      );
      await context.http.get(feedPath(next[0].id)).expect(200);
      expect(await outboxRows()).toBe(1);
    });
  },
  FEED_ON,
);

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
    const reads = [
      ...store.feedStatements('00012345-0000-4000-8000-000000012345', 100),
      ...store.feedStatements(undefined, 1000),
    ];
    for (const statement of reads)
      expect({
        sql: statement.sql,
        scans: await fullScans(dataSource, statement, { sorts: true }),
      }).toEqual({ sql: statement.sql, scans: [] });
    // The page after that event is there: the plans are those of a real read.
    expect(await dataSource.query<unknown[]>(reads[1].sql, [...reads[1].parameters])).toHaveLength(
      100,
    );
  });
});

describeOnSqlite('The event feed, off', (context) => {
  it('answers 404 saying how to turn it on, and the outbox stays off', async () => {
    await context.running.seed({ requirements: CATALOGUE, transactions: [transactionRecord(1)] });
    const off = await context.http.get(FEED).expect(404);
    expect(off.body).toMatchObject({
      type: 'urn:property-sales:problem:event_feed_off',
      Message: expect.stringContaining('EVENTS_FEED=true') as unknown,
    });
    await context.http
      .post(UPDATE)
      .send({ transaction_id: 1, financetype: 'Cash', brokerid: 5 })
      .expect(204);
    const [{ n }] = await context.running.app
      .get(DataSource)
      .query<[{ n: number }]>('SELECT COUNT(*) AS n FROM event_outbox');
    expect(n).toBe(0);
  });
});

describeOnSqlite(
  'The event feed: its query, media types and scope',
  (context) => {
    it('reads its query as every query string is read, and refuses what is out of bounds', async () => {
      await context.running.seed({ requirements: CATALOGUE, transactions: [transactionRecord(1)] });
      await context.http
        .post(UPDATE)
        .send({ transaction_id: 1, financetype: 'Cash', brokerid: 5 })
        .expect(204);
      await eventually(
        async () => eventsOf(await context.http.get(FEED)).length,
        (count) => count === 2,
      );
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
        expect(JSON.parse(answer.text)).toHaveLength(2);
      }
    });
  },
  FEED_ON,
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
      // The demo data's DataImported, once it has its position.
      const [oldest] = await eventually(
        async () => (await (await fetch(`${service.baseUrl}${FEED}`)).json()) as FeedEvent[],
        (events) => events.length > 0,
      );
      const started = Date.now();
      const waiting = fetch(`${service.baseUrl}${feedPath(oldest.id, 'timeout=30000')}`);
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
