import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import request from 'supertest';
import { DataSource } from 'typeorm';
import {
  freePort,
  jsonLines,
  runNode,
  SERVICE_MAIN,
  ServiceProcess,
  startedTogether,
  TemporaryDirectories,
} from './support/processes';
import {
  createTestDatabase,
  type DatabaseKind,
  MARIADB_SERVER_URL,
  testDatabaseKinds,
  type TestDatabase,
} from './support/test-database';
import { describeOnMariaDb } from './support/test-app';

/**
 * What an operator reads in the log when something fails, from services started as operators start
 * them: why a request got a 5xx (the driver's code and message, which the client never sees), why
 * the service did not start (one JSON line naming the variable to look at), and what a shutdown
 * drained. Also what the log leaves out at info: the health probes.
 */

interface Failure {
  readonly type?: string;
  readonly message?: string;
  readonly code?: string;
  readonly cause?: Failure;
}

interface LogLine {
  readonly level: string;
  readonly msg?: string;
  readonly reqId?: string;
  readonly route?: string;
  readonly err?: Failure;
  readonly variables?: string[];
  readonly [field: string]: unknown;
}

const ESCAPE = '\u001b';
const GET_TRANSACTION = '/api/Transaction/GetTransaction';
const DEMO_TRANSACTION = 1001;

/** Every non-empty line of a stream, parsed; fails on one that is not JSON. */
const logLinesIn = (text: string) => jsonLines<LogLine>(text);

/** The codes and messages of a failure and every cause beneath it, outermost first. */
function chain(failure: Failure | undefined): Failure[] {
  return failure ? [failure, ...chain(failure.cause)] : [];
}

const directories = new TemporaryDirectories('failure-logs');
const services: ServiceProcess[] = [];

/** A connection of the test's own to the service's database, as another process would open one. */
function openDatabase(url: string): Promise<DataSource> {
  const source = url.startsWith('sqlite:')
    ? new DataSource({ type: 'better-sqlite3', database: url.slice('sqlite:'.length) })
    : new DataSource({ type: 'mysql', url: url.replace(/^mariadb:/, 'mysql:') });
  return source.initialize();
}

async function spawnService(env: Record<string, string>): Promise<ServiceProcess> {
  const service = await ServiceProcess.start({
    cwd: await directories.make(),
    env: { LOG_LEVEL: 'info', ...env },
  });
  services.push(service);
  await service.ready();
  return service;
}

afterAll(async () => {
  await Promise.allSettled(services.splice(0).map((service) => service.stop()));
  await directories.removeAll();
});

/** The request line of one request id, once it is written. */
async function requestLine(service: ServiceProcess, id: string): Promise<LogLine> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const line = logLinesIn(service.stdout).find((logged) => logged.reqId === id);
    if (line) return line;
    if (Date.now() > deadline) throw new Error(`No log line for ${id}:\n${service.stdout}`);
    await delay(20);
  }
}

describe('a start-up failure is one JSON line on stderr, naming the variable', () => {
  /** The service run until it stops, on a port another server has taken as `variable`. */
  const onTakenPort = async (variable: string) => {
    const taken: Server = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => taken.listen(port, resolve));
    try {
      const directory = await directories.make();
      return await runNode(SERVICE_MAIN, [], {
        cwd: directory,
        env: {
          PORT: String(await freePort()),
          [variable]: String(port),
          DATABASE_URL: `sqlite:${join(directory, 'service.sqlite')}`,
        },
      });
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  };
  const started = startedTogether({
    badVariables: async () =>
      runNode(SERVICE_MAIN, [], {
        cwd: await directories.make(),
        env: { LOG_LEVEL: 'loud', PORT: 'eighty' },
      }),
    noDatabase: async () =>
      runNode(SERVICE_MAIN, [], {
        cwd: await directories.make(),
        env: {
          DATABASE_URL: `mysql://root@127.0.0.1:${await freePort()}/nothing_here`,
          AUTH_MODE: 'none',
          LOG_LEVEL: 'info',
        },
      }),
    PORT: () => onTakenPort('PORT'),
    HEALTH_PORT: () => onTakenPort('HEALTH_PORT'),
  });

  it('for bad variables: names each, with its value, and writes nothing else', async () => {
    const result = await started('badVariables');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    const lines = logLinesIn(result.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0].level).toBe('fatal');
    expect([...lines[0].variables!].sort()).toEqual(['LOG_LEVEL', 'PORT']);
    expect(lines[0].msg).toContain(
      "LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got 'loud')",
    );
    expect(lines[0].msg).toContain("(got 'eighty')");
  });

  it('for a database that does not answer: DATABASE_URL and the driver code; every line JSON, none coloured', async () => {
    const result = await started('noDatabase');
    expect(result.code).toBe(1);
    const failure = logLinesIn(result.stderr);
    expect(failure).toHaveLength(1);
    expect(failure[0]).toMatchObject({
      level: 'fatal',
      variables: ['DATABASE_URL'],
      err: { code: 'ECONNREFUSED' },
    });
    expect(failure[0].msg).toMatch(/^The service could not start \(DATABASE_URL\): .*ECONNREFUSED/);
    // The framework's own lines of the attempt are JSON too.
    expect(logLinesIn(result.stdout).length).toBeGreaterThan(0);
    expect(result.stdout + result.stderr).not.toContain(ESCAPE);
  });

  it.each(['PORT', 'HEALTH_PORT'] as const)(
    'for a port already taken: %s and EADDRINUSE',
    async (variable) => {
      const result = await started(variable);
      expect(result.code).toBe(1);
      const failure = logLinesIn(result.stderr);
      expect(failure).toHaveLength(1);
      expect(failure[0]).toMatchObject({
        level: 'fatal',
        variables: [variable],
        err: { code: 'EADDRINUSE' },
      });
    },
  );
});

describe('the lines of a running service', () => {
  let service: ServiceProcess;
  let sqliteFile: string;

  beforeAll(async () => {
    sqliteFile = join(await directories.make(), 'service.sqlite');
    service = await spawnService({
      DATABASE_URL: `sqlite:${sqliteFile}`,
      // Longer than SQLite's own wait for a lock, so the driver's answer comes first.
      DATABASE_TIMEOUT_MS: '15000',
    });
  });

  it('"listening" gives the API URL and the OpenAPI UI URL, and both answer', async () => {
    const line = logLinesIn(service.stdout).find((logged) => logged.msg?.startsWith('Listening'));
    const url = `http://localhost:${service.port}/api`;
    const swaggerUrl = `http://localhost:${service.port}/swagger`;
    expect(line).toMatchObject({ level: 'info', url, swaggerUrl });
    expect(line?.msg).toContain(url);
    expect(line?.msg).toContain(swaggerUrl);
    expect((await fetch(`${url}/Requirement/GetRequirements`)).status).toBe(200);
    expect((await fetch(swaggerUrl)).status).toBe(200);
  });

  it('writes no line at info for a health probe that succeeds', async () => {
    for (const probe of ['live', 'ready']) {
      await request(service.baseUrl)
        .get(`/health/${probe}`)
        .set('X-Request-Id', `probe-${probe}`)
        .expect(200);
    }
    await request(service.baseUrl)
      .get('/api/Requirement/GetRequirements')
      .set('X-Request-Id', 'after-probes')
      .expect(200);
    await requestLine(service, 'after-probes');
    expect(service.stdout).not.toContain('probe-live');
    expect(service.stdout).not.toContain('probe-ready');
  });

  it("a 503's line carries the driver's code and message: SQLite locked by another process", async () => {
    const other = await openDatabase(`sqlite:${sqliteFile}`);
    try {
      await other.query('BEGIN EXCLUSIVE');
      const response = await request(service.baseUrl)
        .post('/api/Transaction/UpdateAgents')
        .set('Content-Type', 'application/json')
        .set('X-Request-Id', 'locked-out')
        .send({ transaction_id: DEMO_TRANSACTION, financetype: 'Cash', brokerid: 5 });
      expect(response.status).toBe(503);
      expect(response.text).not.toMatch(/SQLITE|database is locked/);
    } finally {
      await other.query('ROLLBACK');
      await other.destroy();
    }
    const line = await requestLine(service, 'locked-out');
    expect(line.err?.type).toBe('DatabaseUnavailableError');
    expect(chain(line.err)).toContainEqual(
      expect.objectContaining({ code: 'SQLITE_BUSY', message: 'database is locked' }),
    );
  });
});

/**
 * A table renamed away under a running service: UpdateAgents' history record fails with the driver's
 * own error, whose statement parameters hold the body's values.
 */
describe.each(testDatabaseKinds())(
  "a 500's line carries the driver's code and message, not the request's data [%s]",
  (kind: DatabaseKind) => {
    const NO_SUCH_TABLE: Record<DatabaseKind, { code: string; message: RegExp }> = {
      sqlite: { code: 'SQLITE_ERROR', message: /no such table: agent_assignment/ },
      mariadb: { code: 'ER_NO_SUCH_TABLE', message: /agent_assignment' doesn't exist/ },
    };
    const SECRET = 'S3CRET-BROKER';
    let database: TestDatabase;
    let service: ServiceProcess;

    const onDatabase = async (statement: string) => {
      const connection = await openDatabase(database.url);
      try {
        await connection.query(statement);
      } finally {
        await connection.destroy();
      }
    };

    beforeAll(async () => {
      database = await createTestDatabase(kind);
      service = await spawnService({
        DATABASE_URL: database.url,
        MIGRATIONS_RUN: 'true',
        AUTH_MODE: 'none',
      });
      // SQLite has it from the demo data.
      if (kind === 'mariadb') {
        await onDatabase(
          `INSERT INTO sales_transaction (transaction_id, row_version, financetype) VALUES (${DEMO_TRANSACTION}, 1, 'Cash')`,
        );
      }
    });

    afterAll(async () => {
      await service?.stop();
      await database?.drop();
    });

    it('logs it with the request id; the client reads only "An error has occurred."', async () => {
      await onDatabase('ALTER TABLE agent_assignment RENAME TO agent_assignment_gone');
      const response = await request(service.baseUrl)
        .post('/api/Transaction/UpdateAgents')
        .set('Content-Type', 'application/json')
        .set('X-Request-Id', `no-table-${kind}`)
        .send({ transaction_id: DEMO_TRANSACTION, financetype: 'Cash', brokername: SECRET });
      expect(response.status).toBe(500);
      expect(response.text).not.toMatch(/agent_assignment|SQLITE|ER_/);

      const line = await requestLine(service, `no-table-${kind}`);
      expect(line.level).toBe('error');
      const expected = NO_SUCH_TABLE[kind];
      expect(chain(line.err)).toContainEqual(
        expect.objectContaining({
          code: expected.code,
          message: expect.stringMatching(expected.message),
        }),
      );
      expect(service.output).not.toContain(SECRET);
    });
  },
);

describeOnMariaDb('a start-up failure on MariaDB names the driver error', () => {
  it('a wrong password: ER_ACCESS_DENIED_ERROR and DATABASE_URL, never the password', async () => {
    const url = new URL(MARIADB_SERVER_URL);
    url.username = 'root';
    url.password = 'not-the-password';
    const result = await runNode(SERVICE_MAIN, [], {
      cwd: await directories.make(),
      env: { DATABASE_URL: url.toString(), AUTH_MODE: 'none' },
    });
    expect(result.code).toBe(1);
    const failure = logLinesIn(result.stderr);
    expect(failure).toHaveLength(1);
    expect(failure[0]).toMatchObject({
      level: 'fatal',
      variables: ['DATABASE_URL'],
      err: { code: 'ER_ACCESS_DENIED_ERROR' },
    });
    expect(result.stdout + result.stderr).not.toContain('not-the-password');
  });
});

describeOnMariaDb('a 503 on MariaDB names the network failure', () => {
  let database: TestDatabase;
  let relay: Server;
  const relayed = new Set<Socket>();
  let service: ServiceProcess;

  beforeAll(async () => {
    database = await createTestDatabase('mariadb');
    const target = new URL(database.url);
    const server = { port: Number(target.port || 3306), host: target.hostname };
    // The service reaches the database through this relay, which the test can cut.
    relay = createServer((client) => {
      const upstream = connect(server);
      for (const socket of [client, upstream]) {
        relayed.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => {
          relayed.delete(socket);
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    const port = await freePort();
    await new Promise<void>((resolve) => relay.listen(port, '127.0.0.1', resolve));
    target.host = `127.0.0.1:${port}`;
    service = await spawnService({
      DATABASE_URL: target.toString(),
      MIGRATIONS_RUN: 'true',
      AUTH_MODE: 'none',
    });
  });

  afterAll(async () => {
    await service?.stop();
    if (relay?.listening) await new Promise((resolve) => relay.close(resolve));
    await database?.drop();
  });

  it("logs the driver's code on the request's 503 and what the ping said on readiness's", async () => {
    await request(service.baseUrl).get('/health/ready').expect(200);
    // The outage: open connections cut, new ones refused.
    await new Promise((resolve) => {
      relay.close(resolve);
      for (const socket of relayed) socket.destroy();
    });

    const response = await request(service.baseUrl)
      .get(`${GET_TRANSACTION}/${DEMO_TRANSACTION}`)
      .set('X-Request-Id', 'cut-off');
    expect(response.status).toBe(503);
    expect(response.text).not.toMatch(/ECONN|PROTOCOL_/);
    const line = await requestLine(service, 'cut-off');
    expect(line.err?.type).toBe('DatabaseUnavailableError');
    expect(chain(line.err).map((failure) => failure.code)).toContainEqual(
      expect.stringMatching(/^(ECONNREFUSED|ECONNRESET|PROTOCOL_CONNECTION_LOST)$/),
    );

    const notReady = await request(service.baseUrl)
      .get('/health/ready')
      .set('X-Request-Id', 'ready-cut-off')
      .expect(503);
    expect(notReady.text).not.toMatch(/ECONN|PROTOCOL_/);
    const probe = await requestLine(service, 'ready-cut-off');
    expect(probe.err?.type).toBe('ServiceNotReadyError');
    expect(JSON.parse(probe.err?.cause?.message ?? '{}')).toMatchObject({
      database: {
        status: 'down',
        code: expect.stringMatching(/^(ECONNREFUSED|ECONNRESET|PROTOCOL_CONNECTION_LOST)$/),
        message: expect.any(String),
      },
    });
  });
});

describe('shutdown', () => {
  it('logs the signal, then what was drained and how long it took', async () => {
    const service = await spawnService({
      DATABASE_URL: `sqlite:${join(await directories.make(), 'service.sqlite')}`,
      SHUTDOWN_DRAIN_MS: '800',
    });
    service.child.kill('SIGTERM');
    // Sent while draining: answered, and counted.
    await delay(200);
    for (let sent = 0; sent < 3; sent++) {
      await request(service.baseUrl).get(`${GET_TRANSACTION}/${DEMO_TRANSACTION}`).expect(200);
    }
    expect(await service.exit()).toEqual({ code: 0, signal: null });

    const lines = logLinesIn(service.stdout);
    const begun = lines.find((line) => line.signal === 'SIGTERM' && line.drainMs === 800);
    const stopped = lines.find((line) => line.msg?.startsWith('Stopped after SIGTERM'));
    expect(begun?.level).toBe('info');
    expect(stopped).toMatchObject({ level: 'info', requests: 3, inFlight: 0 });
    expect(stopped?.durationMs).toBeGreaterThanOrEqual(800);
    expect(lines.indexOf(begun!)).toBeLessThan(lines.indexOf(stopped!));
  });
});
