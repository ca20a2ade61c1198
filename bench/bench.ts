import autocannon from 'autocannon';
import { fork, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, totalmem, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createConnection } from 'mysql2/promise';
import { Connection } from 'rabbitmq-client';
import { createScratchDatabase } from '../scripts/scratch-database';
import {
  generateRequirements,
  generateTransactions,
  transactionAt,
  type DatasetSize,
} from './dataset';
import { BENCH_EVENTS, benchDataTransfer, TRANSFER_SIZE, transferTable } from './data-transfer';
import { benchEventFeed, feedTable } from './event-feed';
import { type FeedReadings } from './feed-readers';
import { runMysqlReference } from './reference-mysql';
import {
  children,
  freePort,
  REACTING_SERVICE,
  type Service,
  startService,
  stopService,
} from './service';
import { TcpRelay } from './tcp-relay';
import { WebhookReceiver } from './webhook-receiver';

/**
 * `npm run bench`: the service on the embedded database (and on MariaDB when BENCH_DATABASE_URL names
 * a server), under autocannon at fixed connection counts, against references on the same data: the
 * machine's limit (node:http), the framework's ceiling for reads, for GetTransaction and for
 * UpdateAgents, and, on MariaDB, UpdateAgents' SQL by hand with mysql2; on SQLite also what
 * authentication by API key and authorization by scope cost two routes. Prints a markdown table (each
 * route's throughput and p99 over its reference's) and how long the service takes to answer its first
 * request. Every process it starts listens on 127.0.0.1 and stops at the end.
 */

const DIST = join(__dirname, '..');
const IMPORT = join(DIST, 'src', 'data-import', 'main.js');

const number = (name: string, fallback: number) =>
  process.env[name] ? Number(process.env[name]) : fallback;
const SECONDS = number('BENCH_SECONDS', 10);
const WARMUP_SECONDS = number('BENCH_WARMUP_SECONDS', 3);
const SIZE: DatasetSize = {
  types: number('BENCH_TYPES', 50),
  recordsPerType: number('BENCH_RECORDS', 12),
  transactions: number('BENCH_TRANSACTIONS', 10000),
};
const SCALE_TO = number('BENCH_SCALE_TRANSACTIONS', 1_000_000);
const READ_CONNECTIONS = 32;
const WRITE_CONNECTIONS = 16;
/** A broker address nothing listens on: the events wait in the outbox. */
const BROKER_AWAY = 'amqp://guest:guest@127.0.0.1:9';

/** How fast the relay drained a backlog of events to the broker. */
interface RelayDrain {
  readonly database: string;
  readonly events: number;
  readonly seconds: number;
}

const drains: RelayDrain[] = [];

/** What a consumer of the exchange received while UpdateAgents ran. */
interface RelayUnderLoad {
  readonly database: string;
  readonly scenario: string;
  /** Acknowledged UpdateAgents per second: events committed per second. */
  readonly writesPerSecond: number;
  readonly deliveredPerSecond: number;
  /** The longest time between two deliveries, in ms: the relay's steps as a consumer sees them. */
  readonly longestGapMs: number;
  /** Events still waiting for the broker when the load stopped. */
  readonly pendingAtEnd: number;
  /** After a cut: the backlog when the broker came back, and how long catching up took. */
  readonly backlog?: number;
  readonly catchUpSeconds?: number;
}

const underLoad: RelayUnderLoad[] = [];

function recordUnderLoad(figures: RelayUnderLoad): void {
  underLoad.push(figures);
  process.stderr.write(
    `Relay under UpdateAgents (${figures.database}): ${JSON.stringify(figures)}\n`,
  );
}

/** How long the broker is cut while UpdateAgents runs, in the drain-under-load scenario. */
const CUT_SECONDS = number('BENCH_EVENTS_CUT_SECONDS', 10);

interface Measure {
  readonly scenario: string;
  readonly database: string;
  readonly connections: number;
  readonly requestsPerSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly errors: number;
  /** Measured over HTTP by autocannon, so its latencies are a route's (not a loop's without HTTP). */
  readonly route: boolean;
  readonly reference?: string;
  readonly ratio?: number;
  /** Its p99 over its reference's, when the reference is a route too. */
  readonly p99Ratio?: number;
}

const results: Measure[] = [];

function run(command: string, args: string[], env: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [command, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} exited ${code}`)),
    );
  });
}

/** A reference server; its arguments are the port and then `args`. */
async function startReference(file: string, args: readonly string[]): Promise<string> {
  const port = await freePort();
  const child = fork(join(__dirname, file), [String(port), ...args], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  children.push(child);
  await new Promise<void>((resolve) => child.once('message', () => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** Peak resident set size of a process, in MB. */
async function peakRssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

const randomId = (count: number) => 1 + Math.floor(Math.random() * count);
let brokerCounter = 1;
const agentBody = (count: number) => {
  const brokerid = 200000 + brokerCounter++;
  return {
    transaction_id: randomId(count),
    financetype: 'Cash',
    brokerid,
    brokername: `Broker ${brokerid}`,
  };
};
const agentXml = (count: number) => {
  const body = agentBody(count);
  return `<Transaction xmlns="http://schemas.datacontract.org/2004/07/PropertySales.Models"><brokerid>${body.brokerid}</brokerid><brokername>${body.brokername}</brokername><financetype>Cash</financetype><transaction_id>${body.transaction_id}</transaction_id></Transaction>`;
};

interface Load {
  readonly url: string;
  readonly connections: number;
  readonly expectStatus: number;
  readonly request?: autocannon.Request;
  /** Sent with every request, besides the request's own headers. */
  readonly headers?: Record<string, string>;
}

/** GETs of `url` by the read connections. */
const readLoad = (url: string, headers?: Record<string, string>, expectStatus = 200): Load => ({
  url,
  connections: READ_CONNECTIONS,
  expectStatus,
  headers,
});

/** One run of a load: its figures, before they are recorded under a scenario. */
type Figures = Pick<Measure, 'connections' | 'requestsPerSecond' | 'p50' | 'p99' | 'errors'>;

async function runLoad(load: Load): Promise<Figures> {
  const options: autocannon.Options = {
    url: load.url,
    connections: load.connections,
    headers: load.headers,
    requests: load.request ? [load.request] : undefined,
  };
  await autocannon({ ...options, duration: WARMUP_SECONDS });
  const result = await autocannon({ ...options, duration: SECONDS });
  const counts = result.statusCodeStats as unknown as Record<string, { count: number }>;
  const answered = Object.values(counts).reduce((sum, { count }) => sum + count, 0);
  return {
    connections: load.connections,
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors:
      result.errors + result.timeouts + answered - (counts[String(load.expectStatus)]?.count ?? 0),
  };
}

function record(scenario: string, database: string, figures: Figures): Measure {
  const measure: Measure = { scenario, database, ...figures, route: true };
  results.push(measure);
  process.stderr.write(
    `${scenario} (${database}): ${Math.round(measure.requestsPerSecond)} req/s\n`,
  );
  return measure;
}

async function measure(scenario: string, database: string, load: Load): Promise<Measure> {
  return record(scenario, database, await runLoad(load));
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];

/**
 * Two variants of one route measured in turns, `rounds` times each, recorded as the median of their
 * rounds (errors summed): drift on a busy machine weighs on both alike.
 */
async function measureInTurns(
  database: string,
  variants: ReadonlyArray<{ scenario: string; load: Load }>,
  rounds: number,
): Promise<Measure[]> {
  const runs = variants.map((): Figures[] => []);
  for (let round = 0; round < rounds; round += 1)
    for (const [index, { load }] of variants.entries()) runs[index].push(await runLoad(load));
  return variants.map(({ scenario }, index) => record(scenario, database, medianOf(runs[index])));
}

/** The median figures of runs of one load (errors summed). */
function medianOf(runs: readonly Figures[]): Figures {
  return {
    connections: runs[0].connections,
    requestsPerSecond: median(runs.map((figures) => figures.requestsPerSecond)),
    p50: median(runs.map((figures) => figures.p50)),
    p99: median(runs.map((figures) => figures.p99)),
    errors: runs.reduce((sum, figures) => sum + figures.errors, 0),
  };
}

/**
 * Records `reference` as the one `measure` is held against: their throughputs' ratio and, when the
 * reference is a route with a p99, their p99s' ratio.
 */
function compare(measure: Measure, reference: Measure): void {
  const index = results.indexOf(measure);
  results[index] = {
    ...measure,
    reference: reference.scenario,
    ratio: measure.requestsPerSecond / reference.requestsPerSecond,
    p99Ratio: reference.route && reference.p99 > 0 ? measure.p99 / reference.p99 : undefined,
  };
}

/** What the SQLite run measures of the service itself. */
interface ServiceFigures {
  /** Under the routes' load, before the costly bodies. */
  readonly peakRssMb: number;
  /** At the end, the costly bodies included. */
  readonly peakRssWithCostlyMb: number;
  readonly startMs: number;
}

async function benchSqlite(
  directory: string,
  files: { requirements: string; transactions: string },
): Promise<ServiceFigures> {
  const databaseUrl = `sqlite:${join(directory, 'bench.sqlite')}`;
  await run(IMPORT, ['--requirements', files.requirements, '--transactions', files.transactions], {
    DATABASE_URL: databaseUrl,
  });
  const service = await startService(databaseUrl);
  const catalogue = `${service.url}/api/Requirement/GetRequirements`;
  const json = join(directory, 'catalogue.json');
  const xml = join(directory, 'catalogue.xml');
  await writeFile(json, await (await fetch(catalogue)).text());
  await writeFile(
    xml,
    await (await fetch(catalogue, { headers: { Accept: 'application/xml' } })).text(),
  );
  const etag = (await fetch(catalogue)).headers.get('etag')!;

  const http = await startReference('reference-http.js', [json, xml]);
  const nest = await startReference('reference-nest.js', [json, xml]);
  await measure('node:http, GetRequirements bytes (JSON)', '-', readLoad(`${http}/json`));
  const nestJson = await measure(
    'NestJS on Express, GetRequirements bytes (JSON)',
    '-',
    readLoad(`${nest}/json`),
  );
  const nestXml = await measure(
    'NestJS on Express, GetRequirements bytes (XML)',
    '-',
    readLoad(`${nest}/xml`),
  );
  const idleJson = await measure('GetRequirements JSON', 'SQLite', readLoad(catalogue));
  compare(idleJson, nestJson);
  compare(
    await measure(
      'GetRequirements XML',
      'SQLite',
      readLoad(catalogue, { Accept: 'application/xml' }),
    ),
    nestXml,
  );
  compare(
    await measure(
      'GetRequirements If-None-Match (304)',
      'SQLite',
      readLoad(catalogue, { 'If-None-Match': etag }, 304),
    ),
    nestJson,
  );
  await benchGetTransaction(service.url, 'SQLite', databaseUrl, SIZE.transactions);
  const nestWrite = await startReference('reference-nest-write.js', [databaseUrl]);
  const updates = await benchUpdates(
    service.url,
    'SQLite',
    SIZE.transactions,
    await measureUpdateCeiling(nestWrite, 'SQLite', SIZE.transactions),
  );
  const peakRss = await peakRssMb(service.process.pid!);
  await benchCostlyBodies(service.url, readLoad(catalogue), idleJson);
  const peakRssWithCostly = await peakRssMb(service.process.pid!);
  await stopService(service);
  await benchAuthorization(databaseUrl, SIZE.transactions, { read: idleJson, update: updates });
  await benchEvents(databaseUrl, 'SQLite', SIZE.transactions, updates);
  await benchReactor(databaseUrl, 'SQLite', SIZE.transactions);
  await benchWebhooks(databaseUrl, 'SQLite', SIZE.transactions);
  return { peakRssMb: peakRss, peakRssWithCostlyMb: peakRssWithCostly, startMs: service.startMs };
}

/**
 * GetTransaction against the framework's ceiling for it: a bare NestJS route running the same SELECT
 * on the same database, opened as the service opens `databaseUrl`.
 */
async function benchGetTransaction(
  url: string,
  database: string,
  databaseUrl: string,
  rows: number,
): Promise<void> {
  const reference = await startReference('reference-nest-read.js', [databaseUrl]);
  const ceiling = await measure(
    'NestJS on Express, GetTransaction SQL by hand (JSON)',
    database,
    getTransactionLoad(reference, rows, '/transaction/'),
  );
  compare(
    await measure(`GetTransaction JSON (${rows} rows)`, database, getTransactionLoad(url, rows)),
    ceiling,
  );
}

/** GetTransaction of random transactions among `count`. */
function getTransactionLoad(
  url: string,
  count: number,
  path = '/api/Transaction/GetTransaction/',
): Load {
  return {
    url,
    connections: READ_CONNECTIONS,
    expectStatus: 200,
    request: {
      method: 'GET',
      setupRequest: (request) => ({
        ...request,
        path: `${path}${randomId(count)}`,
      }),
    },
  };
}

/** UpdateAgents bodies naming random transactions among `count`, in JSON or XML. */
function updateLoad(
  url: string,
  count: number,
  format: 'json' | 'xml',
  path = '/api/Transaction/UpdateAgents',
): Load {
  return {
    url,
    connections: WRITE_CONNECTIONS,
    expectStatus: 204,
    request: {
      method: 'POST',
      path,
      headers: { 'Content-Type': format === 'json' ? 'application/json' : 'application/xml' },
      setupRequest: (request) => ({
        ...request,
        body: format === 'json' ? JSON.stringify(agentBody(count)) : agentXml(count),
      }),
    },
  };
}

/**
 * The framework's ceiling for UpdateAgents, served at `url` by reference-nest-write.js on the service's
 * database: a bare NestJS route running UpdateAgents' SQL by hand, under the service's load on `count`
 * transactions. Named with `count` when it is not the dataset's size.
 */
function measureUpdateCeiling(url: string, database: string, count: number): Promise<Measure> {
  const scenario = 'NestJS on Express, UpdateAgents SQL by hand (JSON)';
  return measure(
    count === SIZE.transactions ? scenario : `${scenario} (${count} rows)`,
    database,
    updateLoad(url, count, 'json', '/update'),
  );
}

/** UpdateAgents in JSON and in XML, each against the framework's ceiling measured in this run. */
async function benchUpdates(
  url: string,
  database: string,
  count: number,
  ceiling: Measure,
): Promise<Measure> {
  const json = await measure('UpdateAgents JSON', database, updateLoad(url, count, 'json'));
  compare(json, ceiling);
  compare(await measure('UpdateAgents XML', database, updateLoad(url, count, 'xml')), ceiling);
  return json;
}

/** A counter or gauge of the service's /metrics, summed over its series matching `labels`. */
async function metric(url: string, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}${labels}`) && line.charAt(name.length) !== '_')
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/**
 * A durable queue of the bench's own bound to the events' exchange, as a consuming system binds one
 * (the broker confirms a persistent message once that queue has it on disk), counting what it
 * receives and when.
 */
class DeliveryCounter {
  private readonly times: number[] = [];

  private constructor(
    private readonly connection: Connection,
    private readonly consumer: ReturnType<Connection['createConsumer']>,
    private readonly queue: string,
    private readonly exchange: string,
  ) {}

  static async open(url: string, exchange: string): Promise<DeliveryCounter> {
    const connection = new Connection({ url });
    const queue = `${exchange}.bench-consumer`;
    const owner: { counter?: DeliveryCounter } = {};
    const consumer = connection.createConsumer(
      {
        queue,
        noAck: true,
        queueOptions: { durable: true },
        exchanges: [{ exchange, type: 'topic', durable: true }],
        queueBindings: [{ queue, exchange, routingKey: '#' }],
      },
      () => void owner.counter?.times.push(performance.now()),
    );
    await new Promise((resolve) => consumer.once('ready', resolve));
    owner.counter = new DeliveryCounter(connection, consumer, queue, exchange);
    return owner.counter;
  }

  /** A mark of now, for `since`. */
  mark(): number {
    return this.times.length;
  }

  /** The deliveries since `mark`: how many, and the longest time between two of them. */
  since(mark: number): { delivered: number; longestGapMs: number } {
    const times = this.times.slice(mark);
    let longestGapMs = 0;
    for (let index = 1; index < times.length; index++)
      longestGapMs = Math.max(longestGapMs, times[index] - times[index - 1]);
    return { delivered: times.length, longestGapMs };
  }

  async close(): Promise<void> {
    await this.consumer.close();
    await this.connection.queueDelete({ queue: this.queue });
    await this.connection.exchangeDelete({ exchange: this.exchange });
    await this.connection.close();
  }
}

/** UpdateAgents in JSON at the write connections until `stop`, counting the 204s as they come. */
function startWrites(
  url: string,
  count: number,
): { stop: () => Promise<void>; acknowledged: () => number } {
  const load = updateLoad(url, count, 'json');
  let acknowledged = 0;
  let finished!: () => void;
  const done = new Promise<void>((resolve) => {
    finished = resolve;
  });
  const instance = autocannon(
    // An hour: it runs until stopped.
    { url, connections: load.connections, requests: [load.request!], duration: 3600 },
    () => finished(),
  );
  instance.on('response', (_client, status) => {
    if (status === 204) acknowledged++;
  });
  return {
    acknowledged: () => acknowledged,
    stop: () => {
      instance.stop();
      return done;
    },
  };
}

/**
 * UpdateAgents with events on against `off`, its run with them off on the same data: first with the
 * broker away (the events wait in the outbox; writes go on), then, on a new instance, the relay
 * draining that backlog to the broker (its rate), then with the broker there, a consumer's queue
 * counting what the relay delivers under the load, and last the broker cut for CUT_SECONDS under the
 * load and the relay catching up while it goes on.
 */
async function benchEvents(
  databaseUrl: string,
  database: string,
  count: number,
  off: Measure,
): Promise<void> {
  const consumer = await DeliveryCounter.open(
    BENCH_EVENTS.EVENTS_URL,
    BENCH_EVENTS.EVENTS_EXCHANGE,
  );
  try {
    const away = await startService(databaseUrl, { ...BENCH_EVENTS, EVENTS_URL: BROKER_AWAY });
    compare(
      await measure(
        'UpdateAgents JSON, events on, broker away',
        database,
        updateLoad(away.url, count, 'json'),
      ),
      off,
    );
    const backlog = await metric(away.url, 'events_pending', '{consumer="broker"}');
    await stopService(away);
    const on = await startService(databaseUrl, BENCH_EVENTS);
    const started = performance.now();
    const publishedAtStart = await metric(on.url, 'events_published_total');
    let published = publishedAtStart;
    while (published < backlog) {
      await sleep(20);
      published = await metric(on.url, 'events_published_total');
    }
    drains.push({
      database,
      events: published - publishedAtStart,
      seconds: (performance.now() - started) / 1000,
    });
    const mark = consumer.mark();
    const measured = await measure(
      'UpdateAgents JSON, events on',
      database,
      updateLoad(on.url, count, 'json'),
    );
    compare(measured, off);
    const { delivered, longestGapMs } = consumer.since(mark);
    recordUnderLoad({
      database,
      scenario: 'broker there',
      // Over the warm-up and the measured run, as the deliveries are.
      writesPerSecond: measured.requestsPerSecond,
      deliveredPerSecond: delivered / (WARMUP_SECONDS + SECONDS),
      longestGapMs,
      pendingAtEnd: await metric(on.url, 'events_pending', '{consumer="broker"}'),
    });
    await stopService(on);
    await benchCatchUp(databaseUrl, database, count, consumer);
  } finally {
    await consumer.close();
  }
}

/**
 * The relay catching up under load: UpdateAgents runs throughout; the broker (through a TCP relay) is
 * cut for CUT_SECONDS, then back; from its first delivery after that, how long until the backlog is
 * delivered (no event waits longer than a second), and at what rate the consumer received events
 * meanwhile.
 */
async function benchCatchUp(
  databaseUrl: string,
  database: string,
  count: number,
  consumer: DeliveryCounter,
): Promise<void> {
  const broker = new URL(BENCH_EVENTS.EVENTS_URL);
  const relay = await TcpRelay.start(broker.hostname, Number(broker.port || 5672));
  const through = new URL(broker);
  through.host = `127.0.0.1:${relay.port}`;
  const service = await startService(databaseUrl, {
    ...BENCH_EVENTS,
    EVENTS_URL: through.toString(),
  });
  const pending = () => metric(service.url, 'events_pending', '{consumer="broker"}');
  const oldestSeconds = () =>
    metric(service.url, 'events_oldest_pending_age_seconds', '{consumer="broker"}');
  const writes = startWrites(service.url, count);
  try {
    await sleep(WARMUP_SECONDS * 1000);
    await relay.cut();
    await sleep(CUT_SECONDS * 1000);
    await relay.restore();
    // From the first delivery: the client's reconnection (retried every 250 ms to 5 s) aside.
    const returned = consumer.mark();
    const reconnecting = performance.now() + 30_000;
    while (consumer.mark() === returned && performance.now() < reconnecting) await sleep(5);
    const restored = performance.now();
    const backlog = await pending();
    const mark = consumer.mark();
    const acknowledgedAtRestore = writes.acknowledged();
    // Caught up once no event waits longer than a second; given up after six times the cut.
    const limit = restored + 6 * CUT_SECONDS * 1000;
    let caughtUp = false;
    while (!caughtUp && performance.now() < limit) {
      await sleep(50);
      caughtUp = (await oldestSeconds()) < 1;
    }
    const seconds = (performance.now() - restored) / 1000;
    const acknowledged = writes.acknowledged() - acknowledgedAtRestore;
    const pendingAtEnd = await pending();
    const { delivered, longestGapMs } = consumer.since(mark);
    recordUnderLoad({
      database,
      scenario: `catching up after a ${CUT_SECONDS} s cut`,
      writesPerSecond: acknowledged / seconds,
      deliveredPerSecond: delivered / seconds,
      longestGapMs,
      pendingAtEnd,
      backlog,
      catchUpSeconds: caughtUp ? seconds : undefined,
    });
  } finally {
    await writes.stop();
    await stopService(service);
    await relay.close();
  }
}

/** Turns of UpdateAgents without a handler and with the reacting module, each a median of its turns. */
const REACTOR_ROUNDS = number('BENCH_REACTOR_ROUNDS', 3);
/** The reacting module's handler of AgentsChanged, as its metrics name it. */
const REACTOR_HANDLER = 'TestLedger.agentsChanged';

/** From an event's commit to its handler's commit: the reacting module's, per database. */
interface HandlerLatency {
  readonly database: string;
  readonly events: number;
  readonly p50: number;
  readonly p99: number;
}

const handlerLatencies: HandlerLatency[] = [];

const latencyLine = ({ database, events, p50, p99 }: HandlerLatency) =>
  `Reacting module (${database}): ${events} events, from commit to its handler's commit p50 ${format(p50)} ms, p99 ${format(p99)} ms (interpolated in events_handler_latency_seconds' buckets).`;

/** The cumulative counts of a histogram's buckets for `labels`, by upper bound, from /metrics. */
async function histogram(url: string, name: string, labels: string): Promise<Map<number, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const buckets = new Map<number, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}_bucket{`) || !line.includes(labels)) continue;
    const bound = line.slice(line.indexOf('le="') + 4, line.indexOf('"', line.indexOf('le="') + 4));
    buckets.set(
      bound === '+Inf' ? Infinity : Number(bound),
      Number(line.slice(line.lastIndexOf(' ') + 1)),
    );
  }
  return buckets;
}

/** The q-quantile of a histogram's cumulative buckets, interpolated in its bucket as Prometheus does. */
function quantile(buckets: ReadonlyMap<number, number>, q: number): number {
  const bounds = [...buckets.keys()].sort((a, b) => a - b);
  const total = buckets.get(Infinity) ?? 0;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const bound of bounds) {
    const count = buckets.get(bound)!;
    if (count >= rank)
      return bound === Infinity
        ? lower
        : lower + ((bound - lower) * (rank - below)) / (count - below || 1);
    [lower, below] = [bound, count];
  }
  return lower;
}

/**
 * What a reacting module costs UpdateAgents: the service with no handler against the service with the
 * reacting test module mounted (its handler recomputes each changed transaction's commission splits,
 * reading the selling prices through the transaction module's door, and publishes an event), no broker,
 * measured in turns on the same data, each turn on a fresh process; and the module's handler latency,
 * from an event's change to the commit of the step that handled it, over the reacting turns.
 */
async function benchReactor(databaseUrl: string, database: string, count: number): Promise<void> {
  const plain: Figures[] = [];
  const reacting: Figures[] = [];
  const latency = new Map<number, number>();
  const labels = `handler="${REACTOR_HANDLER}"`;
  for (let round = 0; round < REACTOR_ROUNDS; round += 1) {
    const without = await startService(databaseUrl);
    plain.push(await runLoad(updateLoad(without.url, count, 'json')));
    await stopService(without);
    const withModule = await startService(databaseUrl, {}, REACTING_SERVICE);
    reacting.push(await runLoad(updateLoad(withModule.url, count, 'json')));
    // Its handler catches up before the process goes: every event's latency is counted.
    while ((await metric(withModule.url, 'events_pending', `{consumer="${REACTOR_HANDLER}"}`)) > 0)
      await sleep(50);
    for (const [bound, events] of await histogram(
      withModule.url,
      'events_handler_latency_seconds',
      labels,
    ))
      latency.set(bound, (latency.get(bound) ?? 0) + events);
    await stopService(withModule);
  }
  const off = record('UpdateAgents JSON, no event handler', database, medianOf(plain));
  compare(
    record('UpdateAgents JSON, a reacting module, no broker', database, medianOf(reacting)),
    off,
  );
  handlerLatencies.push({
    database,
    events: latency.get(Infinity) ?? 0,
    p50: quantile(latency, 0.5) * 1000,
    p99: quantile(latency, 0.99) * 1000,
  });
}

/** The reacting module's batched recomputation, as its metrics name it. */
const RECOMPUTE = 'TestLedger.recompute';

/** GetTransaction while the reacting module recomputes every transaction, per database. */
interface RecomputeWait {
  readonly database: string;
  readonly transactions: number;
  readonly seconds: number;
  readonly requests: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

const recomputeWaits: RecomputeWait[] = [];

const recomputeLine = (r: RecomputeWait) =>
  `Recompute of ${r.transactions} transactions (${r.database}) in ${format(r.seconds)} s: ${r.requests} GetTransaction one at a time meanwhile, p50 ${format(r.p50)} ms, p99 ${format(r.p99)} ms, max ${format(r.max)} ms.`;

/**
 * What a batched recomputation of every transaction costs a request: the reacting test module's
 * service, the first and the last transaction imported again (their DataImported starts the
 * recomputation of the ids between them: every transaction), and GetTransaction of random
 * transactions one at a time until the run ends, each timed.
 */
async function benchRecompute(databaseUrl: string, database: string, count: number): Promise<void> {
  const directory = await mkdtemp(join(tmpdir(), 'property-sales-recompute-'));
  const service = await startService(databaseUrl, {}, REACTING_SERVICE);
  try {
    const transactions = join(directory, 'transactions.json');
    await writeFile(
      transactions,
      JSON.stringify([transactionAt(SIZE, 0), transactionAt(SIZE, count - 1)]),
    );
    await run(IMPORT, ['--transactions', transactions], { DATABASE_URL: databaseUrl });
    const running = async () =>
      (await metric(service.url, 'event_reactions_running', `{reaction="${RECOMPUTE}"}`)) > 0;
    while (!(await running())) await sleep(10);
    const started = performance.now();
    const waits: number[] = [];
    for (let request = 1; request % 10 !== 0 || (await running()); request += 1) {
      const sent = performance.now();
      const response = await fetch(
        `${service.url}/api/Transaction/GetTransaction/${randomId(count)}`,
      );
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`GetTransaction answered ${response.status}`);
      waits.push(performance.now() - sent);
      await sleep(10);
    }
    const sorted = waits.sort((a, b) => a - b);
    recomputeWaits.push({
      database,
      transactions: count,
      seconds: (performance.now() - started) / 1000,
      requests: sorted.length,
      p50: sorted[Math.floor(sorted.length * 0.5)],
      p99: sorted[Math.floor(sorted.length * 0.99)],
      max: sorted.at(-1)!,
    });
  } finally {
    await stopService(service);
    await rm(directory, { recursive: true, force: true });
  }
}

/** Turns of UpdateAgents with no webhook subscription, one and ten, each a median of its turns. */
const WEBHOOK_ROUNDS = number('BENCH_WEBHOOK_ROUNDS', 3);
/** The numbers of subscriptions measured against none (webhooks off). */
const WEBHOOK_SUBSCRIPTIONS = [1, 10];
/** Webhooks on, to a receiver on loopback over HTTP: what production refuses, allowed here. */
const WEBHOOKS_ON = {
  WEBHOOKS: 'true',
  WEBHOOKS_ALLOW_HTTP: 'true',
  WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
};
const WEBHOOK_API = '/api/Webhook';
/** How long a backlog of deliveries may take before the bench gives up on it. */
const DELIVERY_DEADLINE_MS = 300_000;

/** A backlog of events delivered to subscriptions resumed together. */
interface WebhookDrain {
  readonly database: string;
  readonly subscriptions: number;
  readonly deliveries: number;
  readonly seconds: number;
}

const webhookDrains: WebhookDrain[] = [];

const webhookDrainLine = ({ database, subscriptions, deliveries, seconds }: WebhookDrain) =>
  `Webhooks (${database}): a backlog of ${deliveries} deliveries to ${subscriptions} subscription${subscriptions === 1 ? '' : 's'} on a local receiver, delivered in ${seconds.toFixed(2)} s: ${Math.round(deliveries / seconds)} deliveries/s.`;

/** Calls a webhook route of the service; the JSON it answers. */
async function webhookApi(url: string, route: string, body?: object): Promise<unknown> {
  const answer = await fetch(`${url}${WEBHOOK_API}/${route}`, {
    method: route.startsWith('DeleteWebhook') ? 'DELETE' : 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body ?? {}),
  });
  if (!answer.ok) throw new Error(`${route} answered ${answer.status}: ${await answer.text()}`);
  return answer.status === 204 ? undefined : answer.json();
}

/** Subscribes `count` endpoints of `receiver` to every event; the subscriptions' ids. */
async function subscribe(url: string, receiver: WebhookReceiver, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let index = 0; index < count; index++) {
    const created = await webhookApi(url, 'CreateWebhook', {
      url: receiver.url(`partner-${index}`),
      description: `Bench partner ${index}`,
    });
    ids.push((created as { id: string }).id);
  }
  return ids;
}

/** Waits until no subscription of the service has an event to deliver. */
async function delivered(url: string): Promise<void> {
  const deadline = performance.now() + DELIVERY_DEADLINE_MS;
  while ((await metric(url, 'webhook_pending_events')) > 0) {
    if (performance.now() > deadline) throw new Error('The webhook deliveries did not end');
    await sleep(100);
  }
}

/**
 * What webhooks cost UpdateAgents and how fast they deliver, with a receiver on loopback answering
 * 204 at once: the service with webhooks off against one and ten subscriptions, in turns on the same
 * data, each turn on a fresh process (and its deliveries done before the next); then, for one and ten
 * subscriptions paused while UpdateAgents runs, the backlog delivered once they are resumed.
 */
async function benchWebhooks(databaseUrl: string, database: string, count: number): Promise<void> {
  const receiver = await WebhookReceiver.start();
  try {
    const turns = [0, ...WEBHOOK_SUBSCRIPTIONS].map((subscriptions) => ({
      subscriptions,
      runs: [] as Figures[],
    }));
    for (let round = 0; round < WEBHOOK_ROUNDS; round += 1)
      for (const { subscriptions, runs } of turns) {
        const service = await startService(databaseUrl, subscriptions === 0 ? {} : WEBHOOKS_ON);
        const ids = await subscribe(service.url, receiver, subscriptions);
        runs.push(await runLoad(updateLoad(service.url, count, 'json')));
        if (subscriptions > 0) await delivered(service.url);
        for (const id of ids) await webhookApi(service.url, `DeleteWebhook/${id}`);
        await stopService(service);
      }
    const [none, ...subscribed] = turns;
    const off = record('UpdateAgents JSON, no webhook subscription', database, medianOf(none.runs));
    for (const { subscriptions, runs } of subscribed)
      compare(
        record(
          `UpdateAgents JSON, ${subscriptions} webhook subscription${subscriptions === 1 ? '' : 's'}`,
          database,
          medianOf(runs),
        ),
        off,
      );
    for (const subscriptions of WEBHOOK_SUBSCRIPTIONS) {
      const service = await startService(databaseUrl, WEBHOOKS_ON);
      const ids = await subscribe(service.url, receiver, subscriptions);
      for (const id of ids) await webhookApi(service.url, `PauseWebhook/${id}`);
      await runLoad(updateLoad(service.url, count, 'json'));
      const backlog = await metric(service.url, 'webhook_pending_events');
      const before = await receiver.deliveries();
      const started = performance.now();
      for (const id of ids) await webhookApi(service.url, `ResumeWebhook/${id}`);
      const deadline = started + DELIVERY_DEADLINE_MS;
      while ((await receiver.deliveries()) - before < backlog && performance.now() < deadline)
        await sleep(5);
      webhookDrains.push({
        database,
        subscriptions,
        deliveries: (await receiver.deliveries()) - before,
        seconds: (performance.now() - started) / 1000,
      });
      for (const id of ids) await webhookApi(service.url, `DeleteWebhook/${id}`);
      await stopService(service);
    }
  } finally {
    await receiver.close();
  }
}

/** Idle subscriptions the scale scenario holds, and subscriptions a backlog is delivered to. */
const IDLE_SUBSCRIPTIONS = number('BENCH_IDLE_SUBSCRIPTIONS', 10_000);
const BACKLOG_SUBSCRIPTIONS = number('BENCH_BACKLOG_SUBSCRIPTIONS', 1000);
/** UpdateAgents committed while the backlog's subscriptions are paused: events each one is owed. */
const BACKLOG_EVENTS = number('BENCH_BACKLOG_EVENTS', 50);
/** What the idle subscriptions select: an import's event, which no bench load commits. */
const IDLE_TYPE = 'property-sales.data.imported';
/** How long the service's idle CPU and memory are watched. */
const IDLE_WATCH_MS = 10_000;
/** CreateWebhook, PauseWebhook and ResumeWebhook calls sent at once. */
const API_CONCURRENCY = 16;

/** What the scale scenario found of the service at rest: its CPU share of one core, its memory. */
interface AtRest {
  readonly database: string;
  readonly subscriptions: number;
  readonly cpuPercent: number;
  readonly rssMb: number;
}

const atRest: AtRest[] = [];

const atRestLine = ({ database, subscriptions, cpuPercent, rssMb }: AtRest) =>
  `Webhooks (${database}): ${subscriptions} subscriptions, service at rest: ${cpuPercent.toFixed(1)}% of a core, ${Math.round(rssMb)} MB resident.`;

/** The CPU time (user and system, in seconds) and resident memory (MB) of process `pid`. */
async function processUse(pid: number): Promise<{ cpuSeconds: number; rssMb: number }> {
  // /proc/<pid>/stat: utime and stime are its 14th and 15th fields, in clock ticks (100 a second),
  // counted after the command's closing parenthesis.
  const stat = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return { cpuSeconds: (Number(stat[11]) + Number(stat[12])) / 100, rssMb: rssKb / 1024 };
}

/** Watches the service at rest for IDLE_WATCH_MS: its CPU share of one core, its memory at the end. */
async function watchAtRest(
  service: Service,
  database: string,
  subscriptions: number,
): Promise<void> {
  const before = await processUse(service.process.pid!);
  const started = performance.now();
  await sleep(IDLE_WATCH_MS);
  const after = await processUse(service.process.pid!);
  atRest.push({
    database,
    subscriptions,
    cpuPercent:
      ((after.cpuSeconds - before.cpuSeconds) / ((performance.now() - started) / 1000)) * 100,
    rssMb: after.rssMb,
  });
}

/** Runs `call` on each of `items`, API_CONCURRENCY at a time. */
async function eachAtOnce<T>(
  items: readonly T[],
  call: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: API_CONCURRENCY }, async () => {
      while (next < items.length) await call(items[next++]);
    }),
  );
}

/**
 * What many subscriptions cost: the service at rest and under GetRequirements with none and with
 * IDLE_SUBSCRIPTIONS (selecting a kind no load commits), then, beside them, a backlog of
 * BACKLOG_EVENTS events delivered to BACKLOG_SUBSCRIPTIONS subscriptions, paused while the events
 * were committed and resumed together, to a receiver on loopback.
 */
async function benchWebhookScale(
  databaseUrl: string,
  database: string,
  count: number,
): Promise<void> {
  const receiver = await WebhookReceiver.start();
  const service = await startService(databaseUrl, {
    ...WEBHOOKS_ON,
    WEBHOOKS_MAX_SUBSCRIPTIONS: String(IDLE_SUBSCRIPTIONS + BACKLOG_SUBSCRIPTIONS),
  });
  try {
    const catalogue = `${service.url}/api/Requirement/GetRequirements`;
    await watchAtRest(service, database, 0);
    const alone = record(
      'GetRequirements JSON, no webhook subscription',
      database,
      await runLoad(readLoad(catalogue)),
    );
    const idle = Array.from({ length: IDLE_SUBSCRIPTIONS }, (_, index) => index);
    await eachAtOnce(idle, (index) =>
      webhookApi(service.url, 'CreateWebhook', {
        url: receiver.url(`idle-${index}`),
        // A kind the bench never commits: they stay idle while the backlog below goes out.
        types: [IDLE_TYPE],
        description: `Bench idle partner ${index}`,
      }),
    );
    // The dispatcher meets each new subscription once, finding nothing for it.
    await sleep(IDLE_WATCH_MS);
    await watchAtRest(service, database, IDLE_SUBSCRIPTIONS);
    compare(
      record(
        `GetRequirements JSON, ${IDLE_SUBSCRIPTIONS} idle webhook subscriptions`,
        database,
        await runLoad(readLoad(catalogue)),
      ),
      alone,
    );
    const ids = await subscribe(service.url, receiver, BACKLOG_SUBSCRIPTIONS);
    await eachAtOnce(ids, (id) => webhookApi(service.url, `PauseWebhook/${id}`));
    for (let event = 0; event < BACKLOG_EVENTS; event++) {
      const answer = await fetch(`${service.url}/api/Transaction/UpdateAgents`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(agentBody(count)),
      });
      if (answer.status !== 204) throw new Error(`UpdateAgents answered ${answer.status}`);
    }
    const backlog = BACKLOG_EVENTS * BACKLOG_SUBSCRIPTIONS;
    const before = await receiver.deliveries();
    const started = performance.now();
    await eachAtOnce(ids, (id) => webhookApi(service.url, `ResumeWebhook/${id}`));
    const deadline = started + DELIVERY_DEADLINE_MS;
    while ((await receiver.deliveries()) - before < backlog && performance.now() < deadline)
      await sleep(5);
    webhookDrains.push({
      database,
      subscriptions: BACKLOG_SUBSCRIPTIONS,
      deliveries: (await receiver.deliveries()) - before,
      seconds: (performance.now() - started) / 1000,
    });
  } finally {
    await stopService(service);
    await receiver.close();
  }
}

/** Turns of authorization off and on per route, each variant's figure the median of its turns. */
const AUTHORIZATION_ROUNDS = number('BENCH_AUTHORIZATION_ROUNDS', 3);

/** The scopes GetRequirements and UpdateAgents require, exactly: what the key is granted when on. */
const BENCH_KEY_SCOPES = ['requirements:read', 'transactions:write'];

/**
 * What authentication by API key and authorization by scope cost GetRequirements and UpdateAgents
 * (JSON): the service with AUTH_MODE=apikey and a key listed without scopes (authorization off: it
 * holds every scope, so the check stops at once) against the route's run with AUTH_MODE=none (`none`),
 * and with the same key granted exactly the routes' scopes (authorization on) against off. The two
 * services run side by side, and each route's off and on are measured in turns.
 */
async function benchAuthorization(
  databaseUrl: string,
  count: number,
  none: { read: Measure; update: Measure },
): Promise<void> {
  const key = randomBytes(32).toString('base64url');
  const entry = `bench=sha256:${createHash('sha256').update(key).digest('hex')}`;
  const withKey = (load: Load): Load => ({
    ...load,
    headers: { ...load.headers, 'X-Api-Key': key },
  });
  const off = await startService(databaseUrl, { AUTH_MODE: 'apikey', AUTH_API_KEYS: entry });
  const on = await startService(databaseUrl, {
    AUTH_MODE: 'apikey',
    AUTH_API_KEYS: `${entry}:${BENCH_KEY_SCOPES.join('+')}`,
  });
  const routes = [
    {
      scenario: 'GetRequirements JSON',
      reference: none.read,
      load: (url: string) => readLoad(`${url}/api/Requirement/GetRequirements`),
    },
    {
      scenario: 'UpdateAgents JSON',
      reference: none.update,
      load: (url: string) => updateLoad(url, count, 'json'),
    },
  ];
  for (const { scenario, reference, load } of routes) {
    const [keyOnly, scoped] = await measureInTurns(
      'SQLite',
      [
        {
          scenario: `${scenario}, API key without scopes (authorization off)`,
          load: withKey(load(off.url)),
        },
        {
          scenario: `${scenario}, API key with its scopes (authorization on)`,
          load: withKey(load(on.url)),
        },
      ],
      AUTHORIZATION_ROUNDS,
    );
    compare(keyOnly, reference);
    compare(scoped, keyOnly);
  }
  await stopService(off);
  await stopService(on);
}

/**
 * The request bodies within the size limit that cost the service most: one refused where it passes the
 * element quota, one read and validated whole, about 1 MB of requirements (invalid only in lacking
 * financetype, so nothing is written).
 */
const COSTLY_BODIES = [
  `<Transaction>${'<a/>'.repeat(200_000)}</Transaction>`,
  `<Transaction><transaction_id>1</transaction_id><requirements>${'<RequirementAcquisition><requirement_id>1</requirement_id></RequirementAcquisition>'.repeat(12_000)}</requirements></Transaction>`,
];
const COSTLY_CLIENTS = 4;

/**
 * GetRequirements for others while a few clients post the costliest bodies: its p99, compared with
 * its p99 when idle (the Ratio column, for this row, is p99 over the idle p99).
 */
async function benchCostlyBodies(url: string, load: Load, idle: Measure): Promise<void> {
  const posting = autocannon({
    url: `${url}/api/Transaction/UpdateAgents`,
    connections: COSTLY_CLIENTS,
    duration: WARMUP_SECONDS + SECONDS + 1,
    requests: COSTLY_BODIES.map((body) => ({
      method: 'POST',
      headers: { 'Content-Type': 'application/xml' },
      body,
    })),
  });
  const measured = await measure(
    `GetRequirements JSON while ${COSTLY_CLIENTS} clients post costly bodies`,
    'SQLite',
    load,
  );
  const posted = await posting;
  results[results.indexOf(measured)] = {
    ...measured,
    reference: `${idle.scenario}, p99 (${Math.round(posted.requests.total)} costly bodies answered)`,
    ratio: measured.p99 / idle.p99,
  };
}

async function benchMariadb(
  serverUrl: string,
  files: { requirements: string; transactions: string },
): Promise<void> {
  const database = await createScratchDatabase(serverUrl, 'bench');
  const databaseUrl = database.url;
  const mysqlUrl = databaseUrl.replace(/^mariadb:/, 'mysql:');
  try {
    await run(
      IMPORT,
      ['--requirements', files.requirements, '--transactions', files.transactions],
      { DATABASE_URL: databaseUrl, MIGRATIONS_RUN: 'true' },
    );
    const service = await startService(databaseUrl);
    const byHand = async (rows: number) => {
      const loop = await runMysqlReference(mysqlUrl, WRITE_CONNECTIONS, SECONDS, rows);
      const reference: Measure = {
        scenario: `mysql2 by hand, UpdateAgents SQL (${rows} rows)`,
        database: 'MariaDB',
        connections: WRITE_CONNECTIONS,
        ...loop,
        route: false,
      };
      results.push(reference);
      return reference;
    };
    const getTransaction = (rows: number) =>
      measure(
        `GetTransaction JSON (${rows} rows)`,
        'MariaDB',
        getTransactionLoad(service.url, rows),
      );
    await benchGetTransaction(service.url, 'MariaDB', databaseUrl, SIZE.transactions);
    const handWritten = await byHand(SIZE.transactions);
    const nestWrite = await startReference('reference-nest-write.js', [databaseUrl]);
    const ceiling = await measureUpdateCeiling(nestWrite, 'MariaDB', SIZE.transactions);
    compare(ceiling, handWritten);
    const updates = await benchUpdates(service.url, 'MariaDB', SIZE.transactions, ceiling);
    if (SCALE_TO > SIZE.transactions) {
      process.stderr.write(`Growing sales_transaction to ${SCALE_TO} rows\n`);
      const target = await createConnection({ uri: mysqlUrl });
      await target.query(
        `INSERT INTO sales_transaction (transaction_id, row_version, financetype, brokerid, brokername, locked)
         SELECT seq, 1, 'Cash', 11, 'Ramon Dela Cruz', 0 FROM seq_${SIZE.transactions + 1}_to_${SCALE_TO}`,
      );
      await target.end();
      await getTransaction(SCALE_TO);
      // The ceiling's process runs already: measuring it at this size costs one more scenario.
      const scaledCeiling = await measureUpdateCeiling(nestWrite, 'MariaDB', SCALE_TO);
      compare(scaledCeiling, await byHand(SCALE_TO));
      compare(
        await measure(
          `UpdateAgents JSON (${SCALE_TO} rows)`,
          'MariaDB',
          updateLoad(service.url, SCALE_TO, 'json'),
        ),
        scaledCeiling,
      );
    }
    service.process.kill('SIGTERM');
    await benchEvents(databaseUrl, 'MariaDB', SIZE.transactions, updates);
    await benchReactor(databaseUrl, 'MariaDB', SIZE.transactions);
    await benchWebhooks(databaseUrl, 'MariaDB', SIZE.transactions);
  } finally {
    await database.drop();
  }
}

const format = (value: number, digits = 1) => value.toFixed(digits);
/** A ratio to two places, or nothing when there is none. */
const optional = (ratio?: number) => (ratio === undefined ? '' : format(ratio, 2));

function report({ peakRssMb: rssMb, peakRssWithCostlyMb, startMs }: ServiceFigures): string {
  const lines = [
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; ${new Date().toISOString().slice(0, 10)}; \`npm run bench\` (${SECONDS} s per scenario after ${WARMUP_SECONDS} s warm-up; ${SIZE.types} types × ${SIZE.recordsPerType} records, ${SIZE.transactions} transactions).`,
    '',
    '| Scenario | Database | Connections | Requests/s | p50 ms | p99 ms | Errors | Reference | Ratio | p99 ratio |',
    '|---|---|---:|---:|---:|---:|---:|---|---:|---:|',
    ...results.map(
      (r) =>
        `| ${r.scenario} | ${r.database} | ${r.connections} | ${Math.round(r.requestsPerSecond)} | ${format(r.p50)} | ${format(r.p99)} | ${r.errors} | ${r.reference ?? ''} | ${optional(r.ratio)} | ${optional(r.p99Ratio)} |`,
    ),
    '',
    `Peak RSS of the service (SQLite run): ${Math.round(rssMb)} MB under the routes' load, ${Math.round(peakRssWithCostlyMb)} MB once the costly bodies were posted too.`,
    `Start (SQLite): its first request answered ${Math.round(startMs)} ms after \`node dist/src/main.js\` was spawned.`,
    ...handlerLatencies.map(latencyLine),
    ...webhookDrains.map(webhookDrainLine),
    ...drains.map(
      ({ database, events, seconds }) =>
        `Relay (${database}): a backlog of ${events} events published to the broker, confirmed, in ${seconds.toFixed(2)} s: ${Math.round(events / seconds)} events/s.`,
    ),
    '',
    '| Relay under UpdateAgents | Database | Writes/s | Delivered events/s | Longest gap ms | Backlog at return | Caught up in s | Pending at end |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
    ...underLoad.map(
      (r) =>
        `| ${r.scenario} | ${r.database} | ${Math.round(r.writesPerSecond)} | ${Math.round(r.deliveredPerSecond)} | ${Math.round(r.longestGapMs)} | ${r.backlog ?? ''} | ${r.catchUpSeconds === undefined ? (r.backlog === undefined ? '' : 'no') : r.catchUpSeconds.toFixed(1)} | ${r.pendingAtEnd} |`,
    ),
  ];
  return lines.join('\n');
}

/** Turns of UpdateAgents with no feed reader waiting and with FEED_WAITING, each a median of its turns. */
const FEED_READER_ROUNDS = number('BENCH_FEED_READER_ROUNDS', 3);
/** Feed readers waiting (a long poll each) while UpdateAgents runs. */
const FEED_WAITING = number('BENCH_FEED_WAITING', 500);
/**
 * The feed on, with room for every bench reader and the load's connections besides: they all come
 * from loopback, one client address. Waiting readers take half of the connections at most.
 */
const FEED_READERS_ON = {
  EVENTS_FEED: 'true',
  EVENTS_FEED_MAX_WAITING_PER_CALLER: String(Math.max(FEED_WAITING, 1)),
  HTTP_MAX_CONNECTIONS_PER_CLIENT: String(2 * FEED_WAITING + 1000),
  HTTP_MAX_CONNECTIONS: String(2 * FEED_WAITING + 1000),
};

/** The id of the newest event in the feed of the service at `url`, read page by page. */
async function newestFeedId(url: string): Promise<string | undefined> {
  let last: string | undefined;
  for (;;) {
    const after = last === undefined ? '' : `&lastEventId=${last}`;
    const page = (await (await fetch(`${url}/api/Events?limit=1000${after}`)).json()) as {
      id: string;
    }[];
    if (page.length === 0) return last;
    last = page.at(-1)!.id;
  }
}

/** FEED_WAITING readers, or `count`, light ones in a process of their own, reading after `from`. */
async function startFeedReaders(url: string, from: string | undefined, count: number) {
  const child = fork(join(__dirname, 'feed-readers.js'), [url, from ?? '', String(count)], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  children.push(child);
  let stopping = false;
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => {
      if (!stopping) reject(new Error(`The feed readers exited ${code}`));
    }),
  );
  exited.catch(() => undefined);
  await new Promise((resolve) => child.once('spawn', resolve));
  return {
    /** What they received so far, and their CPU time. */
    counts: () =>
      Promise.race([
        exited,
        new Promise<FeedReadings>((resolve) => {
          child.once('message', (message) => resolve(message as FeedReadings));
          child.send('counts');
        }),
      ]),
    stop: async () => {
      stopping = true;
      child.send('stop');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}

/** The CPU time a process has used, user and system, in seconds (Linux's /proc). */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The fields after the command's name, which is in parentheses: utime and stime are 14th and 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Where the machine's time went while a feed-readers load ran. */
interface FeedReadersCost {
  readonly database: string;
  readonly readers: number;
  /** CPU seconds per second of the service's process, the load's (the bench's) and the readers'. */
  readonly serviceCpu: number;
  readonly loadCpu: number;
  readonly readersCpu: number;
  readonly answersPerSecond: number;
  readonly eventsPerSecond: number;
  readonly megabytesPerSecond: number;
}

const feedReadersCosts: FeedReadersCost[] = [];

const feedReadersLine = (c: FeedReadersCost) =>
  `Feed readers (${c.database}), ${c.readers} waiting: the service ${format(c.serviceCpu, 2)} CPU s/s, the load ${format(c.loadCpu, 2)}, the readers ${format(c.readersCpu, 2)}; ${Math.round(c.answersPerSecond)} answers/s to the readers, ${Math.round(c.eventsPerSecond)} events/s, ${format(c.megabytesPerSecond)} MB/s.`;

/** What FEED_WAITING readers of the event feed cost UpdateAgents, against none. */
async function benchFeedReaders(
  databaseUrl: string,
  database: string,
  count: number,
): Promise<void> {
  const alone: Figures[] = [];
  const watched: Figures[] = [];
  for (let round = 0; round < FEED_READER_ROUNDS; round += 1)
    for (const [readers, figures] of [
      [0, alone],
      [FEED_WAITING, watched],
    ] as const) {
      const service = await startService(databaseUrl, FEED_READERS_ON);
      const from = await newestFeedId(service.url);
      const reading = await startFeedReaders(service.url, from, readers);
      // Every reader waiting before the writes begin.
      await sleep(1000);
      const before = await reading.counts();
      const started = { at: performance.now(), cpu: process.cpuUsage() };
      const serviceCpu = await cpuSeconds(service.process.pid!);
      figures.push(await runLoad(updateLoad(service.url, count, 'json')));
      const seconds = (performance.now() - started.at) / 1000;
      const load = process.cpuUsage(started.cpu);
      const after = await reading.counts();
      const perSecond = (key: keyof FeedReadings) => (after[key] - before[key]) / seconds;
      feedReadersCosts.push({
        database,
        readers,
        serviceCpu: ((await cpuSeconds(service.process.pid!)) - serviceCpu) / seconds,
        loadCpu: (load.user + load.system) / 1e6 / seconds,
        readersCpu: perSecond('cpuSeconds'),
        answersPerSecond: perSecond('answers'),
        eventsPerSecond: perSecond('events'),
        megabytesPerSecond: perSecond('bytes') / 1e6,
      });
      process.stderr.write(`${feedReadersLine(feedReadersCosts.at(-1)!)}\n`);
      await reading.stop();
      await stopService(service);
    }
  const none = record(
    'UpdateAgents JSON, the feed on, no reader waiting',
    database,
    medianOf(alone),
  );
  compare(
    record(`UpdateAgents JSON, ${FEED_WAITING} feed readers waiting`, database, medianOf(watched)),
    none,
  );
}

/** The parts `npm run bench -- <part>` runs alone: what a change to them is measured with. */
const PARTS: Readonly<
  Record<string, (databaseUrl: string, database: string, count: number) => Promise<void>>
> = {
  // The reacting module's cost.
  reactor: benchReactor,
  // The webhooks' cost and delivery rate.
  webhooks: benchWebhooks,
  // What many idle subscriptions cost, and a backlog delivered to many.
  'webhook-scale': benchWebhookScale,
  // What a request waits behind the reacting module's recomputation of every transaction.
  recompute: benchRecompute,
  // What readers waiting on the event feed cost the writes.
  'feed-readers': benchFeedReaders,
};

/** One part of the bench alone, on SQLite and, with BENCH_DATABASE_URL, on MariaDB. */
async function benchPartAlone(
  part: string,
  directory: string,
  files: { requirements: string; transactions: string },
): Promise<void> {
  const bench = PARTS[part];
  const sqlite = `sqlite:${join(directory, `${part}.sqlite`)}`;
  const importFiles = ['--requirements', files.requirements, '--transactions', files.transactions];
  await run(IMPORT, importFiles, { DATABASE_URL: sqlite });
  await bench(sqlite, 'SQLite', SIZE.transactions);
  const server = process.env.BENCH_DATABASE_URL;
  if (server) {
    const database = await createScratchDatabase(server, part);
    try {
      await run(IMPORT, importFiles, { DATABASE_URL: database.url, MIGRATIONS_RUN: 'true' });
      await bench(database.url, 'MariaDB', SIZE.transactions);
    } finally {
      await database.drop();
    }
  }
  process.stdout.write(
    `${[
      ...results.map(
        (r) =>
          `${r.scenario} (${r.database}): ${Math.round(r.requestsPerSecond)} req/s, p99 ${format(r.p99)} ms${r.p99Ratio === undefined ? '' : ` (${format(r.p99Ratio, 2)}×)`}, ${r.errors} errors${r.ratio === undefined ? '' : `, ratio ${format(r.ratio, 2)}`}`,
      ),
      ...handlerLatencies.map(latencyLine),
      ...webhookDrains.map(webhookDrainLine),
      ...atRest.map(atRestLine),
      ...recomputeWaits.map(recomputeLine),
      ...feedReadersCosts.map(feedReadersLine),
    ].join('\n')}\n`,
  );
}

async function main(): Promise<void> {
  const directory = await mkdtemp(join(tmpdir(), 'property-sales-bench-'));
  try {
    const files = {
      requirements: join(directory, 'requirements.json'),
      transactions: join(directory, 'transactions.json'),
    };
    await writeFile(files.requirements, JSON.stringify(generateRequirements(SIZE)));
    await writeFile(files.transactions, JSON.stringify(generateTransactions(SIZE)));
    const part = process.argv[2];
    if (part !== undefined) {
      if (!Object.hasOwn(PARTS, part))
        throw new Error(`No bench part ${part}; the parts: ${Object.keys(PARTS).join(', ')}`);
      return await benchPartAlone(part, directory, files);
    }
    const figures = await benchSqlite(directory, files);
    if (process.env.BENCH_DATABASE_URL) await benchMariadb(process.env.BENCH_DATABASE_URL, files);
    const transfer = await benchDataTransfer(
      directory,
      TRANSFER_SIZE,
      process.env.BENCH_DATABASE_URL,
    );
    const feed = await benchEventFeed(directory, process.env.BENCH_DATABASE_URL);
    process.stdout.write(
      `${report(figures)}\n\n${transferTable(transfer)}\n\n${feedTable(feed)}\n`,
    );
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await rm(directory, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  for (const child of children) child.kill('SIGKILL');
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
