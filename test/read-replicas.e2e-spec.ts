import { createConnection } from 'mysql2/promise';
import { randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Response, type Test } from 'supertest';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { expectNoLeak, expectProblem } from './support/http-assertions';
import { freePort } from './support/processes';
import { describeOnMariaDb, RunningApp } from './support/test-app';
import { createTestDatabase, MARIADB_SERVER_URL, type TestDatabase } from './support/test-database';
import {
  changesOf,
  getAgentHistoryPath,
  getTransactionPath,
  UPDATE_AGENTS,
  type WireBody,
} from './support/update-agents-cases';

/**
 * DATABASE_READ_URLS on MariaDB: plain reads go to a replica, writes to the primary, and with
 * DATABASE_REPLICA_FALLBACK=none a replica that does not answer costs reads a clean 503, never the
 * writes, until it answers again (by default reads fall back to the primary meanwhile: see
 * replica-faults.e2e-spec.ts, with real replication). The "replica" is the test database itself,
 * reached through a SELECT-only account (so a write sent to it would fail) or through a port this file
 * opens and closes. MariaDB must be running (TEST_DATABASE_URL, by default 127.0.0.1:3306): without it
 * this file fails. It is skipped only when TEST_DATABASES leaves MariaDB out.
 */

const TRANSACTION = 5151;
const DATABASE_TIMEOUT_MS = 2000;
const REPLICA_RETRY_MS = 1000;

/** The MariaDB server as mysql2 reads a URL, with the database (or none) given. */
const adminUrl = (database = '') => {
  const url = new URL(MARIADB_SERVER_URL.replace(/^mariadb:/, 'mysql:'));
  url.pathname = `/${database}`;
  return url.toString();
};

/** Runs statements on a fresh connection to the server as the administrator. */
async function admin<T = unknown>(sql: string, values: unknown[] = []): Promise<T> {
  const connection = await createConnection({ uri: adminUrl() });
  try {
    return (await connection.query(sql, values))[0] as T;
  } finally {
    await connection.end();
  }
}

const databaseNameOf = (database: TestDatabase) => new URL(database.url).pathname.slice(1);

/** The test database's URL with other credentials or another port: a replica's URL. */
function replicaUrl(
  database: TestDatabase,
  change: { user?: string; password?: string; port?: number },
): string {
  const url = new URL(database.url);
  if (change.user !== undefined) url.username = change.user;
  if (change.password !== undefined) url.password = change.password;
  if (change.port !== undefined) url.port = String(change.port);
  return url.toString();
}

async function timed(call: () => Test): Promise<{ response: Response; ms: number }> {
  const started = performance.now();
  const response = await call();
  return { response, ms: performance.now() - started };
}

let updates = 0;
const updateBody = (): WireBody => ({
  transaction_id: TRANSACTION,
  financetype: 'Cash',
  brokerid: 9000 + ++updates,
  brokername: `Replica Broker ${updates}`,
});

const sendUpdate = (running: RunningApp, body: WireBody, ifMatch?: string) => {
  const call = running.http.post(UPDATE_AGENTS).set('Content-Type', 'application/json');
  return (ifMatch === undefined ? call : call.set('If-Match', ifMatch)).send(JSON.stringify(body));
};

/** 503 with Retry-After and nothing of the driver, well before DATABASE_TIMEOUT_MS. */
function expectFastUnavailable(name: string, { response, ms }: { response: Response; ms: number }) {
  expect({ name, status: response.status }).toEqual({ name, status: 503 });
  const body = expectProblem(response, 503, { modelState: false });
  expect(body.type).toMatch(/database_unavailable$/);
  expect(response.headers['retry-after']).toMatch(/^[1-9]\d*$/);
  expectNoLeak(response.text);
  expect(response.text).not.toMatch(/ECONN|POOL_|Pool does|127\.0\.0\.1|online node/i);
  // Refused at once: the cluster knows the replica is away, the request does not wait on a timeout.
  expect({ name, withinBound: ms < DATABASE_TIMEOUT_MS, ms }).toMatchObject({
    name,
    withinBound: true,
  });
}

/** A TCP port that forwards to the MariaDB server while open: a replica that can go away and return. */
class Forwarder {
  private server?: Server;
  private readonly sockets = new Set<Socket>();

  constructor(readonly port: number) {}

  async open(): Promise<void> {
    const target = new URL(MARIADB_SERVER_URL);
    const server = createServer((client) => {
      const upstream = connect(Number(target.port || 3306), target.hostname);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.once('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describeOnMariaDb('read replicas (DATABASE_READ_URLS) on MariaDB', () => {
  let database: TestDatabase;
  let databaseName: string;

  beforeAll(async () => {
    database = await createTestDatabase('mariadb');
    databaseName = databaseNameOf(database);
    // The schema and data, once: every service below reads and writes the same rows.
    const seeder = await RunningApp.start(database.url);
    try {
      await seeder.seed({
        requirements: CATALOGUE,
        transactions: [transactionRecord(TRANSACTION)],
      });
    } finally {
      await seeder.close();
    }
  });

  afterAll(async () => {
    await database?.drop();
  });

  describe('a replica that answers: the same database through a SELECT-only account', () => {
    const user = `ps_ro_${randomBytes(4).toString('hex')}`;
    const password = randomBytes(12).toString('hex');
    let running: RunningApp;

    /** Connections the service holds open as the replica's account. */
    const replicaConnections = async () =>
      (
        await admin<Array<{ connections: number }>>(
          'SELECT COUNT(*) AS connections FROM information_schema.PROCESSLIST WHERE USER = ? AND DB = ?',
          [user, databaseName],
        )
      )[0].connections;

    beforeAll(async () => {
      await admin(`CREATE USER ?@'%' IDENTIFIED BY ?`, [user, password]);
      await admin(`GRANT SELECT ON \`${databaseName}\`.* TO ?@'%'`, [user]);
      running = await RunningApp.start(database.url, {
        DATABASE_READ_URLS: replicaUrl(database, { user, password }),
        DATABASE_TIMEOUT_MS: String(DATABASE_TIMEOUT_MS),
      });
    });

    afterAll(async () => {
      try {
        await running?.close();
      } finally {
        await admin(`DROP USER IF EXISTS ?@'%'`, [user]);
      }
    });

    it('serves GetTransaction and GetAgentHistory from the replica', async () => {
      // The replica is checked from the start: it answers, but its account may not ask how far
      // behind it is (SHOW SLAVE STATUS needs REPLICA MONITOR), so it serves with its lag unknown.
      const ready = await running.http.get('/health/ready').expect(200);
      expect(ready.body.info.database).toMatchObject({
        reads: 'replicas',
        replicas: [{ replica: expect.stringMatching(/:\d+$/), state: 'serving' }],
      });
      expect(ready.body.info.database.replicas[0]).not.toHaveProperty('lagSeconds');
      // Starting connects to the primary; the replica's checks have a connection of their own.
      expect(await replicaConnections()).toBe(1);
      const read = await running.http.get(getTransactionPath(TRANSACTION)).expect(200);
      expect(read.body).toMatchObject({
        transaction_id: TRANSACTION,
        brokername: 'Ramon Dela Cruz',
      });
      expect(read.headers.etag).toMatch(/^"5151\.\d+"$/);
      const history = await running.http.get(getAgentHistoryPath(TRANSACTION)).expect(200);
      expect(history.body).toEqual([]);
      // The reads took pooled connections of the replica.
      expect(await replicaConnections()).toBeGreaterThan(1);
    });

    it('applies UpdateAgents on the primary, and a read right after it sees the write', async () => {
      const before = await running.http.get(getTransactionPath(TRANSACTION)).expect(200);
      const body = updateBody();
      // The SELECT-only account could not have written this: the write went to the primary.
      const response = await sendUpdate(running, body, String(before.headers.etag));
      expect({ status: response.status, text: response.text }).toEqual({ status: 204, text: '' });

      const after = await running.http.get(getTransactionPath(TRANSACTION)).expect(200);
      expect(after.body).toMatchObject({ brokerid: body.brokerid, brokername: body.brokername });
      expect(after.headers.etag).not.toBe(before.headers.etag);
      const history = await running.http.get(getAgentHistoryPath(TRANSACTION)).expect(200);
      const records = history.body as WireBody[];
      expect(records).toHaveLength(1);
      expect(changesOf(records[0])).toEqual([
        { field: 'brokerid', before: 11, after: body.brokerid },
        { field: 'brokername', before: 'Ramon Dela Cruz', after: body.brokername },
      ]);

      // If-Match is checked on the primary: the ETag read before the write is stale now.
      const stale = await sendUpdate(running, updateBody(), String(before.headers.etag));
      expectProblem(stale, 412, { modelState: false });
      await running.http.get('/api/Requirement/GetRequirements').expect(200);
    });
  });

  describe('a replica that does not answer (nothing listens on its port), with DATABASE_REPLICA_FALLBACK=none', () => {
    let forwarder: Forwarder;
    let running: RunningApp;

    const reads: ReadonlyArray<[string, (running: RunningApp) => Test]> = [
      ['GetTransaction', (app) => app.http.get(getTransactionPath(TRANSACTION))],
      ['GetAgentHistory', (app) => app.http.get(getAgentHistoryPath(TRANSACTION))],
      ['ListTransactions', (app) => app.http.get('/api/Transaction/ListTransactions')],
    ];

    beforeAll(async () => {
      forwarder = new Forwarder(await freePort());
      running = await RunningApp.start(database.url, {
        DATABASE_READ_URLS: replicaUrl(database, { port: forwarder.port }),
        DATABASE_TIMEOUT_MS: String(DATABASE_TIMEOUT_MS),
        DATABASE_REPLICA_RETRY_MS: String(REPLICA_RETRY_MS),
        // Today's behaviour before DATABASE_REPLICA_FALLBACK, for operators who must spare the primary.
        DATABASE_REPLICA_FALLBACK: 'none',
      });
    });

    afterAll(async () => {
      await running?.close();
      await forwarder?.close();
    });

    it('answers reads 503 with Retry-After at once, while the replica is out of the rotation and after', async () => {
      // The replica's first check found it away; the reads after REPLICA_RETRY_MS meet it checked
      // again, and away again.
      for (let round = 0; round < 3; round++) {
        for (const [name, send] of reads) {
          expectFastUnavailable(`${name} #${round}`, await timed(() => send(running)));
        }
        if (round === 1) await sleep(REPLICA_RETRY_MS + 200);
      }
    });

    it('still applies UpdateAgents on the primary, and serves what reads from the primary', async () => {
      const body = updateBody();
      const response = await sendUpdate(running, body);
      expect({ status: response.status, text: response.text }).toEqual({ status: 204, text: '' });
      const [row] = await admin<Array<{ brokerid: number; brokername: string }>>(
        `SELECT brokerid, brokername FROM \`${databaseName}\`.\`sales_transaction\` WHERE transaction_id = ?`,
        [TRANSACTION],
      );
      expect(row).toEqual({ brokerid: body.brokerid, brokername: body.brokername });
      // A raw query and a snapshot transaction: both on the primary.
      await running.http.get('/api/Requirement/GetRequirements').expect(200);
      // Readiness pings the primary only, and says where reads go.
      const ready = await running.http.get('/health/ready').expect(200);
      expect(ready.body.info.database).toMatchObject({
        reads: 'refused',
        replicas: [{ replica: `127.0.0.1:${forwarder.port}`, state: 'out' }],
      });
    });

    it('serves reads again once the replica answers, at its first check DATABASE_REPLICA_RETRY_MS after it was left out', async () => {
      await forwarder.open();
      const started = performance.now();
      let response: Response | undefined;
      while (performance.now() - started < REPLICA_RETRY_MS + 3000) {
        response = await running.http.get(getTransactionPath(TRANSACTION));
        if (response.status === 200) break;
        expect(response.status).toBe(503);
        await sleep(100);
      }
      expect(response?.status).toBe(200);
      expect(response?.body).toMatchObject({ brokername: `Replica Broker ${updates}` });
      await running.http.get(getAgentHistoryPath(TRANSACTION)).expect(200);
    });
  });
});
