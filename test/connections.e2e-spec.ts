import { mkdtemp, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import request from 'supertest';
import { responds, ServiceProcess } from './support/processes';

/** A raw connection: what it has received, and how long after opening it closed. */
interface RawConnection {
  readonly socket: Socket;
  readonly received: () => string;
  readonly closedAfterMs: Promise<number>;
}

function open(port: number): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const opened = Date.now();
    const socket = connect(port, '127.0.0.1');
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

/** Writes one piece every interval until the connection closes. */
function trickle(connection: RawConnection, piece: string, intervalMs: number): void {
  const timer = setInterval(() => {
    if (!connection.socket.destroyed) connection.socket.write(piece);
  }, intervalMs);
  void connection.closedAfterMs.then(() => clearInterval(timer));
}

describe('connection limits of the spawned service (SQLite)', () => {
  let service: ServiceProcess;
  let directory: string;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'property-sales-connections-'));
    service = await ServiceProcess.start({
      cwd: directory,
      env: {
        DATABASE_URL: `sqlite:${join(directory, 'service.sqlite')}`,
        LOG_LEVEL: 'warn',
        HTTP_HEADERS_TIMEOUT_MS: '1000',
        HTTP_REQUEST_TIMEOUT_MS: '4000',
        HTTP_KEEP_ALIVE_TIMEOUT_MS: '1500',
        HTTP_MAX_CONNECTIONS: '20',
        BODY_MIN_BYTES_PER_SECOND: '100',
        BODY_RATE_GRACE_MS: '1000',
      },
    });
    await service.ready();
  });

  afterAll(async () => {
    await service.stop();
    await rm(directory, { recursive: true, force: true });
  });

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

  it('refuses connections past the cap, and serves again once the slow ones have timed out', async () => {
    const held = await Promise.all(Array.from({ length: 20 }, () => open(service.port)));
    await delay(200);
    expect(await responds(service.port, '/health/live', 500)).toBe(false);

    await Promise.all(held.map((connection) => connection.closedAfterMs));
    await request(service.baseUrl).get('/health/live').expect(200);
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
