import { setTimeout as sleep } from 'node:timers/promises';
import { createConnection } from 'mysql2/promise';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { AGENTS_CHANGED } from '../src/transaction/transaction.events';
import { BrokerRelay } from './support/broker-relay';
import {
  type Delivery,
  EventCollector,
  TEST_BROKER_URL,
  uniqueExchange,
} from './support/event-collector';
import { TEST_LEDGER_SPLITS_CHANGED } from './support/test-ledger/test-ledger.events';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { ServiceProcess, TemporaryDirectories } from './support/processes';
import { describeOnMariaDb, relayIdle, RunningApp } from './support/test-app';
import {
  createTestDatabase,
  type DatabaseKind,
  onEachDatabaseAtOnce,
  type TestDatabase,
  testDatabaseKinds,
} from './support/test-database';
import { getAgentHistoryPath, UPDATE_AGENTS } from './support/update-agents-cases';

/**
 * Integration events under faults, against a real RabbitMQ: the broker stalled, then away for 30 s,
 * under load, the service killed between commit and publish, two instances publishing from one
 * outbox, and writes that are refused or rolled back. Every test declares its own exchange
 * (EVENTS_EXCHANGE) and reads what reaches it through a queue bound with `#`; both are deleted
 * after. The broker is TEST_BROKER_URL, or the local one: a run without it fails, as one without
 * MariaDB does. The tests that mostly wait on the broker run on both databases at once.
 */

/**
 * How long the broker stays away in the outage test: 30 s, the outage the suite was written for, on
 * MariaDB, the production database. On SQLite 10 s: past the longest wait between the relay's
 * attempts to reconnect (5 s), so it too finds the broker away for several of them and says so
 * once, and long enough for thousands of writes to wait in the outbox; the part of the run that
 * depends on the database (every write committed, the backlog published in order once the broker
 * is back) is the same.
 */
const OUTAGE_MS: Record<DatabaseKind, number> = { mariadb: 30_000, sqlite: 10_000 };
const EVENT_ENV = { EVENTS_POLL_MS: '100' };
const SPLITS_CHANGED = TEST_LEDGER_SPLITS_CHANGED.type;
/** The longest a write load runs, whatever befalls its test: past the stall and the outage. */
const LOAD_LIMIT_MS = 90_000;

const directories = new TemporaryDirectories('event-faults');
const services: ServiceProcess[] = [];

/** After a test: its loads stopped, then its services. */
async function stopLoadsAndServices(): Promise<void> {
  await Promise.allSettled([...loads].map((load) => load.stop()));
  await Promise.allSettled(services.splice(0).map((service) => service.stop()));
}

afterAll(async () => {
  await stopLoadsAndServices();
  await directories.removeAll();
});

/** The AgentsChanged deliveries `collector` has received so far. */
const agentsChanged = (collector: EventCollector) => collector.ofType(AGENTS_CHANGED.type);

/** The row version a delivery's change brought its transaction to. */
const rowVersionOf = ({ event }: Delivery) => event.data?.row_version as number | undefined;

/** What the AgentsChanged deliveries say, against the changes committed. */
interface DeliveryReport {
  readonly events: number;
  readonly distinctIds: number;
  readonly duplicates: number;
  /** The most copies of one event received. */
  readonly mostCopies: number;
  /** Committed changes (transaction:row_version) no event was received for. */
  readonly missing: string[];
  /** Events for no committed change. */
  readonly unexpected: string[];
  /** Changes received under more than one id. */
  readonly changesWithSeveralIds: string[];
  /** Transactions whose changes first arrived out of row_version order. */
  readonly outOfOrder: string[];
  /** Deliveries whose AMQP message id is not the CloudEvents id. */
  readonly idMismatches: number;
}

/**
 * Checks the AgentsChanged deliveries received so far against what committed: `committed` maps each
 * transaction id to its last row version, each change from the seed's (1) on having raised it by one.
 */
function reportOn(
  collector: EventCollector,
  committed: ReadonlyMap<number, number>,
): DeliveryReport {
  const deliveries = agentsChanged(collector);
  const copies = new Map<string, number>();
  const idsOfChange = new Map<string, Set<string>>();
  const firsts = new Map<string, number[]>();
  const unexpected: string[] = [];
  let idMismatches = 0;
  for (const delivery of deliveries) {
    const { id } = delivery.event;
    const rowVersion = rowVersionOf(delivery);
    if (delivery.properties.messageId !== id) idMismatches++;
    copies.set(id, (copies.get(id) ?? 0) + 1);
    const subject = delivery.event.subject ?? '?';
    const change = `${subject}:${rowVersion}`;
    const last = committed.get(Number(subject));
    if (last === undefined || !(rowVersion! >= 2 && rowVersion! <= last)) unexpected.push(change);
    const ids = idsOfChange.get(change) ?? new Set<string>();
    if (ids.size === 0) {
      idsOfChange.set(change, ids);
      const versions = firsts.get(subject) ?? [];
      firsts.set(subject, versions);
      versions.push(rowVersion!);
    }
    ids.add(id);
  }
  const missing: string[] = [];
  for (const [transactionId, last] of committed)
    for (let version = 2; version <= last; version++)
      if (!idsOfChange.has(`${transactionId}:${version}`))
        missing.push(`${transactionId}:${version}`);
  return {
    events: deliveries.length,
    distinctIds: copies.size,
    duplicates: deliveries.length - copies.size,
    mostCopies: Math.max(0, ...copies.values()),
    missing,
    unexpected,
    changesWithSeveralIds: [...idsOfChange].filter(([, ids]) => ids.size > 1).map(([key]) => key),
    outOfOrder: [...firsts]
      .filter(([, versions]) => versions.some((version, index) => version <= versions[index - 1]))
      .map(([subject]) => subject),
    idMismatches,
  };
}

/** Waits up to `ms` for an event of every committed change; whether one came for each. */
const eventsOfEveryChange = (
  collector: EventCollector,
  committed: ReadonlyMap<number, number>,
  ms: number,
) => collector.until(() => reportOn(collector, committed).missing.length === 0, ms);

/** Every committed change received, under one id each, in order, and nothing else; and `more`. */
function expectEveryChangeOnce(result: DeliveryReport, more: Partial<DeliveryReport> = {}): void {
  expect(result).toMatchObject({
    missing: [],
    unexpected: [],
    changesWithSeveralIds: [],
    outOfOrder: [],
    idMismatches: 0,
    ...more,
  });
}

/** How many changes `committed` holds, the seed's aside. */
const changeCount = (committed: ReadonlyMap<number, number>) =>
  [...committed.values()].reduce((sum, last) => sum + last - 1, 0);

/** Every change of each transaction, as its history tells: its last row version, from the seed's 1. */
async function committedChanges(
  baseUrl: string,
  transactions: readonly number[],
): Promise<Map<number, number>> {
  const committed = new Map<number, number>();
  for (const id of transactions) {
    const response = await request(baseUrl).get(getAgentHistoryPath(id)).expect(200);
    committed.set(id, 1 + (response.body as unknown[]).length);
  }
  return committed;
}

/** Loads still running: a failed test's are stopped after it. */
const loads = new Set<WriteLoad>();

/**
 * Writers calling UpdateAgents in a loop until stopped, or at the latest after LOAD_LIMIT_MS; each
 * call a real change (a new brokerid).
 */
class WriteLoad {
  readonly statuses = new Map<number, number>();
  /** 204s per transaction. */
  readonly acknowledged = new Map<number, number>();
  private running = true;
  private readonly done: Promise<void>;
  private next = 0;

  constructor(
    baseUrls: readonly string[],
    transactions: readonly number[],
    writers: number,
    pauseMs = 0,
  ) {
    loads.add(this);
    const deadline = Date.now() + LOAD_LIMIT_MS;
    this.done = Promise.all(
      Array.from({ length: writers }, async (_, writer) => {
        const http = request(baseUrls[writer % baseUrls.length]);
        while (this.running && Date.now() < deadline) {
          const call = this.next++;
          const transactionId = transactions[call % transactions.length];
          const status = await http
            .post(UPDATE_AGENTS)
            .send({ transaction_id: transactionId, financetype: 'Cash', brokerid: 100_000 + call })
            .then(
              (response) => response.status,
              () => 0,
            );
          this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
          if (status === 204)
            this.acknowledged.set(transactionId, (this.acknowledged.get(transactionId) ?? 0) + 1);
          if (pauseMs > 0) await sleep(pauseMs);
        }
      }),
    ).then(() => undefined);
  }

  /**
   * Every write acknowledged (`statuses` as `stop` returned them), and every acknowledged change,
   * and nothing else, in the history (`committed`).
   */
  expectEveryWriteCommitted(
    statuses: Record<number, number>,
    committed: ReadonlyMap<number, number>,
  ): void {
    expect(statuses).toEqual({ 204: this.writes });
    expect(Object.fromEntries(committed)).toEqual(
      Object.fromEntries(
        [...committed.keys()].map((id) => [id, 1 + (this.acknowledged.get(id) ?? 0)]),
      ),
    );
  }

  get writes(): number {
    return [...this.statuses.values()].reduce((sum, count) => sum + count, 0);
  }

  /** Stops after the calls in flight; the statuses, `{ 204: n }` when every call was acknowledged. */
  async stop(): Promise<Record<number, number>> {
    this.running = false;
    await this.done;
    loads.delete(this);
    return Object.fromEntries(this.statuses);
  }
}

/** The built service, as operators start it, on `databaseUrl`; resolves once it serves. */
async function spawnService(
  databaseUrl: string,
  env: Record<string, string>,
): Promise<ServiceProcess> {
  const service = await ServiceProcess.start({
    cwd: await directories.make(),
    env: {
      DATABASE_URL: databaseUrl,
      MIGRATIONS_RUN: 'true',
      DEMO_DATA: 'false',
      AUTH_MODE: 'none',
      LOG_LEVEL: 'info',
      ...EVENT_ENV,
      ...env,
    },
  });
  services.push(service);
  await service.ready();
  return service;
}

interface LogLine {
  readonly level: string;
  readonly msg?: string;
  readonly context?: string;
  readonly time?: string;
}

/** The relay's log lines so far (whole lines only: the last one may still be being written). */
function relayLines(service: ServiceProcess): LogLine[] {
  return service.stdout
    .split('\n')
    .slice(0, -1)
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as LogLine)
    .filter((line) => line.context === 'EventRelay');
}

/** Seeds `transactions` (and the requirement catalogue) through an app without a broker. */
async function seed(databaseUrl: string, transactions: readonly number[]): Promise<void> {
  const app = await RunningApp.start(databaseUrl);
  try {
    await app.seed({
      requirements: CATALOGUE,
      transactions: transactions.map((id) => transactionRecord(id)),
    });
  } finally {
    await app.close();
  }
}

/** A connection of the test's own to the service's database, as another process opens one. */
function openDatabase(url: string): Promise<DataSource> {
  const source = url.startsWith('sqlite:')
    ? new DataSource({ type: 'better-sqlite3', database: url.slice('sqlite:'.length) })
    : new DataSource({ type: 'mysql', url: url.replace(/^mariadb:/, 'mysql:') });
  return source.initialize();
}

/** The value of an unlabelled series in the /metrics of the service at `baseUrl`, 0 when absent. */
async function metricOf(baseUrl: string, name: string): Promise<number> {
  const metrics = (await request(baseUrl).get('/metrics').expect(200)).text;
  const line = metrics.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}

/** The committed events the broker has not taken yet. */
const brokerPending = (service: ServiceProcess) =>
  metricOf(service.baseUrl, 'events_pending{consumer="broker"}');

/** Events the service's relay had the broker confirm (its events_published_total). */
const publishedBy = (service: ServiceProcess) =>
  metricOf(service.baseUrl, 'events_published_total');

/** Waits up to `ms` for `done` of what `read` gives; whether it came. */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!done(await read())) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

/**
 * The values an unlabelled gauge of the service took, as scraped every 100 ms until `stop`, each
 * change once: what an operator's dashboard shows of it. `shows` waits up to `ms` for the last value
 * scraped to be `value`; whether it came.
 */
function watchGauge(
  baseUrl: string,
  name: string,
): { shows: (value: number, ms?: number) => Promise<boolean>; stop: () => Promise<number[]> } {
  const values: number[] = [];
  let watching = true;
  const done = (async () => {
    while (watching) {
      const value = await metricOf(baseUrl, name).catch(() => undefined);
      if (value !== undefined && value !== values.at(-1)) values.push(value);
      await sleep(100);
    }
  })();
  return {
    shows: (value, ms) =>
      eventually(
        () => Promise.resolve(values.at(-1)),
        (last) => last === value,
        ms,
      ),
    stop: async () => {
      watching = false;
      await done;
      return values;
    },
  };
}

/** The relay's log lines about the broker, by what each says of it. */
const BROKER_STATE_LINES: ReadonlyArray<readonly [string, RegExp]> = [
  ['publishing', /^Publishing events to the exchange/],
  ['reachable again', /is reachable again/],
  ['unreachable', /is unreachable/],
  ['unconfirmed', /does not confirm/],
  ['refused', /refuses the events/],
];

/** What each of the relay's log lines about the broker says of it, with its level, in order. */
const brokerStates = (service: ServiceProcess) =>
  relayLines(service).flatMap(({ msg = '', level }) => {
    const state = BROKER_STATE_LINES.find(([, pattern]) => pattern.test(msg));
    return state ? [`${state[0]} (${level})`] : [];
  });

const report = (figures: object) =>
  process.stdout.write(`${expect.getState().currentTestName}: ${JSON.stringify(figures)}\n`);

/**
 * The broker stalled, then away for OUTAGE_MS, under concurrent UpdateAgents, on a database of its
 * own (and a service, relay and collector of its own): every write acknowledged and committed, the
 * service ready all along, each change of the broker said once, in the log and in
 * events_broker_connected, and every event published once it is back, in order.
 */
async function brokerStalledThenAway(kind: DatabaseKind): Promise<void> {
  const transactions = [8101, 8102, 8103, 8104];
  const database = await createTestDatabase(kind);
  let collector: EventCollector | undefined;
  let relay: BrokerRelay | undefined;
  let service: ServiceProcess | undefined;
  let load: WriteLoad | undefined;
  try {
    await seed(database.url, transactions);
    collector = await EventCollector.open(uniqueExchange(`event-faults.outage.${kind}`));
    const received = collector;
    relay = await BrokerRelay.start();
    service = await spawnService(database.url, {
      EVENTS_URL: relay.url,
      EVENTS_EXCHANGE: received.exchange,
    });
    const { baseUrl } = service;
    load = new WriteLoad([baseUrl], transactions, 6, 10);
    /** Waits for the events of ten more writes: the broker takes them. */
    const eventsFlow = async () => {
      const before = agentsChanged(received).length;
      expect(await received.until(() => agentsChanged(received).length >= before + 10)).toBe(true);
    };
    await eventsFlow();
    expect(await metricOf(baseUrl, 'events_broker_connected')).toBe(1);
    // Each state waited for as the dashboard shows it, so that none goes by between two scrapes.
    const gauge = watchGauge(baseUrl, 'events_broker_connected');
    const failuresBefore = await metricOf(baseUrl, 'events_publish_failures_total');

    // Silent until a publish goes unconfirmed (the relay waits 4 s for a confirm), and 6 s at
    // least: past one of the heartbeats' 5 s ticks, shorter than the 20 s they take to find a
    // broker gone, so the connection stays open.
    relay.stall();
    const stalledAt = Date.now();
    expect(await gauge.shows(0)).toBe(true);
    await sleep(Math.max(0, stalledAt + 6000 - Date.now()));
    relay.resume();
    expect(await gauge.shows(1)).toBe(true);
    const failuresOfStall =
      (await metricOf(baseUrl, 'events_publish_failures_total')) - failuresBefore;

    // Away once it confirms again (a cut after a stall once went unlogged).
    await eventsFlow();
    await relay.cut();
    const cutAt = Date.now();
    const writesBefore = load.writes;
    const readiness = new Map<number, number>();
    while (Date.now() - cutAt < OUTAGE_MS[kind]) {
      const { status } = await request(baseUrl)
        .get('/health/ready')
        .then(
          (response) => response,
          () => ({ status: 0 }),
        );
      readiness.set(status, (readiness.get(status) ?? 0) + 1);
      await sleep(250);
    }
    const writesDuringCut = load.writes - writesBefore;
    expect(await gauge.shows(0)).toBe(true);
    await relay.restore();
    const restoredAt = Date.now();
    // Nothing reaches the exchange while the relay is cut, past what was on its way at the cut.
    const receivedDuringCut = received.deliveries.filter(
      (delivery) => delivery.at > cutAt + 1000 && delivery.at < restoredAt,
    );
    expect(await gauge.shows(1)).toBe(true);
    await eventsFlow();
    const statuses = await load.stop();
    const values = await gauge.stop();

    const committed = await committedChanges(baseUrl, transactions);
    const drained = await eventsOfEveryChange(received, committed, 30_000);
    const drainMs = Date.now() - restoredAt;
    const result = reportOn(received, committed);
    const states = brokerStates(service);
    const reachable = relayLines(service).filter((line) =>
      /is reachable again/.test(line.msg ?? ''),
    );
    report({
      database: kind,
      writes: load.writes,
      writesDuringCut,
      statuses,
      readiness: Object.fromEntries(readiness),
      eventsDuringCut: receivedDuringCut.length,
      gauge: values,
      states,
      failuresOfStall,
      committedChanges: changeCount(committed),
      ...result,
      missing: result.missing.length,
      reconnectAfterReturnMs: reachable[1]?.time && Date.parse(reachable[1].time) - restoredAt,
      drainAfterReturnMs: drainMs,
    });

    load.expectEveryWriteCommitted(statuses, committed);
    expect(writesDuringCut).toBeGreaterThan(100);
    expect(readiness.get(200)).toBeGreaterThan(OUTAGE_MS[kind] / 1000);
    expect([...readiness.keys()]).toEqual([200]);
    expect(receivedDuringCut).toEqual([]);
    expect(drained).toBe(true);
    expectEveryChangeOnce(result);
    expect(values).toEqual([1, 0, 1, 0, 1]);
    expect(states).toEqual([
      'publishing (info)',
      'unconfirmed (warn)',
      'reachable again (info)',
      'unreachable (warn)',
      'reachable again (info)',
    ]);
    // Each batch the stall left unconfirmed.
    expect(failuresOfStall).toBeGreaterThanOrEqual(1);
  } finally {
    // The relay first: a service waiting for a confirm through it stops at once.
    await relay?.close();
    await load?.stop();
    await service?.stop();
    await collector?.close();
    await database.drop();
  }
}

/**
 * An instance killed (SIGKILL) while the broker has its events but has not confirmed them, on a
 * database of its own (and a relay and collector of its own): the next instance publishes every
 * one, each once or twice, under one id.
 */
async function killedBetweenCommitAndConfirm(kind: DatabaseKind): Promise<void> {
  const database = await createTestDatabase(kind);
  let collector: EventCollector | undefined;
  let relay: BrokerRelay | undefined;
  let first: ServiceProcess | undefined;
  let second: ServiceProcess | undefined;
  try {
    const transactions = [8201, 8202, 8203];
    const WRITES = 30;
    await seed(database.url, transactions);
    collector = await EventCollector.open(uniqueExchange(`event-faults.sigkill.${kind}`));
    const received = collector;
    relay = await BrokerRelay.start();
    const env = {
      EVENTS_URL: relay.url,
      EVENTS_EXCHANGE: received.exchange,
      // The relay waits up to 8 s for confirms: one attempt before the kill, not a retry.
      DATABASE_TIMEOUT_MS: '10000',
    };
    first = await spawnService(database.url, env);
    const { baseUrl } = first;
    const change = (transactionId: number, brokerid: number) =>
      request(baseUrl)
        .post(UPDATE_AGENTS)
        .send({ transaction_id: transactionId, financetype: 'Cash', brokerid })
        .expect(204);
    // A first change published and confirmed: the publisher's channel is open.
    await change(transactions[0], 199_999);
    expect(await received.until(() => agentsChanged(received).length === 1, 10_000)).toBe(true);
    // Its broker checkpoint past everything committed so far: the relay is idle, confirmed.
    const confirmed = Date.now() + 5000;
    while ((await brokerPending(first)) > 0 && Date.now() < confirmed) await sleep(50);
    expect(await brokerPending(first)).toBe(0);
    expect(await publishedBy(first)).toBeGreaterThan(0);

    // The service's frames reach the broker, which routes its events; no confirm comes back.
    relay.mute();
    for (let call = 0; call < WRITES; call += transactions.length)
      await Promise.all(
        transactions.map((transactionId, index) => change(transactionId, 200_000 + call + index)),
      );
    // The first publish has reached the broker, unconfirmed.
    expect(await received.until(() => agentsChanged(received).length > 1, 5000)).toBe(true);
    first.child.kill('SIGKILL');
    expect(await first.exit()).toEqual({ code: null, signal: 'SIGKILL' });

    // Every change committed; the broker's checkpoint is past none of them.
    const outbox = await openDatabase(database.url);
    try {
      const [{ unconfirmed }] = await outbox.query<[{ unconfirmed: number | string }]>(
        `SELECT COUNT(*) AS unconfirmed FROM event_outbox WHERE routing_key = ? AND (position IS NULL OR position > (SELECT position FROM event_checkpoint WHERE consumer = 'broker'))`,
        [AGENTS_CHANGED.routingKey],
      );
      expect(Number(unconfirmed)).toBe(WRITES);
    } finally {
      await outbox.destroy();
    }
    // What the killed instance sent has landed; the warm-up's event aside.
    await sleep(300);
    const beforeKill = agentsChanged(received).length - 1;

    relay.unmute();
    const restartedAt = Date.now();
    second = await spawnService(database.url, env);
    const committed = await committedChanges(second.baseUrl, transactions);
    expect(changeCount(committed)).toBe(WRITES + 1);
    const drained = await eventsOfEveryChange(received, committed, 20_000);
    const drainMs = Date.now() - restartedAt;
    // Anything sent twice after the restart would be in by now.
    await sleep(500);
    const result = reportOn(received, committed);
    report({
      database: kind,
      writes: WRITES,
      receivedBeforeKill: beforeKill,
      ...result,
      missing: result.missing.length,
      drainAfterRestartMs: drainMs,
    });
    expect(drained).toBe(true);
    expectEveryChangeOnce(result, { distinctIds: WRITES + 1 });
    expect(result.mostCopies).toBeLessThanOrEqual(2);
    // What reached the broker before the kill came again, under the same ids.
    expect(result.duplicates).toBe(beforeKill);
  } finally {
    // The relay first: a service waiting for a confirm through it stops at once.
    await relay?.close();
    await first?.stop();
    await second?.stop();
    await collector?.close();
    await database.drop();
  }
}

for (const kind of testDatabaseKinds()) {
  describe(`integration events under faults [${kind}]`, () => {
    let database: TestDatabase;
    let collector: EventCollector | undefined;

    beforeEach(async () => {
      database = await createTestDatabase(kind);
    });

    afterEach(async () => {
      await collector?.close();
      collector = undefined;
      await database?.drop();
    });

    it('counts the events the broker returns for want of a bound queue in events_unroutable_total, and only those', async () => {
      const exchange = uniqueExchange('event-faults.unroutable');
      const running = await RunningApp.start(database.url, {
        ...EVENT_ENV,
        EVENTS_URL: TEST_BROKER_URL,
        EVENTS_EXCHANGE: exchange,
      });
      try {
        const metric = (name: string) => metricOf(running.baseUrl, name);
        // The service declares the exchange; nobody binds a queue to it yet.
        await running.seed({ requirements: CATALOGUE, transactions: [transactionRecord(8601)] });
        const update = (brokerid: number) =>
          running.http
            .post(UPDATE_AGENTS)
            .send({ transaction_id: 8601, financetype: 'Cash', brokerid })
            .expect(204);
        // Every event committed so far, the reacting module's among them, confirmed (the broker's
        // checkpoint past it) and nothing more to come: its count.
        const committedEvents = async () => {
          await relayIdle(running);
          const [{ events }] = await running.app
            .get(DataSource)
            .query<[{ events: number | string }]>('SELECT COUNT(*) AS events FROM event_outbox');
          return Number(events);
        };
        for (let call = 0; call < 20; call++) await update(300_000 + call);
        // The import's event and the twenty changes, and the reacting module's recomputation and
        // splits after them, every one returned: the broker returns before it confirms.
        const unbound = await committedEvents();
        expect(unbound).toBeGreaterThan(21);
        expect(await metric('events_published_total')).toBe(unbound);
        expect(await metric('events_unroutable_total')).toBe(unbound);

        collector = await EventCollector.open(exchange);
        for (let call = 0; call < 5; call++) await update(310_000 + call);
        const routed = (await committedEvents()) - unbound;
        expect(await collector.until(() => collector!.deliveries.length === routed)).toBe(true);
        expect(agentsChanged(collector)).toHaveLength(5);
        expect(await metric('events_published_total')).toBe(unbound + routed);
        expect(await metric('events_unroutable_total')).toBe(unbound);
      } finally {
        await running.close();
        // Its close deletes the exchange.
        collector ??= await EventCollector.open(exchange);
      }
    }, 60_000);

    it('publishes nothing for a write that is refused or rolled back, or that changes nothing', async () => {
      const [OPEN, LOCKED] = [8401, 8402];
      collector = await EventCollector.open(uniqueExchange('event-faults.refused'));
      const running = await RunningApp.start(database.url, {
        ...EVENT_ENV,
        EVENTS_URL: TEST_BROKER_URL,
        EVENTS_EXCHANGE: collector.exchange,
        DATABASE_TIMEOUT_MS: '1500',
      });
      try {
        await running.seed({
          requirements: CATALOGUE,
          transactions: [transactionRecord(OPEN), transactionRecord(LOCKED, { locked: true })],
        });
        const update = (body: object) =>
          running.http.post(UPDATE_AGENTS).send({ financetype: 'Cash', ...body });
        // The import's own event: the relay publishes.
        expect(await collector.until(() => collector!.deliveries.length > 0, 10_000)).toBe(true);

        await update({ transaction_id: LOCKED, brokerid: 99 }).expect(409);
        await update({ transaction_id: OPEN, brokerid: 99 })
          .set('If-Match', `"${OPEN}.99"`)
          .expect(412);
        await update({ transaction_id: OPEN, brokerid: 'not a number' }).expect(400);
        await update({ transaction_id: 404_404, brokerid: 99 }).expect(404);
        // The values it already has.
        await update({ transaction_id: OPEN, brokerid: 11, brokername: 'Ramon Dela Cruz' }).expect(
          204,
        );
        if (kind === 'mariadb') {
          // Its request answered 503 while another session held the row; once the row is free its
          // unit goes on, and rolls back instead of committing late.
          const holder = await createConnection({
            uri: database.url.replace(/^mariadb:/, 'mysql:'),
          });
          try {
            await holder.query('START TRANSACTION');
            await holder.query(
              'SELECT * FROM sales_transaction WHERE transaction_id = ? FOR UPDATE',
              [OPEN],
            );
            await update({ transaction_id: OPEN, brokerid: 98 }).expect(503);
          } finally {
            await holder.query('ROLLBACK');
            await holder.end();
          }
          await sleep(500);
        }
        // The one real change, after all of them: once its event is in, theirs would have been.
        await update({ transaction_id: OPEN, directorid: 5 }).expect(204);
        expect(await collector.until(() => agentsChanged(collector!).length > 0, 10_000)).toBe(
          true,
        );
        await sleep(500);

        const history = (await running.http.get(getAgentHistoryPath(OPEN)).expect(200))
          .body as unknown[];
        expect(history).toHaveLength(1);
        expect(
          agentsChanged(collector).map((delivery) => ({
            subject: delivery.event.subject,
            rowVersion: rowVersionOf(delivery),
          })),
        ).toEqual([{ subject: String(OPEN), rowVersion: 2 }]);
        // The reacting module's events follow the accepted change alone.
        expect(
          await collector.until(
            () => collector!.deliveries.some(({ event }) => event.type === SPLITS_CHANGED),
            10_000,
          ),
        ).toBe(true);
        await sleep(500);
        expect(
          collector.deliveries
            .filter(({ event }) => !event.type.startsWith('property-sales.test-ledger.'))
            .map(({ event }) => event.type),
        ).toEqual(['property-sales.data.imported', AGENTS_CHANGED.type]);
        expect(
          collector.deliveries
            .filter(({ event }) => event.type === SPLITS_CHANGED)
            .map(({ event }) => ({ subject: event.subject, rowVersion: event.data?.row_version })),
        ).toEqual([{ subject: String(OPEN), rowVersion: 2 }]);
        // The outbox holds that change's event alone.
        const [{ stored }] = await running.app
          .get(DataSource)
          .query<[{ stored: number | string }]>(
            'SELECT COUNT(*) AS stored FROM event_outbox WHERE routing_key = ?',
            [AGENTS_CHANGED.routingKey],
          );
        expect(Number(stored)).toBe(1);
      } finally {
        await running.close();
      }
    }, 60_000);
  });
}

describe('integration events under faults, on each database at once', () => {
  afterEach(stopLoadsAndServices);

  const outages = testDatabaseKinds()
    .map((kind) => `${OUTAGE_MS[kind] / 1000} s on ${kind}`)
    .join(', ');
  it(
    `loses no event and refuses no write under concurrent UpdateAgents while the broker stalls, then is away (${outages}), and says each change of it once, in the log and in events_broker_connected`,
    () => onEachDatabaseAtOnce(brokerStalledThenAway),
    180_000,
  );

  it(
    'publishes an event whose instance was killed (SIGKILL) between commit and confirm after the restart: once or twice, with one id',
    () => onEachDatabaseAtOnce(killedBetweenCommitAndConfirm),
    90_000,
  );
});

describeOnMariaDb('integration events from two instances on one MariaDB', () => {
  let database: TestDatabase;
  let collector: EventCollector | undefined;
  const kind: DatabaseKind = 'mariadb';

  beforeAll(async () => {
    database = await createTestDatabase(kind);
  });

  afterAll(async () => {
    await stopLoadsAndServices();
    await collector?.close();
    await database?.drop();
  });

  it('publishes every change made through either instance, each transaction in order', async () => {
    const transactions = [8301, 8302, 8303, 8304, 8305];
    await seed(database.url, transactions);
    collector = await EventCollector.open(uniqueExchange('event-faults.two-instances'));
    const env = { EVENTS_URL: TEST_BROKER_URL, EVENTS_EXCHANGE: collector.exchange };
    const instances = await Promise.all([
      spawnService(database.url, env),
      spawnService(database.url, env),
    ]);
    const load = new WriteLoad(
      instances.map((instance) => instance.baseUrl),
      transactions,
      8,
    );
    // Hundreds of changes through the two, their relays publishing from the one outbox meanwhile.
    expect(
      await eventually(
        () => Promise.resolve(load.writes),
        (writes) => writes >= 400,
      ),
    ).toBe(true);
    const statuses = await load.stop();
    const stoppedAt = Date.now();

    const committed = await committedChanges(instances[0].baseUrl, transactions);
    const drained = await eventsOfEveryChange(collector, committed, 20_000);
    const drainMs = Date.now() - stoppedAt;
    const result = reportOn(collector, committed);
    const published = await Promise.all(instances.map((instance) => publishedBy(instance)));
    report({
      writes: load.writes,
      statuses,
      committedChanges: changeCount(committed),
      ...result,
      missing: result.missing.length,
      publishedByEachInstance: published,
      drainAfterLoadMs: drainMs,
    });
    load.expectEveryWriteCommitted(statuses, committed);
    expect(drained).toBe(true);
    expectEveryChangeOnce(result);
  }, 90_000);
});
