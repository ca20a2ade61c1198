import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { APP_ENTITIES } from '../src/app.entities';
import { DEFAULT_EVENTS_SOURCE, loadAppConfig } from '../src/config/app-config';
import { dataSourceOptions } from '../src/database/data-source-options';
import { withServerDialect } from '../src/database/server-dialect';
import { cloudEventJson } from '../src/events/cloud-event';
import { AGENTS_CHANGED } from '../src/transaction';
import { createScratchDatabase } from '../scripts/scratch-database';
import { children, startService, stopService } from './service';

/**
 * The event feed's throughput for a consumer catching up: `BENCH_FEED_EVENTS` (100,000) AgentsChanged
 * events in the outbox, read from the oldest to the end one request at a time, as a consumer reads
 * (each page parsed for the id of its last event), with the default page and the largest; on SQLite
 * and, when BENCH_DATABASE_URL names a server, on MariaDB. `node dist/bench/event-feed.js` runs this
 * part alone; `npm run bench` runs it after the HTTP scenarios.
 */

const EVENTS = process.env.BENCH_FEED_EVENTS ? Number(process.env.BENCH_FEED_EVENTS) : 100_000;
/** The feed's default page and its largest (src/event-feed/dto/event-feed-query.dto.ts). */
const LIMITS = [100, 1000];
/** Catch-ups per page size, in turns; each figure is the median of its turns. */
const ROUNDS = 3;
/** Rows per INSERT while the outbox is filled. */
const INSERT_BATCH = 1000;

export interface FeedMeasure {
  readonly database: string;
  readonly limit: number;
  readonly events: number;
  readonly requests: number;
  readonly seconds: number;
  readonly megabytes: number;
}

/**
 * An AgentsChanged as the service stores and publishes it, written by its own code: the example of
 * the AsyncAPI document, its whole agent chain named, with the event's id.
 */
function agentsChangedBody(id: string, time: Date): string {
  const example = AGENTS_CHANGED.example;
  return cloudEventJson(
    {
      type: AGENTS_CHANGED,
      subject: String(example.transaction_id),
      time,
      data: {
        ...example,
        directorid_recruit: 22,
        managerid_recruit: 32,
        salesagentid_recruit: 42,
        directorname_recruit: 'Eduardo Mendoza',
        managername_recruit: 'Cristina Aquino',
        salesagentname_recruit: 'Jose Ramos',
      },
    },
    // As a service on port 3000 with the default EVENTS_SCHEMA_URL writes it.
    { id, source: DEFAULT_EVENTS_SOURCE, schemaUrl: 'http://localhost:3000/asyncapi-json' },
  );
}

/** Rows of the outbox for positions `from` to `from + count - 1`, as the relay leaves them. */
function outboxRows(from: number, count: number): unknown[][] {
  const now = new Date();
  // The datetime(3) text both databases read, in UTC as the service stores it.
  const time = now.toISOString().replace('T', ' ').slice(0, 23);
  return Array.from({ length: count }, (_, index) => {
    const id = randomUUID();
    return [from + index, id, AGENTS_CHANGED.routingKey, time, agentsChangedBody(id, now)];
  });
}

const GIVEN = "UPDATE event_checkpoint SET position = ? WHERE consumer = '~positions'";

/**
 * Fills the outbox of a migrated database, its service stopped, with EVENTS events, positioned as the
 * relay leaves them; through the service's own data source options.
 */
async function fillOutbox(databaseUrl: string): Promise<void> {
  const config = loadAppConfig({ DATABASE_URL: databaseUrl }, { serving: false });
  const dataSource = new DataSource(
    await withServerDialect(dataSourceOptions(config.database, APP_ENTITIES)),
  );
  await dataSource.initialize();
  try {
    await dataSource.transaction(async (manager) => {
      for (let from = 1; from <= EVENTS; from += INSERT_BATCH) {
        const rows = outboxRows(from, Math.min(INSERT_BATCH, EVENTS - from + 1));
        await manager.query(
          `INSERT INTO event_outbox (position, event_id, routing_key, time, body) VALUES ${rows
            .map(() => '(?, ?, ?, ?, ?)')
            .join(', ')}`,
          rows.flat(),
        );
      }
      await manager.query(GIVEN, [EVENTS]);
    });
  } finally {
    await dataSource.destroy();
  }
}

/** A consumer reading the whole feed from its oldest event, a page of `limit` at a time. */
async function catchUp(url: string, limit: number): Promise<Omit<FeedMeasure, 'database'>> {
  let lastEventId: string | undefined;
  let events = 0;
  let requests = 0;
  let bytes = 0;
  const started = performance.now();
  for (;;) {
    const query = `limit=${limit}${lastEventId ? `&lastEventId=${lastEventId}` : ''}`;
    const response = await fetch(`${url}/api/Events?${query}`);
    const text = await response.text();
    if (!response.ok) throw new Error(`GET /api/Events?${query}: ${response.status} ${text}`);
    requests += 1;
    bytes += Buffer.byteLength(text);
    const page = JSON.parse(text) as { id: string }[];
    events += page.length;
    if (page.length < limit) break;
    lastEventId = page.at(-1)!.id;
  }
  const seconds = (performance.now() - started) / 1000;
  if (events !== EVENTS) throw new Error(`The feed held ${events} events, not ${EVENTS}`);
  return { limit, events, requests, seconds, megabytes: bytes / 1e6 };
}

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];

/** The catch-ups on one database, its service started on the filled outbox. */
async function benchDatabase(database: string, databaseUrl: string): Promise<FeedMeasure[]> {
  const env = { EVENTS_FEED: 'true' };
  // Migrates the database, then leaves it to be filled.
  await stopService(await startService(databaseUrl, env));
  await fillOutbox(databaseUrl);
  const service = await startService(databaseUrl, env);
  try {
    // Once through first, so that every turn finds the outbox in the database's cache.
    await catchUp(service.url, LIMITS.at(-1)!);
    const turns = new Map<number, Omit<FeedMeasure, 'database'>[]>(LIMITS.map((l) => [l, []]));
    for (let round = 0; round < ROUNDS; round++)
      for (const limit of LIMITS) turns.get(limit)!.push(await catchUp(service.url, limit));
    return LIMITS.map((limit) => {
      const measured = turns.get(limit)!;
      const seconds = median(measured.map((turn) => turn.seconds));
      return { database, ...measured.find((turn) => turn.seconds === seconds)! };
    });
  } finally {
    await stopService(service);
  }
}

/** The catch-ups on SQLite (a file in `directory`) and, with a server, on a MariaDB database. */
export async function benchEventFeed(
  directory: string,
  mariadbServerUrl: string | undefined,
): Promise<FeedMeasure[]> {
  const measures = await benchDatabase('SQLite', `sqlite:${join(directory, 'feed.sqlite')}`);
  if (!mariadbServerUrl) return measures;
  const target = await createScratchDatabase(mariadbServerUrl, 'feed');
  try {
    return [...measures, ...(await benchDatabase('MariaDB', target.url))];
  } finally {
    await target.drop();
  }
}

/** The measures as a markdown table. */
export function feedTable(measures: readonly FeedMeasure[]): string {
  return [
    '| Consumer catching up | Database | Events | Requests | Seconds | Events/s | MB/s |',
    '|---|---|---:|---:|---:|---:|---:|',
    ...measures.map(
      (m) =>
        `| Pages of ${m.limit} | ${m.database} | ${m.events} | ${m.requests} | ${m.seconds.toFixed(2)} | ${Math.round(m.events / m.seconds)} | ${(m.megabytes / m.seconds).toFixed(1)} |`,
    ),
  ].join('\n');
}

if (require.main === module) {
  void (async () => {
    const directory = await mkdtemp(join(tmpdir(), 'property-sales-feed-'));
    try {
      const measures = await benchEventFeed(directory, process.env.BENCH_DATABASE_URL);
      process.stdout.write(`${feedTable(measures)}\n`);
    } finally {
      for (const child of children) child.kill('SIGKILL');
      await rm(directory, { recursive: true, force: true });
    }
  })().catch((error: unknown) => {
    for (const child of children) child.kill('SIGKILL');
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  });
}
