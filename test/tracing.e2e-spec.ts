import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { createConnection } from 'mysql2/promise';
import { AGENTS_CHANGED } from '../src/transaction/transaction.events';
import {
  type Delivery,
  EventCollector,
  type PublishedEvent,
  TEST_BROKER_URL,
  uniqueExchange,
} from './support/event-collector';
import {
  childEnvironment,
  freePort,
  jsonLines,
  REPO_ROOT,
  ServiceProcess,
  startedTogether,
  startOnNewSqlite,
} from './support/processes';
import { createTestDatabase, type TestDatabase } from './support/test-database';
import { until, WebhookReceiver } from './support/webhook-receiver';
import { describeOnMariaDb } from './support/test-app';

/**
 * Tracing through real parts: the built service started as operators start it, with the standard
 * OTEL_* variables pointing its OTLP exporter (HTTP/JSON) at a collector this test runs, and its log
 * lines read from stdout. The service continues a caller's `traceparent`, names the server span by the
 * route template, traces no probe, records no header value, body, SQL parameter or credential of the
 * query string, writes the trace ids into the request's log line, and neither loads the SDK nor sends
 * anything when tracing is off.
 */

interface ReceivedSpan {
  readonly scope: string;
  readonly name: string;
  readonly kind: number;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly attributes: Record<string, unknown>;
}

/** OTLP's span kind of a server span. */
const SERVER = 2;

interface LogLine {
  readonly reqId?: string;
  readonly trace_id?: string;
  readonly span_id?: string;
  readonly [field: string]: unknown;
}

interface OtlpAttribute {
  readonly key: string;
  readonly value: Record<string, unknown>;
}

interface OtlpExport {
  readonly resourceSpans?: {
    readonly scopeSpans?: {
      readonly scope?: { readonly name?: string };
      readonly spans?: (Omit<ReceivedSpan, 'scope' | 'attributes'> & {
        readonly attributes?: OtlpAttribute[];
      })[];
    }[];
  }[];
}

/** A collector of the test's own: takes OTLP/HTTP JSON exports and keeps their spans and raw bodies. */
class Collector {
  readonly spans: ReceivedSpan[] = [];
  /** Every export as sent, to search for what must never be recorded. */
  readonly bodies: string[] = [];

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(): Promise<Collector> {
    const port = await freePort();
    const collector: Collector = new Collector(
      createServer((request, response) => collector.receive(request, response)),
      port,
    );
    await new Promise<void>((resolve) => collector.server.listen(port, '127.0.0.1', resolve));
    return collector;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  private receive(request: IncomingMessage, response: ServerResponse): void {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      this.bodies.push(body);
      if (request.url === '/v1/traces') {
        for (const resource of (JSON.parse(body) as OtlpExport).resourceSpans ?? [])
          for (const scope of resource.scopeSpans ?? [])
            for (const span of scope.spans ?? [])
              this.spans.push({
                ...span,
                scope: scope.scope?.name ?? '',
                attributes: Object.fromEntries(
                  (span.attributes ?? []).map(({ key, value }) => [key, Object.values(value)[0]]),
                ),
              });
      }
      response.setHeader('Content-Type', 'application/json');
      response.end('{}');
    });
  }

  /** The spans of a trace, once `done` says they have all arrived. */
  async trace(
    traceId: string,
    done: (spans: ReceivedSpan[]) => boolean = (spans) => spans.some(isServerSpan),
  ): Promise<ReceivedSpan[]> {
    const deadline = Date.now() + 10000;
    for (;;) {
      const spans = this.spans.filter((span) => span.traceId === traceId);
      if (done(spans)) return spans;
      if (Date.now() > deadline)
        throw new Error(`Trace ${traceId} incomplete: ${JSON.stringify(this.spans, null, 1)}`);
      await delay(50);
    }
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const isServerSpan = (span: ReceivedSpan) => span.kind === SERVER;

/** A W3C traceparent of a caller's span, sampled. */
function callerTraceparent(): { traceId: string; parentId: string; header: string } {
  const traceId = randomBytes(16).toString('hex');
  const parentId = randomBytes(8).toString('hex');
  return { traceId, parentId, header: `00-${traceId}-${parentId}-01` };
}

const GET_TRANSACTION_ROUTE = '/api/Transaction/GetTransaction/:transaction_id';
const DEMO_TRANSACTION = 1001;

/** The standard variables that turn tracing on, exporting to `endpoint` in OTLP/HTTP JSON. */
function tracingTo(endpoint: string, scheduleDelayMs = 100): Record<string, string> {
  return {
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_BSP_SCHEDULE_DELAY: String(scheduleDelayMs),
  };
}

const directories: string[] = [];
const services: ServiceProcess[] = [];
const collectors: Collector[] = [];

async function startCollector(): Promise<Collector> {
  const collector = await Collector.start();
  collectors.push(collector);
  return collector;
}

/** The service on a SQLite database of its own, with the demo data. */
async function spawnService(env: Record<string, string>): Promise<ServiceProcess> {
  const directory = await mkdtemp(join(tmpdir(), 'property-sales-tracing-'));
  directories.push(directory);
  const service = await startOnNewSqlite(directory, env);
  services.push(service);
  return service;
}

afterAll(async () => {
  await Promise.allSettled(services.splice(0).map((service) => service.stop()));
  await Promise.all(collectors.splice(0).map((collector) => collector.close()));
  await Promise.all(directories.map((path) => rm(path, { recursive: true, force: true })));
});

/** Sends a request carrying a request id, and the given headers; its status. */
async function send(
  service: ServiceProcess,
  path: string,
  requestId: string,
  init: { headers?: Record<string, string>; method?: string; body?: string } = {},
): Promise<number> {
  const response = await fetch(`${service.baseUrl}${path}`, {
    method: init.method,
    body: init.body,
    headers: { 'X-Request-Id': requestId, ...init.headers },
  });
  await response.arrayBuffer();
  return response.status;
}

/** Every line the service wrote on stdout, parsed; fails on one that is not JSON. */
const logLines = (service: ServiceProcess) => jsonLines<LogLine>(service.stdout);

/** The request line of one request id, once it is written. */
async function requestLine(service: ServiceProcess, id: string): Promise<LogLine> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const line = logLines(service).find((logged) => logged.reqId === id);
    if (line) return line;
    if (Date.now() > deadline) throw new Error(`No log line for ${id}:\n${service.stdout}`);
    await delay(20);
  }
}

describe('tracing on, exporting to a collector', () => {
  let collector: Collector;
  let service: ServiceProcess;

  beforeAll(async () => {
    collector = await startCollector();
    service = await spawnService({
      ...tracingTo(collector.endpoint),
      LOG_REDACT_QUERY_PARAMETERS: 'partner_pin',
    });
  });

  it("continues the caller's trace: the server span is its child, named by the route template, and the log line carries its ids", async () => {
    const caller = callerTraceparent();
    const status = await send(
      service,
      `/api/Transaction/GetTransaction/${DEMO_TRANSACTION}`,
      'with-parent',
      {
        headers: { traceparent: caller.header },
      },
    );
    expect(status).toBe(200);

    const spans = await collector.trace(
      caller.traceId,
      (received) =>
        received.some(isServerSpan) && received.some((span) => span.name === 'getTransaction'),
    );
    const server = spans.find(isServerSpan)!;
    expect(server).toMatchObject({
      name: `GET ${GET_TRANSACTION_ROUTE}`,
      parentSpanId: caller.parentId,
      scope: '@opentelemetry/instrumentation-http',
    });
    expect(server.attributes).toMatchObject({
      'http.route': GET_TRANSACTION_ROUTE,
      'http.response.status_code': 200,
    });
    // The NestJS handler, within the server span.
    const handler = spans.find((span) => span.name === 'TransactionController.getTransaction');
    expect(handler?.parentSpanId).toBe(server.spanId);

    const line = await requestLine(service, 'with-parent');
    expect(line).toMatchObject({ trace_id: caller.traceId, span_id: server.spanId });
  });

  it('starts a trace of its own for a request without traceparent, and logs its ids', async () => {
    await send(service, '/api/Requirement/GetRequirements', 'no-parent');
    const line = await requestLine(service, 'no-parent');
    expect(line.trace_id).toMatch(/^[0-9a-f]{32}$/);
    const server = (await collector.trace(line.trace_id!)).find(isServerSpan)!;
    expect(server.spanId).toBe(line.span_id);
    expect(server.parentSpanId || undefined).toBeUndefined();
    expect(server.name).toBe('GET /api/Requirement/GetRequirements');
  });

  it("follows the caller's decision not to sample: the line keeps the trace id, no span is sent", async () => {
    const caller = callerTraceparent();
    await send(service, `/api/Transaction/GetTransaction/${DEMO_TRANSACTION}`, 'not-sampled', {
      headers: { traceparent: caller.header.replace(/-01$/, '-00') },
    });
    const line = await requestLine(service, 'not-sampled');
    expect(line.trace_id).toBe(caller.traceId);
    expect(line).not.toHaveProperty('span_id');
    // A sampled request after it: once its span is in, the other's would be too.
    const after = callerTraceparent();
    await send(service, '/api/Requirement/GetRequirements', 'after-not-sampled', {
      headers: { traceparent: after.header },
    });
    await collector.trace(after.traceId);
    expect(collector.spans.filter((span) => span.traceId === caller.traceId)).toEqual([]);
  });

  it('names the span by the route whatever case the path came in, and never by the raw path', async () => {
    const caller = callerTraceparent();
    await send(service, `/API/transaction/gettransaction/${DEMO_TRANSACTION}`, 'any-case', {
      headers: { traceparent: caller.header },
    });
    const server = (await collector.trace(caller.traceId)).find(isServerSpan)!;
    expect(server.name).toBe(`GET ${GET_TRANSACTION_ROUTE}`);
  });

  it('makes no trace of the health probes and of /metrics', async () => {
    const probes = callerTraceparent();
    for (const path of ['/health/live', '/health/ready', '/metrics', '/Health/Live/'])
      expect(
        await send(service, path, `probe-${path}`, { headers: { traceparent: probes.header } }),
      ).toBe(200);
    // A traced request after them: once its span is in, theirs would be too.
    const after = callerTraceparent();
    await send(service, '/api/Requirement/GetRequirements', 'after-probes', {
      headers: { traceparent: after.header },
    });
    await collector.trace(after.traceId);
    expect(collector.spans.filter((span) => span.traceId === probes.traceId)).toEqual([]);
    expect(
      collector.spans.filter((span) =>
        /^\/(health|metrics)/i.test(String(span.attributes['url.path'])),
      ),
    ).toEqual([]);
  });

  it('records no credentials and no body', async () => {
    const secrets = ['Bearer token-S3CRET', 'key-S3CRET', 'body-S3CRET'];
    const caller = callerTraceparent();
    await send(service, '/api/Transaction/UpdateAgents', 'secrets', {
      method: 'POST',
      headers: {
        traceparent: caller.header,
        Authorization: secrets[0],
        'X-Api-Key': secrets[1],
        'Content-Type': 'application/json',
      },
      body: JSON.stringify({
        transaction_id: DEMO_TRANSACTION,
        financetype: 'Cash',
        brokername: secrets[2],
      }),
    });
    const server = (await collector.trace(caller.traceId)).find(isServerSpan)!;
    expect(server.name).toBe('POST /api/Transaction/UpdateAgents');
    for (const secret of secrets)
      for (const body of collector.bodies) expect(body).not.toContain(secret);
  });

  it('records no credential of the query string: url.query keeps each name, the value REDACTED, the rest as sent', async () => {
    const caller = callerTraceparent();
    const query = [
      'limit=2',
      'api_key=key-QUERY-S3CRET',
      'Access_Token=token-QUERY-S3CRET',
      'X-Amz-Signature=signature-QUERY-S3CRET',
      'partner_pin=pin-QUERY-S3CRET',
      'status=a%26b+c',
    ].join('&');
    expect(
      await send(service, `/api/Transaction/ListTransactions?${query}`, 'query-secrets', {
        headers: { traceparent: caller.header },
      }),
    ).toBe(200);
    const server = (await collector.trace(caller.traceId)).find(isServerSpan)!;
    expect(server.attributes['url.query']).toBe(
      'limit=2&api_key=REDACTED&Access_Token=REDACTED&X-Amz-Signature=REDACTED&partner_pin=REDACTED&status=a%26b+c',
    );
    for (const body of collector.bodies) expect(body).not.toContain('QUERY-S3CRET');
    await requestLine(service, 'query-secrets');
    expect(service.stdout).not.toContain('QUERY-S3CRET');
  });
});

describe('tracing without a collector that answers', () => {
  // Accepts connections and never answers, as a collector behind a dead route does.
  const silent: TcpServer = createTcpServer(() => undefined);
  const held: Socket[] = [];
  silent.on('connection', (socket) => held.push(socket));

  const started = startedTogether({
    refused: async () =>
      spawnService({
        ...tracingTo(`http://127.0.0.1:${await freePort()}`),
        // The exporter retries for this long before it reports a failure.
        OTEL_EXPORTER_OTLP_TIMEOUT: '500',
      }),
    silent: async () => {
      const port = await freePort();
      await new Promise<void>((resolve) => silent.listen(port, '127.0.0.1', resolve));
      // Nothing is exported before the shutdown flushes.
      return spawnService(tracingTo(`http://127.0.0.1:${port}`, 60000));
    },
    flushed: async () => {
      const collector = await startCollector();
      return { collector, service: await spawnService(tracingTo(collector.endpoint, 60000)) };
    },
  });

  afterAll(async () => {
    held.forEach((socket) => socket.destroy());
    if (silent.listening) await new Promise((resolve) => silent.close(resolve));
  });

  it('starts and answers when the collector refuses connections, and reports the failed exports as JSON lines', async () => {
    const service = await started('refused');
    const caller = callerTraceparent();
    const path = `/api/Transaction/GetTransaction/${DEMO_TRANSACTION}`;
    expect(await send(service, path, 'refused', { headers: { traceparent: caller.header } })).toBe(
      200,
    );
    expect(await requestLine(service, 'refused')).toMatchObject({ trace_id: caller.traceId });
    const deadline = Date.now() + 10000;
    const reported = () =>
      logLines(service).find(
        (line) => line.component === 'opentelemetry' && String(line.msg).includes('ECONNREFUSED'),
      );
    while (!reported() && Date.now() < deadline) await delay(100);
    expect(reported()).toMatchObject({ level: 'error' });
    expect(await service.stop()).toEqual({ code: 0, signal: null });
    // Every line JSON, the SDK's included.
    expect(logLines(service).length).toBeGreaterThan(0);
    expect(service.stderr).toBe('');
  });

  it('shuts down within a second of its last request when the collector never answers', async () => {
    const service = await started('silent');
    expect(
      await send(service, `/api/Transaction/GetTransaction/${DEMO_TRANSACTION}`, 'silent'),
    ).toBe(200);
    const stopping = Date.now();
    expect(await service.stop()).toEqual({ code: 0, signal: null });
    expect(Date.now() - stopping).toBeLessThan(3000);
  });

  it('sends the spans still batched when it shuts down', async () => {
    const { collector, service } = await started('flushed');
    const caller = callerTraceparent();
    await send(service, `/api/Transaction/GetTransaction/${DEMO_TRANSACTION}`, 'flushed', {
      headers: { traceparent: caller.header },
    });
    expect(collector.spans).toEqual([]);
    expect(await service.stop()).toEqual({ code: 0, signal: null });
    expect((await collector.trace(caller.traceId)).find(isServerSpan)?.name).toBe(
      `GET ${GET_TRANSACTION_ROUTE}`,
    );
  });
});

describe('tracing off', () => {
  /** A service told to export to a collector, and how it is switched off. */
  const switchedOff = async (off: Record<string, string>) => {
    const collector = await startCollector();
    return { collector, service: await spawnService({ ...tracingTo(collector.endpoint), ...off }) };
  };
  const started = startedTogether({
    default: () => spawnService({}),
    'OTEL_SDK_DISABLED=true': () => switchedOff({ OTEL_SDK_DISABLED: 'true' }),
    'OTEL_TRACES_EXPORTER=none': () => switchedOff({ OTEL_TRACES_EXPORTER: 'none' }),
  });

  it('by default: the log line carries the trace id of a valid traceparent, nothing for an invalid one or none', async () => {
    const service = await started('default');
    const caller = callerTraceparent();
    const path = `/api/Transaction/GetTransaction/${DEMO_TRANSACTION}`;
    await send(service, path, 'off-valid', { headers: { traceparent: caller.header } });
    const valid = await requestLine(service, 'off-valid');
    expect(valid.trace_id).toBe(caller.traceId);
    expect(valid).not.toHaveProperty('span_id');

    const invalid = [
      '00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01',
      `01-${caller.traceId}-${caller.parentId}-01`,
      `00-${'0'.repeat(32)}-${caller.parentId}-01`,
      `00-${caller.traceId}-${'0'.repeat(16)}-01`,
      `${caller.header}-extra`,
      `00-${caller.traceId}-${caller.parentId}`,
    ];
    for (const [index, header] of invalid.entries())
      await send(service, path, `off-invalid-${index}`, { headers: { traceparent: header } });
    await send(service, path, 'off-none');
    for (const id of [...invalid.keys()]
      .map((index) => `off-invalid-${index}`)
      .concat('off-none')) {
      const line = await requestLine(service, id);
      expect(line).not.toHaveProperty('trace_id');
      expect(line).not.toHaveProperty('span_id');
    }
  });

  it.each(['OTEL_SDK_DISABLED=true', 'OTEL_TRACES_EXPORTER=none'] as const)(
    'by %s, whatever else is set: nothing reaches the collector',
    async (off) => {
      const { collector, service } = await started(off);
      const caller = callerTraceparent();
      await send(service, `/api/Transaction/GetTransaction/${DEMO_TRANSACTION}`, 'switched-off', {
        headers: { traceparent: caller.header },
      });
      expect(await requestLine(service, 'switched-off')).toMatchObject({
        trace_id: caller.traceId,
      });
      expect(await service.stop()).toEqual({ code: 0, signal: null });
      expect(collector.bodies).toEqual([]);
    },
  );

  it('does not load the SDK unless a variable asks for it', async () => {
    const loaded = async (env: Record<string, string>) => {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [
          '-e',
          `require(${JSON.stringify(join(REPO_ROOT, 'dist', 'src', 'tracing', 'tracing.js'))});` +
            `console.log(Object.keys(require.cache).filter((path) => path.includes('@opentelemetry')).length)`,
        ],
        { env: childEnvironment(env) },
      );
      return Number(stdout.trim());
    };
    const [unasked, disabled, asked] = await Promise.all([
      loaded({}),
      loaded({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'console' }),
      loaded({ OTEL_TRACES_EXPORTER: 'console' }),
    ]);
    expect(unasked).toBe(0);
    expect(disabled).toBe(0);
    expect(asked).toBeGreaterThan(0);
  });
});

describeOnMariaDb('tracing on MariaDB', () => {
  const TRANSACTION = 987654;
  const SECRET = 'broker-S3CRET';
  let collector: Collector;
  let database: TestDatabase;
  let service: ServiceProcess;

  beforeAll(async () => {
    collector = await startCollector();
    database = await createTestDatabase('mariadb');
    service = await spawnService({
      ...tracingTo(collector.endpoint),
      DATABASE_URL: database.url,
      MIGRATIONS_RUN: 'true',
      AUTH_MODE: 'none',
      // Background work that polls the database every 50 ms: the webhooks' dispatcher, the feed's.
      WEBHOOKS: 'true',
      WEBHOOKS_ALLOW_HTTP: 'true',
      WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
      EVENTS_FEED: 'true',
      EVENTS_POLL_MS: '50',
    });
    const connection = await createConnection({ uri: database.url.replace(/^mariadb:/, 'mysql:') });
    try {
      await connection.query(
        `INSERT INTO sales_transaction (transaction_id, row_version, financetype) VALUES (${TRANSACTION}, 1, 'Cash')`,
      );
    } finally {
      await connection.end();
    }
  });

  afterAll(async () => {
    await service?.stop();
    await database?.drop();
  });

  const databaseSpans = (spans: ReceivedSpan[]) =>
    spans.filter((span) => span.scope === '@opentelemetry/instrumentation-mysql2');

  it("records GetTransaction's statement batch as a database span of the request's trace, without its values", async () => {
    const caller = callerTraceparent();
    expect(
      await send(service, `/api/Transaction/GetTransaction/${TRANSACTION}`, 'mariadb-read', {
        headers: { traceparent: caller.header },
      }),
    ).toBe(200);
    const spans = await collector.trace(
      caller.traceId,
      (received) => received.some(isServerSpan) && databaseSpans(received).length > 0,
    );
    // The transaction and its checklist, read in one round trip on a pooled connection.
    const query = databaseSpans(spans).find((span) =>
      /^SELECT .*\?; SELECT /s.test(String(span.attributes['db.query.text'])),
    );
    expect(query?.attributes).toMatchObject({ 'db.system.name': 'mysql' });
    expect(String(query?.attributes['db.query.text'])).not.toContain(String(TRANSACTION));
    // Within the request: its parent is one of the trace's spans.
    expect(spans.map((span) => span.spanId)).toContain(query?.parentSpanId);
  });

  it("records UpdateAgents' writes without the body's values", async () => {
    const caller = callerTraceparent();
    expect(
      await send(service, '/api/Transaction/UpdateAgents', 'mariadb-write', {
        method: 'POST',
        headers: { traceparent: caller.header, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          transaction_id: TRANSACTION,
          financetype: 'Cash',
          brokername: SECRET,
        }),
      }),
    ).toBe(204);
    const spans = await collector.trace(
      caller.traceId,
      (received) => received.some(isServerSpan) && databaseSpans(received).length >= 2,
    );
    expect(databaseSpans(spans).length).toBeGreaterThanOrEqual(2);
    for (const body of collector.bodies) expect(body).not.toContain(SECRET);
  });

  it('makes no trace of the background polls that find nothing, and one of each webhook delivery they make', async () => {
    const receiver = await WebhookReceiver.start();
    try {
      const created = await fetch(`${service.baseUrl}/api/Webhook/CreateWebhook`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', traceparent: callerTraceparent().header },
        body: JSON.stringify({ url: receiver.url }),
      });
      const { id } = (await created.json()) as { id: string };
      // A second of polls, twenty of each, once the subscription's first look is done.
      await delay(500);
      const before = collector.spans.length;
      await delay(1000);
      expect(collector.spans.slice(before).filter((span) => !span.parentSpanId)).toEqual([]);

      const caller = callerTraceparent();
      await send(service, '/api/Transaction/UpdateAgents', 'mariadb-webhook', {
        method: 'POST',
        headers: { traceparent: caller.header, 'Content-Type': 'application/json' },
        body: JSON.stringify({ transaction_id: TRANSACTION, financetype: 'Cash', brokerid: 7 }),
      });
      await until(() => receiver.acknowledged.length > 0, 'the delivery');
      let delivery: ReceivedSpan | undefined;
      await until(
        () =>
          (delivery = collector.spans.find(
            (span) =>
              span.name === 'webhook deliver' && span.attributes['webhook.subscription'] === id,
          )) !== undefined,
        'the delivery span',
      );
      // A trace of its own, its database writes its children.
      expect(delivery!.parentSpanId ?? '').toBe('');
      const trace = await collector.trace(
        delivery!.traceId,
        (received) => databaseSpans(received).length > 0,
      );
      expect(databaseSpans(trace).map((span) => span.parentSpanId)).toEqual(
        databaseSpans(trace).map(() => delivery!.spanId),
      );
    } finally {
      await receiver.close();
    }
  });
});

describe('the events of a traced request', () => {
  const exchange = uniqueExchange('tracing');
  let events: EventCollector;

  beforeAll(async () => {
    events = await EventCollector.open(exchange);
  });

  afterAll(() => events?.close());

  /** UpdateAgents of the demo transaction with the caller's traceparent; the event it published. */
  async function changeAgents(
    service: ServiceProcess,
    traceparent: string,
    brokerid: number,
  ): Promise<PublishedEvent> {
    expect(
      await send(service, '/api/Transaction/UpdateAgents', `events-${brokerid}`, {
        method: 'POST',
        headers: { traceparent, 'Content-Type': 'application/json' },
        body: JSON.stringify({ transaction_id: DEMO_TRANSACTION, financetype: 'Cash', brokerid }),
      }),
    ).toBe(204);
    // An AgentsChanged event: the demo data's import publishes a DataImported one too.
    const ofThisChange = ({ event }: Delivery) =>
      event.type === AGENTS_CHANGED.type &&
      (event.data as { changes: { after: unknown }[] }).changes[0].after === brokerid;
    if (!(await events.until((deliveries) => deliveries.some(ofThisChange))))
      throw new Error(`No event for brokerid ${brokerid}`);
    return events.deliveries.find(ofThisChange)!.event;
  }

  const publishing = { EVENTS_URL: TEST_BROKER_URL, EVENTS_EXCHANGE: exchange };
  const started = startedTogether({
    traced: async () => {
      const collector = await startCollector();
      return {
        collector,
        service: await spawnService({ ...tracingTo(collector.endpoint), ...publishing }),
      };
    },
    untraced: () => spawnService(publishing),
  });

  it("carries the W3C traceparent of the request's trace when tracing is on", async () => {
    const { collector, service } = await started('traced');
    const caller = callerTraceparent();
    const event = await changeAgents(service, caller.header, 701);
    expect(event.traceparent).toMatch(new RegExp(`^00-${caller.traceId}-[0-9a-f]{16}-01$`));
    const spans = await collector.trace(caller.traceId, (found) => found.some(isServerSpan));
    const spanId = (event.traceparent as string).split('-')[2];
    expect(spans.map((span) => span.spanId)).toContain(spanId);
  });

  it('carries none when tracing is off', async () => {
    const service = await started('untraced');
    const event = await changeAgents(service, callerTraceparent().header, 702);
    expect(event).not.toHaveProperty('traceparent');
  });
});
