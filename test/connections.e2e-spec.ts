import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import request from 'supertest';
import { freePort, ServiceProcess, startedTogether } from './support/processes';
import { RunningApp } from './support/test-app';

/** A raw connection: what it has received, and how long after opening it closed. */
interface RawConnection {
  readonly socket: Socket;
  readonly received: () => string;
  readonly closedAfterMs: Promise<number>;
}

/** Opens a connection to the port on 127.0.0.1, from the given local address. */
function open(port: number, localAddress = '127.0.0.1'): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const opened = Date.now();
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    // A reset after the server's answer is how a cut connection may end here: not a failure.
    socket.on('error', () => undefined);
    const closedAfterMs = new Promise<number>((done) =>
      socket.once('close', () => done(Date.now() - opened)),
    );
    socket.once('connect', () => resolve({ socket, received: () => text, closedAfterMs }));
    socket.once('error', reject);
  });
}

/**
 * The status of a GET on a fresh connection from the given local address (any of 127.0.0.0/8 on
 * loopback), the path sent as written; `undefined` when no answer comes within the time.
 */
function statusOf(
  port: number,
  path: string,
  { from = '127.0.0.1', timeoutMs = 1000 } = {},
): Promise<number | undefined> {
  return new Promise((resolve) => {
    const probe = httpRequest(
      { host: '127.0.0.1', port, path, localAddress: from, agent: false, timeout: timeoutMs },
      (response) => {
        response.resume();
        resolve(response.statusCode);
      },
    );
    probe.on('error', () => resolve(undefined));
    probe.on('timeout', () => {
      probe.destroy();
      resolve(undefined);
    });
    probe.end();
  });
}

/** Waits until the connection has received `text`, or closed; whether it has. */
async function receives(
  connection: RawConnection,
  text: string,
  timeoutMs = 2000,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!connection.received().includes(text) && !connection.socket.destroyed) {
    if (Date.now() > deadline) return false;
    await delay(10);
  }
  return connection.received().includes(text);
}

/** The liveness probe's body, last of its answer. */
const ALIVE = '{"status":"ok"}';

/**
 * A connection from `from` that has carried one request, answered, and is kept alive: idle. Each
 * previous answer on it is the probe's, so `answers` counts them.
 */
async function idleConnection(port: number, from: string): Promise<RawConnection> {
  const connection = await open(port, from);
  connection.socket.write('GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n');
  if (!(await receives(connection, ALIVE)))
    throw new Error(`No answer on a connection from ${from}`);
  return connection;
}

/** Opens `count` idle connections from `from`, one after the other: the first is the oldest idle. */
async function idleConnections(port: number, from: string, count: number) {
  const connections: RawConnection[] = [];
  for (let opened = 0; opened < count; opened++) connections.push(await idleConnection(port, from));
  return connections;
}

/** How many of these the server has closed, once it has closed `expected` (or after a second). */
async function closedOf(connections: readonly RawConnection[], expected: number): Promise<number> {
  const closed = () => connections.filter((connection) => connection.socket.destroyed).length;
  return eventually(() => Promise.resolve(closed()), expected, 1000);
}

/** Asks until the answer is the one expected or the time is up; returns the last answer. */
async function eventually<T>(ask: () => Promise<T>, expected: T, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let answer = await ask();
  while (answer !== expected && Date.now() < deadline) {
    await delay(50);
    answer = await ask();
  }
  return answer;
}

/** Writes one piece every interval until the connection closes. */
function trickle(connection: RawConnection, piece: string, intervalMs: number): void {
  const timer = setInterval(() => {
    if (!connection.socket.destroyed) connection.socket.write(piece);
  }, intervalMs);
  void connection.closedAfterMs.then(() => clearInterval(timer));
}

/** Removes each spawned service: what a describe left, or one no test took. */
const removals: (() => Promise<void>)[] = [];

afterAll(() => Promise.all(removals.map((remove) => remove())));

/** A spawned service on SQLite in a directory of its own, removed when it stops. */
async function spawnService(env: Record<string, string>): Promise<{
  service: ServiceProcess;
  remove: () => Promise<void>;
}> {
  const directory = await mkdtemp(join(tmpdir(), 'property-sales-connections-'));
  const service = await ServiceProcess.start({
    cwd: directory,
    env: { DATABASE_URL: `sqlite:${join(directory, 'service.sqlite')}`, LOG_LEVEL: 'warn', ...env },
  });
  const remove = async () => {
    await service.stop();
    await rm(directory, { recursive: true, force: true });
  };
  removals.push(remove);
  await service.ready();
  return { service, remove };
}

/**
 * The spawned services of the describes below, each a describe's own: started before the first test,
 * as many at a time as the machine has cores.
 */
const started = startedTogether({
  limits: () =>
    spawnService({
      HTTP_HEADERS_TIMEOUT_MS: '1000',
      HTTP_REQUEST_TIMEOUT_MS: '4000',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '1500',
      HTTP_MAX_CONNECTIONS: '20',
      BODY_MIN_BYTES_PER_SECOND: '100',
      BODY_RATE_GRACE_MS: '1000',
    }),
  healthPort: async () => {
    const healthPort = await freePort();
    const spawned = await spawnService({
      HTTP_MAX_CONNECTIONS: '5',
      HEALTH_PORT: String(healthPort),
      METRICS: 'health-port',
      LOG_LEVEL: 'info',
    });
    return { ...spawned, healthPort };
  },
  shutdown: async () => {
    const healthPort = await freePort();
    const spawned = await spawnService({
      HEALTH_PORT: String(healthPort),
      SHUTDOWN_DRAIN_MS: '1000',
    });
    return { ...spawned, healthPort };
  },
  perClient: () => spawnService({ HTTP_MAX_CONNECTIONS_PER_CLIENT: '3' }),
});

describe('connection limits of the spawned service (SQLite)', () => {
  let service: ServiceProcess;
  let remove: () => Promise<void>;

  beforeAll(async () => {
    ({ service, remove } = await started('limits'));
  });

  afterAll(() => remove());

  it('answers 408 and closes slow-header connections after the header timeout, serving others meanwhile', async () => {
    const slow = await Promise.all(Array.from({ length: 10 }, () => open(service.port)));
    for (const connection of slow) {
      connection.socket.write('GET /health/live HTTP/1.1\r\nHost: x\r\n');
      trickle(connection, 'X-Slow: 1\r\n', 100);
    }
    await delay(300);
    await request(service.baseUrl).get('/health/live').expect(200);
    await request(service.baseUrl).get('/api/Requirement/GetRequirements').expect(200);

    const closedAfter = await Promise.all(slow.map((connection) => connection.closedAfterMs));
    for (const elapsed of closedAfter) expect(elapsed).toBeLessThan(2500);
    for (const connection of slow) expect(connection.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('at the cap, closes a connection that has sent nothing to serve a new one, before the header timeout', async () => {
    const held = await Promise.all(Array.from({ length: 20 }, () => open(service.port)));
    // One of them is closed to make room for the probe: well before the header timeout.
    expect(await statusOf(service.port, '/health/live', { timeoutMs: 500 })).toBe(200);
    const firstClosed = await Promise.race(held.map((connection) => connection.closedAfterMs));
    expect(firstClosed).toBeLessThan(900);
    held.forEach((connection) => connection.socket.destroy());
  });

  it('answers 408 and closes the connection when a body arrives slower than the minimum rate', async () => {
    const connection = await open(service.port);
    connection.socket.write(
      'POST /api/Transaction/UpdateAgents HTTP/1.1\r\nHost: x\r\n' +
        'Content-Type: application/json\r\nContent-Length: 200\r\n\r\n{',
    );
    trickle(connection, ' ', 100);
    const closedAfter = await connection.closedAfterMs;
    expect(connection.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(connection.received()).toMatch(/\r\nConnection: close\r\n/i);
    expect(closedAfter).toBeLessThan(3000);
  });

  it('accepts a body that pauses within the grace period', async () => {
    const connection = await open(service.port);
    connection.socket.write(
      'POST /api/Transaction/UpdateAgents HTTP/1.1\r\nHost: x\r\nConnection: close\r\n' +
        'Content-Type: application/json\r\nContent-Length: 58\r\n\r\n{"transaction_id":1001,',
    );
    await delay(600);
    connection.socket.write('"financetype":"Cash","brokerid":77}');
    await connection.closedAfterMs;
    expect(connection.received()).toMatch(/^HTTP\/1\.1 204 /);
  });

  it('closes an idle keep-alive connection after the keep-alive timeout', async () => {
    const connection = await open(service.port);
    connection.socket.write('GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n');
    const closedAfter = await connection.closedAfterMs;
    expect(connection.received()).toMatch(/^HTTP\/1\.1 200 /);
    expect(closedAfter).toBeGreaterThanOrEqual(1400);
    expect(closedAfter).toBeLessThan(3000);
  });
});

/** The part of an UpdateAgents request sent before the rest of its body: the request is in flight. */
const UPDATE_HEAD =
  'POST /api/Transaction/UpdateAgents HTTP/1.1\r\nHost: x\r\n' +
  'Content-Type: application/json\r\nContent-Length: 58\r\n\r\n{"transaction_id":1001,';
const UPDATE_REST = '"financetype":"Cash","brokerid":77}';

describe('a health port outside the connection caps (spawned service, SQLite)', () => {
  let service: ServiceProcess;
  let remove: () => Promise<void>;
  let healthPort: number;
  let healthUrl: string;

  beforeAll(async () => {
    ({ service, remove, healthPort } = await started('healthPort'));
    healthUrl = `http://127.0.0.1:${healthPort}`;
  });

  afterAll(() => remove());

  it('says in its "listening" line where the probes are served', () => {
    const listening = service.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg: string; livenessUrl?: string })
      .find((line) => line.msg.startsWith('Listening'));
    expect(listening?.livenessUrl).toBe(`http://localhost:${healthPort}/health/live`);
    expect(listening?.msg).toContain(`http://localhost:${healthPort}/health/live`);
  });

  it('answers /health/live and /health/ready on the health port while the main port refuses requests', async () => {
    // Four requests in progress: all the main port takes of its five connections.
    const held = await Promise.all(Array.from({ length: 4 }, () => open(service.port)));
    held.forEach((connection) => connection.socket.write(UPDATE_HEAD));
    const api = () => statusOf(service.port, '/api/Requirement/GetRequirements');
    expect(await eventually(api, 503, 2000)).toBe(503);

    await request(healthUrl).get('/health/live').expect(200);
    await request(healthUrl).get('/health/ready').expect(200);
    // The main port's probes are never refused either.
    expect(await statusOf(service.port, '/health/ready')).toBe(200);

    held.forEach((connection) => connection.socket.destroy());
    await Promise.all(held.map((connection) => connection.closedAfterMs));
    expect(await eventually(api, 200, 2000)).toBe(200);
  });

  it('refuses every other path on the health port with 404 in the service error format', async () => {
    const json = await request(healthUrl)
      .get('/api/Requirement/GetRequirements')
      .set('Accept', 'application/json')
      .expect(404);
    expect(json.body).toMatchObject({ status: 404, title: 'Not found' });
    // Helmet's headers, as on every answer of the service.
    expect(json.headers['x-content-type-options']).toBe('nosniff');
    expect(json.headers['x-powered-by']).toBeUndefined();
    const xml = await request(healthUrl)
      .post('/api/Transaction/UpdateAgents')
      .set('Accept', 'application/xml')
      .send({ transaction_id: 1001, financetype: 'Cash', brokerid: 5 })
      .expect(404);
    expect(xml.text).toMatch(/^<Error><Message>[^<]+<\/Message><\/Error>$/);
    // Read as routing reads paths: dot segments do not lead out of /health/.
    for (const path of ['/health/../api/Requirement/GetRequirements', '/swagger-json', '/']) {
      expect({ path, status: await statusOf(healthPort, path) }).toEqual({ path, status: 404 });
    }
    // The same paths answer on the main port.
    await request(service.baseUrl).get('/api/Requirement/GetRequirements').expect(200);
    expect(await statusOf(service.port, '/health/../api/Requirement/GetRequirements')).toBe(200);
  });

  it('serves the metrics on the health port alone with METRICS=health-port', async () => {
    const scraped = await request(healthUrl).get('/metrics').expect(200);
    expect(scraped.text).toMatch(/^property_sales_build_info\{version="[^"]+",commit="unknown",/m);
    const main = await request(service.baseUrl)
      .get('/metrics')
      .set('Accept', 'application/json')
      .expect(404);
    expect(main.text).not.toContain('property_sales_build_info');
  });
});

describe('the health port at shutdown (spawned service, SQLite)', () => {
  let service: ServiceProcess;
  let remove: () => Promise<void>;
  let healthPort: number;

  beforeAll(async () => {
    ({ service, remove, healthPort } = await started('shutdown'));
  });

  afterAll(() => remove());

  it('answers readiness 503 through the drain and until the last request has finished, then closes', async () => {
    const inFlight = await open(service.port);
    inFlight.socket.write(UPDATE_HEAD);
    await delay(100);
    service.child.kill('SIGTERM');

    const ready = () => statusOf(healthPort, '/health/ready', { timeoutMs: 500 });
    expect(await eventually(ready, 503, 800)).toBe(503);
    // The drain over, the main listener closes; the request in flight holds the process.
    const main = () => statusOf(service.port, '/health/live', { timeoutMs: 300 });
    expect(await eventually(main, undefined, 3000)).toBeUndefined();
    expect(await ready()).toBe(503);
    expect(await statusOf(healthPort, '/health/live')).toBe(200);

    inFlight.socket.write(UPDATE_REST);
    await inFlight.closedAfterMs;
    expect(inFlight.received()).toMatch(/^HTTP\/1\.1 204 /);
    expect(await service.exit(5000)).toEqual({ code: 0, signal: null });
    expect(await statusOf(healthPort, '/health/live')).toBeUndefined();
  });
});

describe('a connection cap per client address (spawned service, SQLite)', () => {
  let service: ServiceProcess;
  let remove: () => Promise<void>;

  beforeAll(async () => {
    ({ service, remove } = await started('perClient'));
  });

  afterAll(() => remove());

  it('closes a 4th connection from one address at once, serving the other addresses and its 3', async () => {
    const held = await Promise.all(Array.from({ length: 3 }, () => open(service.port)));
    await delay(100);
    const fourth = await open(service.port);
    fourth.socket.write('GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await fourth.closedAfterMs).toBeLessThan(1000);
    expect(fourth.received()).toBe('');

    expect(await statusOf(service.port, '/health/live', { from: '127.0.0.2' })).toBe(200);
    const [first] = held;
    first.socket.write('GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    await first.closedAfterMs;
    expect(first.received()).toMatch(/^HTTP\/1\.1 200 /);
    // One of its connections closed, the address is served again.
    expect(await statusOf(service.port, '/health/live')).toBe(200);
    held.forEach((connection) => connection.socket.destroy());
  });
});

describe('idle connections and requests in progress at the connection cap (HTTP_MAX_CONNECTIONS=20)', () => {
  let running: RunningApp;
  let port: number;
  const held: RawConnection[] = [];

  beforeEach(async () => {
    // A service of its own for each: what one test leaves open does not count against the next.
    running = await RunningApp.start('sqlite::memory:', {
      HTTP_MAX_CONNECTIONS: '20',
      EVENTS_FEED: 'true',
    });
    port = Number(new URL(running.baseUrl).port);
  });

  afterEach(async () => {
    held.splice(0).forEach((connection) => connection.socket.destroy());
    await running.close();
  });

  /** Keeps the connections, to be closed after the test. */
  const hold = (connections: RawConnection[]) => {
    held.push(...connections);
    return connections;
  };

  it('answers the probe and a new client while idle keep-alive connections from four addresses fill the cap', async () => {
    for (const from of ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'])
      hold(await idleConnections(port, from, 5));

    // Kept alive 65 s by default: one is closed at once to make room, so both are answered.
    expect(await statusOf(port, '/health/live', { timeoutMs: 500 })).toBe(200);
    expect(
      await statusOf(port, '/api/Requirement/GetRequirements', {
        from: '127.0.0.6',
        timeoutMs: 500,
      }),
    ).toBe(200);
    expect(await closedOf(held, 1)).toBeGreaterThanOrEqual(1);
  });

  it('closes the idle connections of the address holding the most first, oldest first', async () => {
    const few = hold(await idleConnections(port, '127.0.0.2', 4));
    const many = hold(await idleConnections(port, '127.0.0.3', 16));

    // Four new clients that stay connected: each takes the place of one of the sixteen.
    hold(await idleConnections(port, '127.0.0.4', 4));
    expect(await closedOf(many, 4)).toBe(4);
    expect(many.slice(0, 4).every((connection) => connection.socket.destroyed)).toBe(true);
    // The address with four, although its connections are the oldest, keeps them all.
    for (const connection of few) {
      connection.socket.write('GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(await receives(connection, `${ALIVE}HTTP/1.1 200`)).toBe(true);
    }
  });

  it('past the requests in progress it takes, answers 503 server_busy and closes, and always answers the probes', async () => {
    // Eighteen bodies still arriving: the cap less its tenth.
    hold(await Promise.all(Array.from({ length: 18 }, () => open(port, '127.0.0.2'))));
    held.forEach((connection) => connection.socket.write(UPDATE_HEAD));
    const api = () => statusOf(port, '/api/Requirement/GetRequirements', { from: '127.0.0.3' });
    expect(await eventually(api, 503, 2000)).toBe(503);

    const refused = hold([await open(port, '127.0.0.3')])[0];
    refused.socket.write('GET /api/Requirement/GetRequirements HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await refused.closedAfterMs).toBeLessThan(1000);
    expect(refused.received()).toMatch(/^HTTP\/1\.1 503 /);
    expect(refused.received()).toMatch(/\r\nConnection: close\r\n/i);
    expect(refused.received()).toMatch(/\r\nRetry-After: 1\r\n/i);
    expect(refused.received()).toContain('server_busy');
    expect(await statusOf(port, '/health/live', { from: '127.0.0.4' })).toBe(200);
    expect(await statusOf(port, '/health/ready', { from: '127.0.0.4' })).toBe(200);

    // One of them answered, the others are served again.
    held[0].socket.write(UPDATE_REST);
    expect(await receives(held[0], 'HTTP/1.1 ')).toBe(true);
    expect(await eventually(api, 200, 2000)).toBe(200);
  });

  it('lets feed readers wait on half of the connections at most, answering the probe and new clients', async () => {
    const readers = Array.from({ length: 20 }, () =>
      statusOf(port, '/api/Events?timeout=20000', { from: '127.0.0.2', timeoutMs: 3000 }),
    );
    // Ten wait (EVENTS_FEED_MAX_WAITING, half of the cap by default); the others are refused at once.
    const settled = await Promise.all(
      readers.map((reader) => Promise.race([reader, delay(1500, 'waiting')])),
    );
    expect(settled.filter((status) => status === 503)).toHaveLength(10);
    expect(settled.filter((status) => status === 'waiting')).toHaveLength(10);

    expect(await statusOf(port, '/health/live', { from: '127.0.0.3' })).toBe(200);
    expect(await statusOf(port, '/api/Requirement/GetRequirements', { from: '127.0.0.3' })).toBe(
      200,
    );
  });
});
