import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { apiKeysVariable } from './support/auth-credentials';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { type Environment, RunningApp } from './support/test-app';
import { getTransactionPath, UPDATE_AGENTS } from './support/update-agents-cases';

/**
 * Answers sent before the request's body was read (413, 415, 401, 403, 429) on a keep-alive
 * connection, as a gateway pooling its upstream connections sends them. A refusal (413, 401, 403,
 * 429) says `Connection: close` and ends the connection cleanly (FIN, not a reset) once the answer is
 * out, so a refused client holds no connection. Another (415): the next request on the same
 * connection, which may be another client's, is answered at once; a rest the service drains is said
 * with `Connection: keep-alive`, one it will not read with `Connection: close`.
 */

const TRANSACTION = 4242;
const KEYS = { writer: 'ea-writer-5b1f0c9e7d3a2846', reader: 'ea-reader-9e3d1c7b5a0f2468' };
const SCOPED_KEYS = `${apiKeysVariable({ writer: KEYS.writer })},${apiKeysVariable({ reader: KEYS.reader })}:transactions:read`;
/** How long the next request on the connection may take: a dead connection takes 30 s or more. */
const NEXT_ANSWER_MS = 3000;
/** How soon after a refusal its connection ends: kept alive, it would stay open 65 s. */
const CLOSED_MS = 1000;

interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** One keep-alive connection, written byte for byte, its answers read in order. */
class RawConnection {
  private buffered = Buffer.alloc(0);
  private readonly waiting: Array<() => void> = [];
  ended = false;
  error?: Error;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      this.wake();
    });
    socket.on('end', () => {
      this.ended = true;
      this.wake();
    });
    socket.on('error', (error) => {
      this.error = error;
      this.wake();
    });
  }

  static async open(baseUrl: string): Promise<RawConnection> {
    const { hostname, port } = new URL(baseUrl);
    const socket = connect(Number(port), hostname);
    await once(socket, 'connect');
    return new RawConnection(socket);
  }

  /** Writes a request's head, then as much of `body` as `sent` says (all of it by default). */
  send(head: string, body: Buffer = Buffer.alloc(0), sent = body.length): void {
    this.socket.write(`${head}\r\n`);
    // Written whole, without waiting for the server to read it: it may answer first.
    if (sent > 0) this.socket.write(body.subarray(0, sent));
  }

  /** The next answer on the connection; rejects when none comes within `timeoutMs`. */
  async answer(timeoutMs = NEXT_ANSWER_MS): Promise<RawAnswer> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const parsed = this.parse();
      if (parsed) return parsed;
      if (this.ended || this.error)
        throw new Error(`The connection ended before an answer (${this.error?.message ?? 'FIN'})`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`No answer within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiting.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Resolves once the server has ended the connection (true), or after `timeoutMs` (false). */
  async closedWithin(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended && !this.error && !this.socket.destroyed && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    return this.ended || this.error !== undefined || this.socket.destroyed;
  }

  close(): void {
    this.socket.destroy();
  }

  private parse(): RawAnswer | undefined {
    const end = this.buffered.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const [statusLine, ...lines] = this.buffered.subarray(0, end).toString('latin1').split('\r\n');
    const headers = Object.fromEntries(
      lines.map((line) => {
        const colon = line.indexOf(':');
        return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
      }),
    );
    const length = Number(headers['content-length'] ?? 0);
    if (this.buffered.length < end + 4 + length) return undefined;
    const body = this.buffered.subarray(end + 4, end + 4 + length).toString('utf8');
    this.buffered = this.buffered.subarray(end + 4 + length);
    return { status: Number(statusLine.split(' ')[1]), headers, body };
  }

  private wake(): void {
    for (const resolve of this.waiting.splice(0)) resolve();
  }
}

/** A request head with these headers (and Host), ending before its blank line. */
function head(method: string, path: string, headers: Record<string, string | number>): string {
  const lines = Object.entries({ Host: 'service', ...headers }).map(
    ([name, value]) => `${name}: ${value}`,
  );
  return [`${method} ${path} HTTP/1.1`, ...lines, ''].join('\r\n');
}

/** An UpdateAgents body of about `bytes` bytes, in JSON or XML, that changes the broker's name. */
function bodyOf(format: 'json' | 'xml', bytes: number): Buffer {
  const name = 'x'.repeat(bytes);
  return Buffer.from(
    format === 'json'
      ? JSON.stringify({ transaction_id: TRANSACTION, financetype: 'Cash', brokername: name })
      : `<Transaction><transaction_id>${TRANSACTION}</transaction_id><financetype>Cash</financetype><brokername>${name}</brokername></Transaction>`,
  );
}

const CONTENT_TYPES = { json: 'application/json', xml: 'application/xml' } as const;

/** UpdateAgents with this body, then GetTransaction on the same connection. */
function postThenRead(
  connection: RawConnection,
  body: Buffer,
  headers: Record<string, string | number>,
  readKey = KEYS.reader,
): void {
  connection.send(head('POST', UPDATE_AGENTS, { 'Content-Length': body.length, ...headers }), body);
  connection.send(head('GET', getTransactionPath(TRANSACTION), { 'X-Api-Key': readKey }));
}

const apps: RunningApp[] = [];
const connections: RawConnection[] = [];

async function startApp(env: Environment): Promise<RunningApp> {
  const running = await RunningApp.start('sqlite::memory:', {
    AUTH_MODE: 'apikey',
    AUTH_API_KEYS: SCOPED_KEYS,
    ...env,
  });
  apps.push(running);
  await running.seed({ requirements: CATALOGUE, transactions: [transactionRecord(TRANSACTION)] });
  return running;
}

async function openOn(running: RunningApp): Promise<RawConnection> {
  const connection = await RawConnection.open(running.baseUrl);
  connections.push(connection);
  return connection;
}

/** The next answer is `status`, says `Connection: close`, and the connection ends cleanly at once. */
async function expectRefusalThatCloses(connection: RawConnection, status: number): Promise<void> {
  const refused = await connection.answer();
  expect([refused.status, refused.headers.connection]).toEqual([status, 'close']);
  expect(await connection.closedWithin(CLOSED_MS)).toBe(true);
  // A FIN after the whole answer, not a reset that could overtake it.
  expect(connection.ended).toBe(true);
  expect(connection.error).toBeUndefined();
}

afterEach(() => {
  for (const connection of connections.splice(0)) connection.close();
});

afterAll(async () => {
  await Promise.all(apps.splice(0).map((running) => running.close()));
});

describe('an answer sent before the body was read, on a keep-alive connection', () => {
  let running: RunningApp;

  beforeAll(async () => {
    running = await startApp({ BODY_LIMIT: '1mb', BODY_DRAIN_LIMIT: '4mb' });
  });

  it.each([
    ['JSON', 1_100_000, 'json'],
    ['JSON', 2_000_000, 'json'],
    ['XML', 1_100_000, 'xml'],
    ['XML', 2_000_000, 'xml'],
  ] as const)(
    'answers a %s body of %i bytes 413 and ends the connection at once',
    async (_label, bytes, format) => {
      const connection = await openOn(running);
      postThenRead(connection, bodyOf(format, bytes), {
        'Content-Type': CONTENT_TYPES[format],
        'X-Api-Key': KEYS.writer,
      });
      await expectRefusalThatCloses(connection, 413);
    },
  );

  it.each([
    ['401 without credentials', 401, { 'Content-Type': 'application/json' }],
    [
      '403 for a caller without transactions:write',
      403,
      { 'Content-Type': 'application/json', 'X-Api-Key': KEYS.reader },
    ],
  ])(
    'answers %s without reading the body, and ends the connection at once',
    async (_label, status, headers) => {
      const connection = await openOn(running);
      postThenRead(connection, bodyOf('json', 600_000), headers);
      await expectRefusalThatCloses(connection, status);
    },
  );

  it('answers 415 for a media type it does not read without reading the body, keeps the connection, and answers the next request on it', async () => {
    const connection = await openOn(running);
    const started = Date.now();
    postThenRead(connection, bodyOf('json', 2_000_000), {
      'Content-Type': 'text/plain',
      'X-Api-Key': KEYS.writer,
    });
    const refused = await connection.answer();
    expect(refused.status).toBe(415);
    expect(refused.headers.connection).toBe('keep-alive');
    const next = await connection.answer();
    expect(next.status).toBe(200);
    expect(JSON.parse(next.body)).toMatchObject({ transaction_id: TRANSACTION });
    expect(Date.now() - started).toBeLessThan(NEXT_ANSWER_MS);
  });

  it('ends the connection of a request without a body refused 401, not keeping it alive', async () => {
    const connection = await openOn(running);
    connection.send(head('GET', getTransactionPath(TRANSACTION), {}));
    await expectRefusalThatCloses(connection, 401);
  });

  it('changes nothing with a refused body', async () => {
    const connection = await openOn(running);
    postThenRead(connection, bodyOf('json', 2_000_000), {
      'Content-Type': 'application/json',
      'X-Api-Key': KEYS.writer,
    });
    expect((await connection.answer()).status).toBe(413);
    const reading = await openOn(running);
    reading.send(head('GET', getTransactionPath(TRANSACTION), { 'X-Api-Key': KEYS.reader }));
    const read = JSON.parse((await reading.answer()).body) as { brokername: unknown };
    expect(read.brokername).toBe(transactionRecord(TRANSACTION).brokername);
  });
});

describe('a rest it will not read', () => {
  let running: RunningApp;

  beforeAll(async () => {
    running = await startApp({
      BODY_LIMIT: '1mb',
      BODY_DRAIN_LIMIT: '1mb',
      HTTP_HEADERS_TIMEOUT_MS: '1000',
      HTTP_REQUEST_TIMEOUT_MS: '1500',
    });
  });

  it('answers 413 with Connection: close past BODY_DRAIN_LIMIT, and ends the connection cleanly', async () => {
    const connection = await openOn(running);
    postThenRead(connection, bodyOf('json', 3_000_000), {
      'Content-Type': 'application/json',
      'X-Api-Key': KEYS.writer,
    });
    const refused = await connection.answer();
    expect(refused.status).toBe(413);
    expect(refused.headers.connection).toBe('close');
    expect(JSON.parse(refused.body)).toMatchObject({ status: 413 });
    expect(await connection.closedWithin(NEXT_ANSWER_MS)).toBe(true);
    // A FIN after the whole answer, not a reset that could overtake it.
    expect(connection.ended).toBe(true);
    expect(connection.error).toBeUndefined();
  });

  it('answers a chunked body of unknown length with Connection: close', async () => {
    const connection = await openOn(running);
    const body = bodyOf('json', 600_000);
    const chunked = Buffer.concat([
      Buffer.from(`${body.length.toString(16)}\r\n`),
      body,
      Buffer.from('\r\n0\r\n\r\n'),
    ]);
    connection.send(
      head('POST', UPDATE_AGENTS, {
        'Transfer-Encoding': 'chunked',
        'Content-Type': 'text/plain',
        'X-Api-Key': KEYS.writer,
      }),
      chunked,
    );
    const refused = await connection.answer();
    expect(refused.status).toBe(415);
    expect(refused.headers.connection).toBe('close');
    expect(await connection.closedWithin(NEXT_ANSWER_MS)).toBe(true);
  });

  it('closes a connection whose rest stops arriving, within HTTP_REQUEST_TIMEOUT_MS', async () => {
    const connection = await openOn(running);
    const body = bodyOf('json', 600_000);
    connection.send(
      head('POST', UPDATE_AGENTS, {
        'Content-Length': body.length,
        'Content-Type': 'text/plain',
        'X-Api-Key': KEYS.writer,
      }),
      body,
      100_000,
    );
    const refused = await connection.answer();
    expect(refused.status).toBe(415);
    expect(refused.headers.connection).toBe('keep-alive');
    expect(await connection.closedWithin(1500 + NEXT_ANSWER_MS)).toBe(true);
  });
});

describe('past the rate limit', () => {
  it('answers 429 without reading the body, and ends the connection at once', async () => {
    const running = await startApp({ RATE_LIMIT: '1', RATE_LIMIT_WINDOW_SECONDS: '60' });
    const connection = await openOn(running);
    connection.send(head('GET', getTransactionPath(TRANSACTION), { 'X-Api-Key': KEYS.writer }));
    expect((await connection.answer()).status).toBe(200);
    postThenRead(
      connection,
      bodyOf('json', 600_000),
      { 'Content-Type': 'application/json', 'X-Api-Key': KEYS.writer },
      KEYS.writer,
    );
    await expectRefusalThatCloses(connection, 429);
  });
});
