import { type INestApplication } from '@nestjs/common';
import { type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { LINE_OPTIONS } from '../src/logging/line-options';
import request, { type Response } from 'supertest';
import { createApp } from '../src/app.factory';
import { loadAppConfig } from '../src/config/app-config';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { expectNoLeak, expectProblem } from './support/http-assertions';
import { PrivateMariaDb } from './support/private-mariadb';
import { describeOnMariaDb, seedApp } from './support/test-app';
import {
  getAgentHistoryPath,
  getTransactionPath,
  UPDATE_AGENTS,
  type WireBody,
} from './support/update-agents-cases';

/**
 * Read replicas that fail, on real servers: a private MariaDB primary (binary log on) and a private
 * MariaDB replica replicating from it (GTID), both started by this file and stopped at its end. A
 * replica whose replication is stopped, or that applies the primary's writes late (MASTER_DELAY), is
 * left out once it is further behind than DATABASE_REPLICA_MAX_LAG_SECONDS, so that a read after a
 * write does not go back in time by more than that; a replica that is killed (SIGKILL) is left out at
 * once. Meanwhile reads go to the primary (200), or with DATABASE_REPLICA_FALLBACK=none are refused
 * (503); /metrics, /health/ready and the log say so, and the replica takes reads again once it is back
 * and caught up. Skipped only when TEST_DATABASES leaves MariaDB out; without mariadbd it fails.
 */

const TRANSACTION = 6161;
const DATABASE = 'sales';
const DATABASE_TIMEOUT_MS = 2000;
const CHECK_MS = 200;
const RETRY_MS = 500;
const MAX_LAG_SECONDS = 1;
/** What a busy machine (two cores, other suites) may add to a check's interval. */
const SLACK_MS = 1500;
/** How long after its replication stops a replica may still answer a read: until its next check. */
const STOPPED_BOUND_MS = CHECK_MS + SLACK_MS;
/**
 * The longest a read may be stale after a write to a replica that applies it late: the bound, plus
 * the second Seconds_Behind_Master rounds down, plus a check interval.
 */
const STALE_BOUND_MS = (MAX_LAG_SECONDS + 1) * 1000 + CHECK_MS + SLACK_MS;
/** How long a change of a replica's state may take to show. */
const NOTICE_MS = 10000;

/** The primary's: a binary log for the replica to read (after SERVER_OPTIONS' --skip-log-bin). */
const PRIMARY_OPTIONS = ['--log-bin=primary-bin', '--server-id=1', '--binlog-format=ROW'];
const REPLICA_OPTIONS = ['--server-id=2', '--relay-log=replica-relay-bin'];

interface LogLine {
  readonly level: string;
  readonly msg?: string;
  readonly context?: string;
}

/** Every line the services of this file logged, as JSON: the replicas' lines say `ReadReplicas`. */
const logged: LogLine[] = [];
const rootLogger = pino(
  { ...LINE_OPTIONS, level: 'info' },
  { write: (line: string) => void logged.push(JSON.parse(line) as LogLine) },
);
const replicaLines = (since: number) =>
  logged.slice(since).filter((line) => line.context === 'ReadReplicas');

/**
 * The service in this process, logging into `logged`. The first application a process starts sets
 * the logger of lines logged outside a request (nestjs-pino's root), and one started with `logger:
 * false` (RunningApp) silences the framework's: every service of this file is one of these.
 */
class Service {
  private constructor(
    readonly app: INestApplication,
    readonly baseUrl: string,
  ) {}

  static async start(env: Record<string, string>): Promise<Service> {
    const config = loadAppConfig({
      DEMO_DATA: 'false',
      MIGRATIONS_RUN: 'true',
      LOG_LEVEL: 'info',
      AUTH_MODE: 'none',
      DATABASE_TIMEOUT_MS: String(DATABASE_TIMEOUT_MS),
      DATABASE_NODE_CHECK_MS: String(CHECK_MS),
      DATABASE_REPLICA_RETRY_MS: String(RETRY_MS),
      DATABASE_REPLICA_MAX_LAG_SECONDS: String(MAX_LAG_SECONDS),
      ...env,
    });
    const app = await createApp(config, { rootLogger });
    await app.listen(0, '127.0.0.1');
    const { port } = (app.getHttpServer() as Server).address() as AddressInfo;
    return new Service(app, `http://127.0.0.1:${port}`);
  }

  get http() {
    return request(this.baseUrl);
  }

  close(): Promise<void> {
    return this.app.close();
  }
}

interface ReplicaDetail {
  readonly replica: string;
  readonly state: string;
  readonly lagSeconds?: number | null;
  readonly reason?: string;
}

interface DatabaseDetail {
  readonly status: string;
  readonly reads: string;
  readonly replicas: ReplicaDetail[];
}

/** The database details of /health/ready, which answers 200 whatever the replicas do. */
async function readiness(service: Service): Promise<DatabaseDetail> {
  const response = await service.http.get('/health/ready');
  expect({ status: response.status, text: response.text }).toMatchObject({ status: 200 });
  return (response.body as { info: { database: DatabaseDetail } }).info.database;
}

/** Polls readiness until `done` holds of its database details; fails after NOTICE_MS. */
async function until(
  service: Service,
  what: string,
  done: (detail: DatabaseDetail) => boolean,
): Promise<DatabaseDetail> {
  const deadline = Date.now() + NOTICE_MS;
  let detail = await readiness(service);
  while (!done(detail)) {
    if (Date.now() > deadline)
      throw new Error(`Not ${what} within ${NOTICE_MS} ms: ${JSON.stringify(detail)}`);
    await sleep(50);
    detail = await readiness(service);
  }
  return detail;
}

/** The samples of /metrics whose names start with `database_replica`, as `name{labels} value`. */
async function replicaMetrics(service: Service): Promise<string[]> {
  const response = await service.http.get('/metrics').expect(200);
  return response.text.split('\n').filter((line) => line.startsWith('database_replica'));
}

let updates = 0;
/** Sends UpdateAgents with a broker name of its own; the name it wrote. */
async function write(service: Service): Promise<string> {
  const body: WireBody = {
    transaction_id: TRANSACTION,
    financetype: 'Cash',
    brokerid: 7000 + ++updates,
    brokername: `Replica Fault Broker ${updates}`,
  };
  const response = await service.http
    .post(UPDATE_AGENTS)
    .set('Content-Type', 'application/json')
    .send(JSON.stringify(body));
  expect({ status: response.status, text: response.text }).toEqual({ status: 204, text: '' });
  return body.brokername as string;
}

/** The broker name GetTransaction answers with. */
async function brokerRead(service: Service): Promise<string> {
  const response = await service.http.get(getTransactionPath(TRANSACTION));
  expect({ status: response.status, text: response.text }).toMatchObject({ status: 200 });
  return (response.body as { brokername: string }).brokername;
}

/**
 * Reads GetTransaction until it answers `written`; a stale answer more than `boundMs` after `from`
 * fails the test (today's main answered stale as long as the replica lagged).
 */
async function readUntilFresh(
  service: Service,
  written: string,
  from: number,
  boundMs: number,
): Promise<void> {
  for (;;) {
    const elapsed = performance.now() - from;
    if ((await brokerRead(service)) === written) return;
    expect({ staleAfterMs: Math.round(elapsed), withinBound: elapsed <= boundMs }).toMatchObject({
      withinBound: true,
    });
    await sleep(50);
  }
}

/** The broker name a server holds itself, asked directly. */
async function brokerOn(server: PrivateMariaDb): Promise<string | undefined> {
  const [rows] = (await server.query(
    `SELECT brokername FROM \`${DATABASE}\`.sales_transaction WHERE transaction_id = ${TRANSACTION}`,
  )) as [{ brokername: string }[]];
  return rows[0]?.brokername;
}

/** SELECT statements the server has run: those of reads sent to it. */
async function selectsOn(server: PrivateMariaDb): Promise<number> {
  const [rows] = (await server.query("SHOW GLOBAL STATUS LIKE 'Com_select'")) as [
    { Value: string }[],
  ];
  return Number(rows[0].Value);
}

/** Whether `read` was answered by the replica: it ran SELECTs meanwhile. */
async function onReplica<T>(
  replica: PrivateMariaDb,
  read: () => Promise<T>,
): Promise<{ value: T; replica: boolean }> {
  const before = await selectsOn(replica);
  const value = await read();
  return { value, replica: (await selectsOn(replica)) > before };
}

describeOnMariaDb('read replicas that fail, on a real primary and replica (MariaDB)', () => {
  let primary: PrivateMariaDb;
  let replica: PrivateMariaDb;
  let service: Service;
  let address: string;

  /** Points the replica at the primary, from the primary's first binlog event, and starts it. */
  async function replicate(): Promise<void> {
    await replica.query(
      `CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = ${primary.port}, MASTER_USER = 'root', MASTER_PASSWORD = '', MASTER_CONNECT_RETRY = 1, MASTER_USE_GTID = slave_pos`,
      'START SLAVE',
    );
  }

  /** Waits until both replication threads of the replica run, and the service's checks saw it. */
  async function replicating(): Promise<void> {
    const deadline = Date.now() + NOTICE_MS;
    for (;;) {
      const [[status]] = (await replica.query('SHOW SLAVE STATUS')) as [Record<string, string>[]];
      if (status?.Slave_IO_Running === 'Yes' && status.Slave_SQL_Running === 'Yes') break;
      if (Date.now() > deadline)
        throw new Error(`The replica does not replicate:\n${await replica.log()}`);
      await sleep(50);
    }
    await sleep(3 * CHECK_MS);
  }

  /** Waits until the replica holds what the primary holds of the transaction. */
  async function caughtUp(): Promise<void> {
    const deadline = Date.now() + NOTICE_MS;
    while ((await brokerOn(replica).catch(() => undefined)) !== (await brokerOn(primary))) {
      if (Date.now() > deadline)
        throw new Error(`The replica did not catch up:\n${await replica.log()}`);
      await sleep(50);
    }
  }

  beforeAll(async () => {
    // Both settle before a failure is thrown, so that afterAll removes whichever was made.
    const [made, madeToo] = await Promise.allSettled([
      PrivateMariaDb.prepare({ serverOptions: PRIMARY_OPTIONS }),
      PrivateMariaDb.prepare({ serverOptions: REPLICA_OPTIONS }),
    ]);
    if (made.status === 'fulfilled') primary = made.value;
    if (madeToo.status === 'fulfilled') replica = madeToo.value;
    for (const result of [made, madeToo]) if (result.status === 'rejected') throw result.reason;
    for (const result of await Promise.allSettled([primary.start(), replica.start()]))
      if (result.status === 'rejected') throw result.reason;
    // The binary log starts empty: the replica reads everything after, from the database on.
    await primary.query('RESET MASTER');
    await replicate();
    address = `127.0.0.1:${replica.port}`;
    // It builds the schema on the primary (MIGRATIONS_RUN), and the replica follows.
    service = await Service.start({
      DATABASE_URL: await primary.createDatabase(DATABASE),
      DATABASE_READ_URLS: replica.urlFor(DATABASE),
    });
    await seedApp(service.app, {
      requirements: CATALOGUE,
      transactions: [transactionRecord(TRANSACTION)],
    });
    await caughtUp();
  }, 90000);

  afterAll(async () => {
    await service?.close();
    await Promise.allSettled([primary?.destroy(), replica?.destroy()]);
  });

  it('serves plain reads from the replica while it is caught up, and says so', async () => {
    const detail = await until(
      service,
      'serving, caught up',
      (d) => d.replicas[0]?.lagSeconds === 0,
    );
    expect(detail).toMatchObject({
      status: 'up',
      reads: 'replicas',
      replicas: [{ replica: address, state: 'serving', lagSeconds: 0 }],
    });
    const read = await onReplica(replica, () => brokerRead(service));
    expect(read).toEqual({ value: 'Ramon Dela Cruz', replica: true });
    expect(await replicaMetrics(service)).toEqual(
      expect.arrayContaining([
        `database_replica_serving{replica="${address}"} 1`,
        expect.stringMatching(`^database_replica_lag_seconds\\{replica="${address}"\\} [01]$`),
        'database_replica_fallback 0',
      ]),
    );
  });

  it('leaves out a replica whose replication stopped: a read right after a write sees it, from the primary', async () => {
    const since = logged.length;
    await replica.query('STOP SLAVE SQL_THREAD');
    const stoppedAt = performance.now();
    const written = await write(service);
    // The replica will not apply it: a read may meet the replica only until its next check.
    await readUntilFresh(service, written, stoppedAt, STOPPED_BOUND_MS);
    for (let read = 0; read < 5; read++) expect(await brokerRead(service)).toBe(written);
    // The replica has not applied it: the reads went to the primary.
    expect(await brokerOn(replica)).not.toBe(written);

    expect(await readiness(service)).toMatchObject({
      reads: 'primary',
      replicas: [
        {
          replica: address,
          state: 'lagging',
          lagSeconds: null,
          reason: expect.stringMatching(/replication is stopped/) as string,
        },
      ],
    });
    const metrics = await replicaMetrics(service);
    expect(metrics).toEqual(
      expect.arrayContaining([
        `database_replica_serving{replica="${address}"} 0`,
        'database_replica_fallback 1',
      ]),
    );
    // Its lag is not known while its replication is stopped: no sample rather than a made-up one.
    expect(metrics.filter((line) => line.startsWith('database_replica_lag_seconds'))).toEqual([]);

    await replica.query('START SLAVE SQL_THREAD');
    await until(service, 'serving again', (d) => d.reads === 'replicas');
    await caughtUp();
    expect(await onReplica(replica, () => brokerRead(service))).toEqual({
      value: written,
      replica: true,
    });
    expect(replicaLines(since).map((line) => [line.level, line.msg])).toEqual([
      [
        'warn',
        expect.stringMatching(`^Read replica ${address} is left out: its replication is stopped`),
      ],
      ['warn', expect.stringMatching(/^No read replica serves: reads go to the primary/)],
      [
        'info',
        expect.stringMatching(
          `^Read replica ${address} serves again \\(\\d+ s behind its primary\\)\\.$`,
        ),
      ],
      ['info', expect.stringMatching(/^Read replicas serve again/)],
    ]);
  });

  it('leaves out a replica further behind than DATABASE_REPLICA_MAX_LAG_SECONDS: no read goes back in time by more', async () => {
    // The replica applies each of the primary's writes a minute late.
    await replica.query('STOP SLAVE', 'CHANGE MASTER TO MASTER_DELAY = 60', 'START SLAVE');
    // A check may have found the replication stopped for that moment: let it see it running again.
    await replicating();
    const since = logged.length;

    const written = await write(service);
    await readUntilFresh(service, written, performance.now(), STALE_BOUND_MS);
    // From then on every read sees the write: the replica is left out, and still lacks it.
    for (let read = 0; read < 10; read++) expect(await brokerRead(service)).toBe(written);
    expect(await brokerOn(replica)).not.toBe(written);
    const detail = await readiness(service);
    expect(detail).toMatchObject({
      reads: 'primary',
      replicas: [
        {
          replica: address,
          state: 'lagging',
          reason: expect.stringMatching(/behind its primary/) as string,
        },
      ],
    });
    expect(detail.replicas[0].lagSeconds).toBeGreaterThan(MAX_LAG_SECONDS);
    const lag = (await replicaMetrics(service)).find((line) =>
      line.startsWith(`database_replica_lag_seconds{replica="${address}"}`),
    );
    expect(Number(lag?.split(' ')[1])).toBeGreaterThan(MAX_LAG_SECONDS);

    // Caught up, it takes reads again, and they see the write.
    await replica.query('STOP SLAVE', 'CHANGE MASTER TO MASTER_DELAY = 0', 'START SLAVE');
    await caughtUp();
    await until(service, 'serving again', (d) => d.reads === 'replicas');
    expect(await onReplica(replica, () => brokerRead(service))).toEqual({
      value: written,
      replica: true,
    });
    expect(replicaLines(since).map((line) => line.msg)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^Read replica ${address} is left out: \\d+ s behind its primary, more than DATABASE_REPLICA_MAX_LAG_SECONDS \\(1 s\\)`,
        ),
      ),
      expect.stringMatching(/^No read replica serves: reads go to the primary/),
      expect.stringMatching(`^Read replica ${address} serves again`),
      expect.stringMatching(/^Read replicas serve again/),
    ]);
  });

  it('serves from a replica whose account may not ask its lag, and says once which grant it needs', async () => {
    // Created on the primary, the account reaches the replica through replication.
    await primary.query(
      "CREATE USER 'reader'@'%' IDENTIFIED BY 'reader-secret'",
      `GRANT SELECT ON \`${DATABASE}\`.* TO 'reader'@'%'`,
    );
    const deadline = Date.now() + NOTICE_MS;
    while (
      (
        (await replica.query("SELECT COUNT(*) AS n FROM mysql.user WHERE User = 'reader'")) as [
          { n: number }[],
        ]
      )[0][0].n === 0
    ) {
      if (Date.now() > deadline) throw new Error('The account did not reach the replica');
      await sleep(50);
    }
    const url = new URL(replica.urlFor(DATABASE));
    url.username = 'reader';
    url.password = 'reader-secret';
    const since = logged.length;
    const limited = await Service.start({
      DATABASE_URL: primary.urlFor(DATABASE),
      DATABASE_READ_URLS: url.toString(),
    });
    try {
      // Several checks: the line comes once.
      await sleep(5 * CHECK_MS);
      const detail = await readiness(limited);
      expect(detail).toMatchObject({ reads: 'replicas' });
      expect(detail.replicas).toEqual([{ replica: address, state: 'serving' }]);
      expect(await onReplica(replica, () => brokerRead(limited))).toMatchObject({ replica: true });
      expect(
        (await replicaMetrics(limited)).filter((line) =>
          line.startsWith('database_replica_lag_seconds'),
        ),
      ).toEqual([]);
      expect(replicaLines(since).map((line) => [line.level, line.msg])).toEqual([
        [
          'warn',
          expect.stringMatching(
            new RegExp(
              `^The replication lag of read replica ${address} cannot be checked \\(Access denied.*\\): it takes reads whatever its lag\\. Grant its account REPLICA MONITOR`,
            ),
          ),
        ],
      ]);
    } finally {
      await limited.close();
    }
  });

  describe('a replica that is killed', () => {
    let since: number;

    beforeAll(async () => {
      await replicating();
      since = logged.length;
      await replica.kill();
    });

    it('leaves reads to the primary at once (200), with writes going on, and says so once', async () => {
      const reads: ReadonlyArray<[string, string]> = [
        ['GetTransaction', getTransactionPath(TRANSACTION)],
        ['GetAgentHistory', getAgentHistoryPath(TRANSACTION)],
        ['ListTransactions', '/api/Transaction/ListTransactions'],
      ];
      for (let round = 0; round < 3; round++) {
        for (const [name, path] of reads) {
          const started = performance.now();
          const response = await service.http.get(path);
          const ms = performance.now() - started;
          expect({ name, status: response.status, fast: ms < DATABASE_TIMEOUT_MS }).toEqual({
            name,
            status: 200,
            fast: true,
          });
        }
      }
      const written = await write(service);
      expect(await brokerRead(service)).toBe(written);

      expect(await readiness(service)).toMatchObject({
        status: 'up',
        reads: 'primary',
        replicas: [{ replica: address, state: 'out', reason: expect.any(String) as string }],
      });
      expect(await replicaMetrics(service)).toEqual(
        expect.arrayContaining([
          `database_replica_serving{replica="${address}"} 0`,
          'database_replica_fallback 1',
        ]),
      );
      // Ten reads and a few checks later: one line for the replica, one for the reads.
      expect(replicaLines(since).map((line) => [line.level, line.msg])).toEqual([
        ['warn', expect.stringMatching(`^Read replica ${address} is out: `)],
        ['warn', expect.stringMatching(/^No read replica serves: reads go to the primary/)],
      ]);
    });

    it('answers reads 503 with Retry-After at once with DATABASE_REPLICA_FALLBACK=none, writes going on', async () => {
      const strict = await Service.start({
        DATABASE_URL: primary.urlFor(DATABASE),
        DATABASE_READ_URLS: replica.urlFor(DATABASE),
        DATABASE_REPLICA_FALLBACK: 'none',
      });
      try {
        for (const path of [getTransactionPath(TRANSACTION), getAgentHistoryPath(TRANSACTION)]) {
          const started = performance.now();
          const response: Response = await strict.http.get(path);
          expect({ path, status: response.status }).toEqual({ path, status: 503 });
          expect(performance.now() - started).toBeLessThan(DATABASE_TIMEOUT_MS);
          const body = expectProblem(response, 503, { modelState: false });
          expect(body.type).toMatch(/database_unavailable$/);
          expect(response.headers['retry-after']).toMatch(/^[1-9]\d*$/);
          expectNoLeak(response.text);
          expect(response.text).not.toMatch(/ECONN|POOL_|replica|127\.0\.0\.1/i);
        }
        const written = await write(strict);
        expect(await brokerOn(primary)).toBe(written);
        expect(await readiness(strict)).toMatchObject({
          status: 'up',
          reads: 'refused',
          replicas: [{ replica: address, state: 'out' }],
        });
        expect(await replicaMetrics(strict)).toEqual(
          expect.arrayContaining([
            `database_replica_serving{replica="${address}"} 0`,
            'database_replica_fallback 0',
          ]),
        );
        expect(logged.some((line) => /reads are refused \(503\)/.test(line.msg ?? ''))).toBe(true);
      } finally {
        await strict.close();
      }
    });

    it('takes reads on the replica again once it is back and caught up', async () => {
      const restarted = logged.length;
      await replica.start();
      await caughtUp();
      await until(service, 'serving again', (d) => d.reads === 'replicas');
      const latest = await brokerOn(primary);
      const deadline = Date.now() + NOTICE_MS;
      let read = await onReplica(replica, () => brokerRead(service));
      while (!(read.replica && read.value === latest) && Date.now() < deadline) {
        await sleep(50);
        read = await onReplica(replica, () => brokerRead(service));
      }
      expect(read).toEqual({ value: latest, replica: true });
      expect(replicaLines(restarted).map((line) => line.msg)).toEqual(
        expect.arrayContaining([
          expect.stringMatching(`^Read replica ${address} serves again`),
          expect.stringMatching(/^Read replicas serve again/),
        ]),
      );
    });
  });
});
