import {
  Agent,
  type ClientRequest,
  type IncomingHttpHeaders,
  request as httpRequest,
} from 'node:http';
import { type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import request from 'supertest';
import { name as packageName, version as packageVersion } from '../package.json';
import { DataSource } from 'typeorm';
import { expectProblem } from './support/http-assertions';
import {
  type CommandResult,
  jsonLines,
  responds,
  runNode,
  SERVICE_MAIN,
  ServiceProcess,
  startedTogether,
  startOnNewSqlite,
  TemporaryDirectories,
} from './support/processes';
import { describeOnEachDatabase, type SuiteContext } from './support/test-app';

/** The request line written when a response ends, as far as these tests read it. */
interface LogLine {
  readonly level: string;
  readonly msg?: string;
  readonly reqId?: string;
  readonly req?: Record<string, unknown>;
  readonly res?: Record<string, unknown>;
  readonly responseTime?: unknown;
  readonly route?: unknown;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const LOOPBACK = /^(?:::ffff:)?127\.0\.0\.1$/;
const UPDATE_AGENTS = '/api/Transaction/UpdateAgents';
/** A cheap route whose 200s are logged at info (the health probes' are logged at debug). */
const LOGGED_ROUTE = '/api/Requirement/GetRequirements';
const GET_TRANSACTION_ROUTE = '/api/Transaction/GetTransaction/:transaction_id';
/** An unlocked transaction of the demo data set every spawned service loads on its new SQLite file. */
const DEMO_TRANSACTION = 1001;
const APP_ORIGIN = 'https://app.example.com';
const SECRETS = ['S3CRET-VALUE', 'TOPSECRET', 'COOKIESECRET'];

// ---------------------------------------------------------------------------------------------
// Spawned services and their log output

const directories = new TemporaryDirectories('operations');
const services: ServiceProcess[] = [];

/** The service on a new SQLite file of its own (demo data loaded), logging at info unless told. */
async function spawnService(env: Record<string, string> = {}): Promise<ServiceProcess> {
  const service = await startOnNewSqlite(await directories.make(), env);
  services.push(service);
  return service;
}

afterAll(async () => {
  // Every suite stops what it started; this catches what a failing one left running.
  await Promise.allSettled(services.splice(0).map((service) => service.stop()));
  await directories.removeAll();
});

/** Every non-empty stdout line, parsed: throws when one is not JSON. */
const logLinesOf = (service: ServiceProcess) => jsonLines<LogLine>(service.stdout);

/** The lines that belong to one request id. */
const linesOf = (service: ServiceProcess, id: string) =>
  logLinesOf(service).filter((line) => line.reqId === id || line.req?.id === id);

async function eventually(condition: () => boolean, what: string, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await delay(20);
  }
}

let markers = 0;

/**
 * Sends one more request and waits for its line: pino writes synchronously in order, so every line of
 * the requests before it is on stdout by then. A 404 is logged at every level up to warn.
 */
async function flushLogs(service: ServiceProcess): Promise<void> {
  const id = `flush-${++markers}`;
  await request(service.baseUrl).get('/api/no-such-resource').set('X-Request-Id', id).expect(404);
  await eventually(() => service.stdout.includes(id), `the log line of ${id}`);
}

/** The single line a finished request wrote; fails when there is none or more than one. */
async function requestLine(service: ServiceProcess, id: string): Promise<LogLine> {
  await flushLogs(service);
  const lines = linesOf(service, id);
  expect(lines).toHaveLength(1);
  return lines[0];
}

// ---------------------------------------------------------------------------------------------
// Requests kept in flight

interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

interface InFlightRequest {
  readonly outgoing: ClientRequest;
  /** The response; rejects when the connection fails (reset, refused) before one arrives. */
  readonly response: Promise<RawResponse>;
  /** Resolves when the connection that carries it closes, from either side. */
  readonly connectionClosed: Promise<void>;
}

/**
 * A chunked POST to UpdateAgents whose body starts now and ends only when the test says: the server
 * has the request, and is waiting for the rest of its body.
 */
async function startUpdateInFlight(
  service: ServiceProcess,
  agent: Agent | false,
): Promise<InFlightRequest> {
  const outgoing = httpRequest({
    host: '127.0.0.1',
    port: service.port,
    method: 'POST',
    path: UPDATE_AGENTS,
    agent,
    headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
  });
  const response = new Promise<RawResponse>((resolve, reject) => {
    outgoing.on('error', reject);
    outgoing.on('response', (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('error', reject);
      incoming.on('end', () =>
        resolve({
          status: incoming.statusCode ?? 0,
          headers: incoming.headers,
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
  });
  // A test that fails before awaiting it must not also leave an unhandled rejection behind.
  response.catch(() => undefined);
  const socket = new Promise<Socket>((resolve) => outgoing.once('socket', resolve));
  const connectionClosed = socket.then(
    (opened) => new Promise<void>((resolve) => opened.once('close', () => resolve())),
  );
  outgoing.write(`{"transaction_id":${DEMO_TRANSACTION},`);
  const opened = await socket;
  if (opened.connecting) {
    await new Promise<void>((resolve, reject) => {
      opened.once('connect', () => resolve());
      outgoing.once('error', reject);
    });
  }
  // Time for the server to read the headers and the first chunk and to start reading the body.
  await delay(300);
  return { outgoing, response, connectionClosed };
}

/** A GetTransaction through the agent, read to its end. */
function startGet(service: ServiceProcess, agent: Agent): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({
      host: '127.0.0.1',
      port: service.port,
      path: `/api/Transaction/GetTransaction/${DEMO_TRANSACTION}`,
      agent,
    });
    outgoing.on('error', reject);
    outgoing.on('response', (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () =>
        resolve({
          status: incoming.statusCode ?? 0,
          headers: incoming.headers,
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    outgoing.end();
  });
}

const finishUpdate = (inFlight: InFlightRequest) =>
  inFlight.outgoing.end('"financetype":"Cash","brokerid":77}');

/** Whether a new connection fails (refused, reset, no answer) within the time, polling. */
async function refusesNewConnections(port: number, timeoutMs = 2000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const answered = await responds(port, '/health/live', 500);
    if (!answered) return true;
    await delay(50);
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Health probes, in process, on each database

describeOnEachDatabase('health probes', (context: SuiteContext) => {
  const expectProbes = async (prefix: string) => {
    const live = await context.http.get('/health/live').expect(200);
    expect(live.headers['content-type']).toMatch(/^application\/json/);
    expect(live.body).toEqual({ status: 'ok' });

    const ready = await context.http.get('/health/ready').expect(200);
    expect(ready.headers['content-type']).toMatch(/^application\/json/);
    expect(ready.body).toMatchObject({ status: 'ok', info: { database: { status: 'up' } } });

    // Only outside the prefix.
    for (const probe of ['live', 'ready']) {
      const prefixed = await context.http.get(`/${prefix}/health/${probe}`);
      expect({ path: `/${prefix}/health/${probe}`, status: prefixed.status }).toEqual({
        path: `/${prefix}/health/${probe}`,
        status: 404,
      });
      expectProblem(prefixed, 404, { modelState: false });
    }
  };

  it('serves /health/live and /health/ready outside the default api prefix; /api/health/* is 404', async () => {
    await expectProbes('api');
  });

  it('keeps them at /health/* with API_PREFIX=v1/sales, while the API moves', async () => {
    await context.restart({ API_PREFIX: 'v1/sales' });
    await expectProbes('v1/sales');
    await context.http.get('/v1/sales/Requirement/GetRequirements').expect(200);
    await context.http.get('/api/health/live').expect(404);
  });
});

describeOnEachDatabase('health probes without a database', (context: SuiteContext) => {
  beforeAll(async () => {
    // The pool is gone, as when the database stops answering: this suite's service is broken for good.
    await context.running.app.get(DataSource).destroy();
  });

  it('answers /health/ready with 503, Retry-After and a problem that names no driver', async () => {
    const response = await context.http.get('/health/ready');
    const body = expectProblem(response, 503, { modelState: false });
    expect(response.headers['retry-after']).toMatch(/^\d+$/);
    expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
    expect(body.requestId).toBe(response.headers['x-request-id']);
    // Terminus' own report (`error`, `details`) carries driver messages: it must not get out.
    expect(body).not.toHaveProperty('error');
    expect(body).not.toHaveProperty('details');
    expect(body).not.toHaveProperty('info');
    expect(response.text).not.toMatch(
      /not established|DataSource|ECONN|pool|timeout of|Connection (?:is|with)/i,
    );
  });

  it('keeps /health/live at 200: the process itself is fine', async () => {
    const response = await context.http.get('/health/live').expect(200);
    expect(response.body).toEqual({ status: 'ok' });
  });
});

// ---------------------------------------------------------------------------------------------
// The built service, spawned as operators run it

describe('request logs of the spawned service (JSON, LOG_LEVEL=info)', () => {
  let service: ServiceProcess;

  beforeAll(async () => {
    service = await spawnService();
  });

  afterAll(async () => {
    await service?.stop();
  });

  it('writes one JSON line per request with method, route, status, duration and the gateway request id', async () => {
    const response = await request(service.baseUrl)
      .get(`/api/Transaction/GetTransaction/${DEMO_TRANSACTION}`)
      .set('X-Request-Id', 'gateway-42')
      .expect(200);
    expect(response.headers['x-request-id']).toBe('gateway-42');

    const line = await requestLine(service, 'gateway-42');
    expect(line).toMatchObject({
      level: 'info',
      reqId: 'gateway-42',
      req: { id: 'gateway-42', method: 'GET' },
      res: { statusCode: 200 },
      route: GET_TRANSACTION_ROUTE,
    });
    expect(line.responseTime).toEqual(expect.any(Number));
    expect(line.responseTime as number).toBeGreaterThanOrEqual(0);
    // Nothing the service writes to stdout is anything but a JSON line, each with its level by name
    // and the service and release that wrote it.
    const levels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];
    for (const logged of logLinesOf(service)) {
      expect(levels).toContain(logged.level);
      expect(logged).toMatchObject({ service: packageName, version: packageVersion });
    }
  });

  it('logs a POST once, with its route and status, under the id it generated and echoed', async () => {
    const response = await request(service.baseUrl)
      .post(UPDATE_AGENTS)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ transaction_id: DEMO_TRANSACTION, financetype: 'Cash', brokerid: 12 }))
      .expect(204);
    const id = String(response.headers['x-request-id']);
    expect(id).toMatch(UUID);

    const line = await requestLine(service, id);
    expect(line).toMatchObject({
      level: 'info',
      reqId: id,
      req: { id, method: 'POST' },
      res: { statusCode: 204 },
      route: UPDATE_AGENTS,
    });
    expect(line.responseTime).toEqual(expect.any(Number));
  });

  it.each([
    ['no X-Request-Id', undefined],
    ['an empty one', ''],
    ['one with spaces', 'gateway 42'],
    [
      'one with an encoded newline and a forged line',
      'gateway-43%0a{"level":"fatal","msg":"forged"}',
    ],
    ['one with a quote', 'gateway-"44"'],
    ['one of 129 characters', 'a'.repeat(129)],
  ])('generates a UUID request id when the gateway sends %s', async (_, sent) => {
    const call = request(service.baseUrl).get(LOGGED_ROUTE);
    if (sent !== undefined) call.set('X-Request-Id', sent);
    const response = await call.expect(200);
    const id = String(response.headers['x-request-id']);
    expect(id).toMatch(UUID);
    expect(id).not.toBe(sent);

    const line = await requestLine(service, id);
    expect(line).toMatchObject({ reqId: id, req: { id }, route: LOGGED_ROUTE });
    if (sent) expect(service.stdout).not.toContain(sent);
    expect(logLinesOf(service).filter((logged) => logged.level === 'fatal')).toEqual([]);
  });

  it('keeps a plain token of 128 characters', async () => {
    const sent = `gw.${'x'.repeat(119)}:a-b_c`;
    expect(sent).toHaveLength(128);
    const response = await request(service.baseUrl)
      .get(LOGGED_ROUTE)
      .set('X-Request-Id', sent)
      .expect(200);
    expect(response.headers['x-request-id']).toBe(sent);
    await requestLine(service, sent);
  });

  it('carries the request id in error bodies, and logs a 4xx at warn', async () => {
    const missing = await request(service.baseUrl)
      .get('/api/Transaction/GetTransaction/999999')
      .set('X-Request-Id', 'gateway-404');
    expect(expectProblem(missing, 404, { modelState: false }).requestId).toBe('gateway-404');
    expect(missing.headers['x-request-id']).toBe('gateway-404');
    expect(await requestLine(service, 'gateway-404')).toMatchObject({
      level: 'warn',
      res: { statusCode: 404 },
      route: GET_TRANSACTION_ROUTE,
    });

    const invalid = await request(service.baseUrl)
      .post(UPDATE_AGENTS)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ transaction_id: DEMO_TRANSACTION }));
    const body = expectProblem(invalid, 400);
    expect(body.requestId).toEqual(expect.stringMatching(UUID));
    expect(body.requestId).toBe(invalid.headers['x-request-id']);

    const unknown = await request(service.baseUrl).get('/api/No/Such/Path');
    expect(expectProblem(unknown, 404, { modelState: false }).requestId).toBe(
      unknown.headers['x-request-id'],
    );

    // The legacy XML error has no place for it: the header still carries it.
    const xml = await request(service.baseUrl)
      .get('/api/Transaction/GetTransaction/999999')
      .set('Accept', 'application/xml')
      .set('X-Request-Id', 'gateway-xml-404');
    expect(xml.status).toBe(404);
    expect(xml.headers['x-request-id']).toBe('gateway-xml-404');
  });

  it.each([
    ['an unknown path', '/no-such-resource', 404],
    ['the OpenAPI document', '/swagger-json', 200],
  ])(
    'identifies, logs and echoes requests outside the API prefix too: %s',
    async (_, path, status) => {
      const id = `outside-${status}`;
      const response = await request(service.baseUrl).get(path).set('X-Request-Id', id);
      expect(response.status).toBe(status);
      expect(response.headers['x-request-id']).toBe(id);
      if (status >= 400) {
        expect(expectProblem(response, status, { modelState: false }).requestId).toBe(id);
      }
      expect(await requestLine(service, id)).toMatchObject({
        req: { id, method: 'GET' },
        res: { statusCode: status },
      });
    },
  );

  it('never writes bodies, credentials or cookies to the log', async () => {
    const secretHeaders = {
      Authorization: 'Bearer TOPSECRET',
      Cookie: 'session=COOKIESECRET',
      'X-Api-Key': 'TOPSECRET',
    };
    const accepted = await request(service.baseUrl)
      .post(UPDATE_AGENTS)
      .set(secretHeaders)
      .set('Content-Type', 'application/json')
      .set('X-Request-Id', 'secret-accepted')
      .send(
        JSON.stringify({
          transaction_id: DEMO_TRANSACTION,
          financetype: 'Cash',
          brokername: 'S3CRET-VALUE',
          clientname: 'S3CRET-VALUE',
        }),
      );
    expect(accepted.status).toBe(204);
    // Refused bodies are where a careless log would quote the value.
    const refused = await request(service.baseUrl)
      .post(UPDATE_AGENTS)
      .set(secretHeaders)
      .set('Content-Type', 'application/json')
      .set('X-Request-Id', 'secret-refused')
      .send(
        JSON.stringify({
          transaction_id: DEMO_TRANSACTION,
          financetype: 'Cash',
          loanterm: 'S3CRET-VALUE',
          clientname: 'S3CRET-VALUE',
        }),
      );
    expect(refused.status).toBe(400);
    const malformed = await request(service.baseUrl)
      .post(UPDATE_AGENTS)
      .set(secretHeaders)
      .set('Content-Type', 'application/xml')
      .set('X-Request-Id', 'secret-malformed')
      .send('<Transaction><clientname>S3CRET-VALUE</clientname');
    expect(malformed.status).toBe(400);

    for (const id of ['secret-accepted', 'secret-refused', 'secret-malformed']) {
      const line = await requestLine(service, id);
      expect(line.req).not.toHaveProperty('headers');
      expect(line.req).not.toHaveProperty('body');
      expect(line.res).not.toHaveProperty('headers');
    }
    for (const secret of SECRETS) expect(service.output).not.toContain(secret);
  });

  it('logs the socket address, not X-Forwarded-For, when TRUST_PROXY is unset', async () => {
    await request(service.baseUrl)
      .get(LOGGED_ROUTE)
      .set('X-Forwarded-For', '203.0.113.7')
      .set('X-Request-Id', 'proxy-untrusted')
      .expect(200);
    const line = await requestLine(service, 'proxy-untrusted');
    expect(line.req?.remoteAddress).toEqual(expect.stringMatching(LOOPBACK));
    expect(JSON.stringify(line)).not.toContain('203.0.113.7');
  });

  it('sends helmet headers and no X-Powered-By on every kind of response', async () => {
    for (const path of [
      '/health/live',
      '/api/Requirement/GetRequirements',
      '/api/Transaction/GetTransaction/999999',
      '/no-such-resource',
    ]) {
      const response = await request(service.baseUrl).get(path);
      const headers = response.headers as Record<string, string | undefined>;
      expect({ path, nosniff: headers['x-content-type-options'] }).toEqual({
        path,
        nosniff: 'nosniff',
      });
      expect(headers['x-frame-options']).toMatch(/^(?:DENY|SAMEORIGIN)$/);
      expect(headers['content-security-policy']).toContain("default-src 'self'");
      expect(headers['content-security-policy']).toContain("frame-ancestors 'self'");
      expect(headers['x-powered-by']).toBeUndefined();
    }
  });

  it('answers no CORS when CORS_ORIGINS is unset', async () => {
    const preflight = await request(service.baseUrl)
      .options(UPDATE_AGENTS)
      .set('Origin', APP_ORIGIN)
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'Content-Type');
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    expect(preflight.headers['access-control-allow-methods']).toBeUndefined();
    expect(preflight.headers['access-control-allow-headers']).toBeUndefined();

    const simple = await request(service.baseUrl)
      .get(`/api/Transaction/GetTransaction/${DEMO_TRANSACTION}`)
      .set('Origin', APP_ORIGIN)
      .expect(200);
    expect(simple.headers['access-control-allow-origin']).toBeUndefined();
    expect(simple.headers['access-control-expose-headers']).toBeUndefined();
  });
});

describe('log level and format of the spawned service', () => {
  const REFUSED_AT_START_UP: [name: string, value: string][] = [
    ['LOG_LEVEL', 'loud'],
    ['LOG_FORMAT', 'xml'],
    ['CORS_ORIGINS', 'not a url'],
    ['CORS_ORIGINS', 'https://app.example.com/path'],
    ['TRUST_PROXY', 'every$thing'],
    ['SHUTDOWN_TIMEOUT_MS', 'soon'],
  ];
  const started = startedTogether<{
    warn: () => Promise<ServiceProcess>;
    pretty: () => Promise<ServiceProcess>;
    [refusal: `${string}=${string}`]: () => Promise<CommandResult>;
  }>({
    warn: () => spawnService({ LOG_LEVEL: 'warn' }),
    pretty: () => spawnService({ LOG_FORMAT: 'pretty' }),
    ...Object.fromEntries(
      REFUSED_AT_START_UP.map(([name, value]) => [
        `${name}=${value}`,
        async () => {
          const directory = await directories.make();
          return runNode(SERVICE_MAIN, [], {
            cwd: directory,
            env: { [name]: value, DATABASE_URL: `sqlite:${join(directory, 'never.sqlite')}` },
            timeoutMs: 15000,
          });
        },
      ]),
    ),
  });

  it('with LOG_LEVEL=warn writes no line for a 200 and a level-40 line for a 404', async () => {
    const service = await started('warn');
    try {
      await request(service.baseUrl).get('/health/live').set('X-Request-Id', 'warn-ok').expect(200);
      await request(service.baseUrl)
        .get(`/api/Transaction/GetAgentHistory/${DEMO_TRANSACTION}`)
        .set('X-Request-Id', 'warn-ok-api')
        .expect(200);
      await request(service.baseUrl)
        .get('/api/Transaction/GetTransaction/999999')
        .set('X-Request-Id', 'warn-missing')
        .expect(404);

      const line = await requestLine(service, 'warn-missing');
      expect(line).toMatchObject({ level: 'warn', res: { statusCode: 404 } });
      expect(linesOf(service, 'warn-ok')).toEqual([]);
      expect(linesOf(service, 'warn-ok-api')).toEqual([]);
      // Start-up chatter at info is gone too.
      expect(
        logLinesOf(service).filter((logged) => ['trace', 'debug', 'info'].includes(logged.level)),
      ).toEqual([]);
    } finally {
      await service.stop();
    }
  });

  it('with LOG_FORMAT=pretty writes readable lines, not JSON', async () => {
    const service = await started('pretty');
    try {
      await request(service.baseUrl).get(LOGGED_ROUTE).set('X-Request-Id', 'pretty-1').expect(200);
      await eventually(() => service.stdout.includes('pretty-1'), 'the pretty request line');
      const lines = service.stdout.split('\n').filter((line) => line.trim() !== '');
      const requestLines = lines.filter((line) => line.includes('pretty-1'));
      expect(requestLines).toHaveLength(1);
      expect(requestLines[0]).toContain(`GET ${LOGGED_ROUTE} 200`);
      expect(requestLines[0]).toMatch(/\bINFO\b/);
      for (const line of lines) expect(line.trimStart()).not.toMatch(/^\{/);
    } finally {
      await service.stop();
    }
  });

  it.each(REFUSED_AT_START_UP)(
    'stops at start-up, naming %s, when it is %p',
    async (name, value) => {
      const result = await started(`${name}=${value}`);
      expect(result.signal).toBeNull();
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain(name);
      expect(result.stderr).toContain(value);
    },
  );
});

describe('behind a gateway: TRUST_PROXY=loopback and CORS_ORIGINS', () => {
  let service: ServiceProcess;

  beforeAll(async () => {
    service = await spawnService({ TRUST_PROXY: 'loopback', CORS_ORIGINS: APP_ORIGIN });
  });

  afterAll(async () => {
    await service?.stop();
  });

  it('logs the client address the trusted gateway forwards', async () => {
    await request(service.baseUrl)
      .get(LOGGED_ROUTE)
      .set('X-Forwarded-For', '203.0.113.7')
      .set('X-Request-Id', 'proxy-trusted')
      .expect(200);
    expect((await requestLine(service, 'proxy-trusted')).req?.remoteAddress).toBe('203.0.113.7');

    await request(service.baseUrl)
      .get(LOGGED_ROUTE)
      .set('X-Request-Id', 'proxy-direct')
      .expect(200);
    expect((await requestLine(service, 'proxy-direct')).req?.remoteAddress).toEqual(
      expect.stringMatching(LOOPBACK),
    );
  });

  it('answers a preflight from the configured origin', async () => {
    const preflight = await request(service.baseUrl)
      .options(UPDATE_AGENTS)
      .set('Origin', APP_ORIGIN)
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'Content-Type, If-Match');
    expect(preflight.status).toBeGreaterThanOrEqual(200);
    expect(preflight.status).toBeLessThan(300);
    expect(preflight.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
    expect(preflight.headers['access-control-allow-methods']).toContain('POST');
  });

  it('exposes ETag and X-Request-Id to the configured origin', async () => {
    const response = await request(service.baseUrl)
      .get(`/api/Transaction/GetTransaction/${DEMO_TRANSACTION}`)
      .set('Origin', APP_ORIGIN)
      .expect(200);
    expect(response.headers['access-control-allow-origin']).toBe(APP_ORIGIN);
    const exposed = String(response.headers['access-control-expose-headers'] ?? '')
      .split(',')
      .map((name) => name.trim().toLowerCase());
    expect(exposed).toEqual(expect.arrayContaining(['etag', 'x-request-id']));
  });

  it('does not allow another origin', async () => {
    const other = 'https://evil.example.net';
    const preflight = await request(service.baseUrl)
      .options(UPDATE_AGENTS)
      .set('Origin', other)
      .set('Access-Control-Request-Method', 'POST');
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    const simple = await request(service.baseUrl)
      .get(`/api/Transaction/GetTransaction/${DEMO_TRANSACTION}`)
      .set('Origin', other)
      .expect(200);
    expect(simple.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('graceful shutdown on SIGTERM', () => {
  const started: ServiceProcess[] = [];
  const agents: Agent[] = [];

  afterEach(async () => {
    for (const agent of agents.splice(0)) agent.destroy();
    await Promise.allSettled(started.splice(0).map((service) => service.stop()));
  });

  const services = startedTogether({
    drain: () => spawnService({ SHUTDOWN_DRAIN_MS: '1500' }),
    keepAlive: () => spawnService(),
    inFlight: () => spawnService(),
    gateway: () => spawnService(),
    timeout: () => spawnService({ SHUTDOWN_TIMEOUT_MS: '500' }),
  });

  /** The test's own service, stopped after it whatever happens. */
  const serviceFor = async (name: Parameters<typeof services>[0]) => {
    const service = await services(name);
    started.push(service);
    return service;
  };

  const status = async (service: ServiceProcess, path: string) =>
    (await request(service.baseUrl).get(path)).status;

  it('turns readiness 503 first and keeps serving for SHUTDOWN_DRAIN_MS, then closes the listener', async () => {
    const service = await serviceFor('drain');
    expect(await status(service, '/health/ready')).toBe(200);

    const signalled = Date.now();
    service.child.kill('SIGTERM');
    let ready = 200;
    while (ready === 200 && Date.now() - signalled < 1000) {
      ready = await status(service, '/health/ready');
    }
    expect(ready).toBe(503);
    // The gateway may still send requests until it notices: they are answered.
    expect(await status(service, '/health/live')).toBe(200);
    await request(service.baseUrl)
      .get(`/api/Transaction/GetTransaction/${DEMO_TRANSACTION}`)
      .expect(200);
    expect(Date.now() - signalled).toBeLessThan(1500);

    expect(await refusesNewConnections(service.port, 3000)).toBe(true);
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(1400);
    expect(await service.exit(5000)).toEqual({ code: 0, signal: null });
  });

  it('answers every request in flight on 32 keep-alive connections, closing each after it: none is reset', async () => {
    const service = await serviceFor('keepAlive');
    const connections = 32;
    const agent = new Agent({ keepAlive: true, maxSockets: connections });
    agents.push(agent);
    // Each connection has served a request already and is kept alive, as a gateway's are.
    await Promise.all(
      Array.from({ length: connections }, () =>
        startGet(service, agent).then((response) => expect(response.status).toBe(200)),
      ),
    );
    const inFlight = await Promise.all(
      Array.from({ length: connections }, () => startUpdateInFlight(service, agent)),
    );

    service.child.kill('SIGTERM');
    expect(await refusesNewConnections(service.port)).toBe(true);
    inFlight.forEach(finishUpdate);
    const outcomes = await Promise.all(
      inFlight.map(({ response }) =>
        response.then(
          ({ status: answered, headers }) => `${answered} ${headers.connection}`,
          (error: NodeJS.ErrnoException) => error.code ?? error.message,
        ),
      ),
    );

    expect(outcomes).toEqual(Array.from({ length: connections }, () => '204 close'));
    await Promise.all(inFlight.map(({ connectionClosed }) => connectionClosed));
    expect(await service.exit(5000)).toEqual({ code: 0, signal: null });
  });

  it('stops accepting connections, finishes the request in flight, and exits with code 0', async () => {
    const service = await serviceFor('inFlight');
    const inFlight = await startUpdateInFlight(service, false);

    service.child.kill('SIGTERM');
    expect(await refusesNewConnections(service.port)).toBe(true);
    expect(service.running).toBe(true);

    finishUpdate(inFlight);
    const response = await inFlight.response;
    expect(response.status).toBe(204);
    expect(response.text).toBe('');

    expect(await service.exit(5000)).toEqual({ code: 0, signal: null });
  });

  it("closes a gateway's keep-alive connection after the request in flight, so the process exits promptly", async () => {
    const service = await serviceFor('gateway');
    const agent = new Agent({ keepAlive: true });
    agents.push(agent);
    const inFlight = await startUpdateInFlight(service, agent);

    service.child.kill('SIGTERM');
    expect(await refusesNewConnections(service.port)).toBe(true);
    finishUpdate(inFlight);
    const response = await inFlight.response;
    expect(response.status).toBe(204);

    // Left open, the connection would hold the process until the keep-alive timeout, and would take
    // the gateway's next request after "stop accepting": the server ends it (`Connection: close`, or
    // closing it once idle) and the process exits soon after.
    const connectionClosed = await Promise.race([
      inFlight.connectionClosed.then(() => true),
      delay(1000).then(() => false),
    ]);
    const exitedPromptly = await service.exit(3000).then(
      () => true,
      () => false,
    );
    expect({ connectionClosed, exitedPromptly }).toEqual({
      connectionClosed: true,
      exitedPromptly: true,
    });
  });

  it('exits non-zero within SHUTDOWN_TIMEOUT_MS when a request never finishes', async () => {
    const service = await serviceFor('timeout');
    const inFlight = await startUpdateInFlight(service, false);

    const signalled = Date.now();
    service.child.kill('SIGTERM');
    const exited = await service.exit(2000);
    const elapsed = Date.now() - signalled;

    expect(exited.signal).toBeNull();
    expect(exited.code).toEqual(expect.any(Number));
    expect(exited.code).not.toBe(0);
    // It waited for the request up to the bound, not less.
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(2000);
    // The client sees its connection end, not an answer.
    await expect(inFlight.response).rejects.toThrow();
  });
});
