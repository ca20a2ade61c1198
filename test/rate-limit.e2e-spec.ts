import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import request from 'supertest';
import { DEFAULT_AUTH_FAILURE_LIMIT } from '../src/config/app-config';
import { apiKeysVariable } from './support/auth-credentials';
import { expectProblem, type HttpResult } from './support/http-assertions';
import { freePort, ServiceProcess } from './support/processes';
import { type Environment, RunningApp } from './support/test-app';

const REQUIREMENTS = '/api/Requirement/GetRequirements';
const WINDOW_SECONDS = 60;
const LIMIT = 4;
const VALID_KEY = 'rl-valid-4c1e8b7a0d2f9635';
const GUESSES = Array.from({ length: 10 }, (_, index) => `guess-${index}-0000000000000000`);
/** The Redis every test machine and CI runs. */
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Keys of this run alone: runs in parallel, and instances of other runs, share the Redis. */
const keyPrefix = () => `property-sales-test:${process.pid}-${randomBytes(4).toString('hex')}:`;

function expectRateLimited(response: HttpResult) {
  const body = expectProblem(response, 429, { modelState: false });
  expect(body.type).toMatch(/rate_limited$/);
  expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(Number(response.headers['retry-after'])).toBeLessThanOrEqual(WINDOW_SECONDS);
}

const apps: RunningApp[] = [];

async function startApp(env: Environment): Promise<RunningApp> {
  const app = await RunningApp.start('sqlite::memory:', {
    RATE_LIMIT: String(LIMIT),
    RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
    ...env,
  });
  apps.push(app);
  return app;
}

afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

describe.each([
  ['in memory', () => ({})],
  ['in Redis', () => ({ REDIS_URL, RATE_LIMIT_KEY_PREFIX: keyPrefix() })],
])('key guessing, with limits counted %s', (_where, store) => {
  const apiKeyEnv = () => ({
    AUTH_MODE: 'apikey',
    AUTH_API_KEYS: apiKeysVariable({ valid: VALID_KEY }),
    ...store(),
  });

  it('answers a client address 429 once its failed keys reach RATE_LIMIT, even with a valid key then', async () => {
    const app = await startApp(apiKeyEnv());
    for (const guess of GUESSES.slice(0, LIMIT))
      expect((await app.http.get(REQUIREMENTS).set('X-Api-Key', guess)).status).toBe(401);
    expectRateLimited(await app.http.get(REQUIREMENTS).set('X-Api-Key', GUESSES[LIMIT]));
    // Refused before the key is checked: a 429 tells a guesser nothing about the key.
    expectRateLimited(await app.http.get(REQUIREMENTS).set('X-Api-Key', VALID_KEY));
    expectRateLimited(await app.http.get(REQUIREMENTS));
  });

  it('counts requests without credentials against the address too', async () => {
    const app = await startApp(apiKeyEnv());
    for (let index = 0; index < LIMIT; index += 1)
      expect((await app.http.get(REQUIREMENTS)).status).toBe(401);
    expectRateLimited(await app.http.get(REQUIREMENTS).set('X-Api-Key', GUESSES[0]));
  });

  it('counts keys guessed through the protected OpenAPI document alike', async () => {
    const app = await startApp({ ...apiKeyEnv(), SWAGGER: 'protected' });
    await app.http.get('/swagger-json').set('X-Api-Key', VALID_KEY).expect(200);
    for (const guess of GUESSES.slice(0, LIMIT))
      expect((await app.http.get('/swagger-json').set('X-Api-Key', guess)).status).toBe(401);
    expectRateLimited(await app.http.get('/swagger-json').set('X-Api-Key', VALID_KEY));
    expectRateLimited(await app.http.get(REQUIREMENTS).set('X-Api-Key', GUESSES[LIMIT]));
  });

  it("keeps a caller's successful requests out of its address's bucket", async () => {
    const app = await startApp(apiKeyEnv());
    await app.http.get(REQUIREMENTS).set('X-Api-Key', GUESSES[0]).expect(401);
    for (let index = 0; index < LIMIT; index += 1)
      await app.http.get(REQUIREMENTS).set('X-Api-Key', VALID_KEY).expect(200);
    expectRateLimited(await app.http.get(REQUIREMENTS).set('X-Api-Key', VALID_KEY));
    // The address has spent one request of its own.
    expect((await app.http.get(REQUIREMENTS).set('X-Api-Key', GUESSES[1])).status).toBe(401);
  });
});

describe('failed authentication, limited by default without RATE_LIMIT', () => {
  const guesses = (count: number) =>
    Array.from({ length: count }, (_, index) => `guess-${index}-0000000000000000`);
  const startWithKeys = (env: Environment = {}) =>
    startApp({
      RATE_LIMIT: '0',
      AUTH_MODE: 'apikey',
      AUTH_API_KEYS: apiKeysVariable({ valid: VALID_KEY }),
      ...env,
    });

  it(`answers an address 429 after ${DEFAULT_AUTH_FAILURE_LIMIT} failed keys in a window, a valid key too, and never counts successes`, async () => {
    const app = await startWithKeys();
    for (let index = 0; index < DEFAULT_AUTH_FAILURE_LIMIT * 2; index += 1)
      await app.http.get(REQUIREMENTS).set('X-Api-Key', VALID_KEY).expect(200);
    for (const guess of guesses(DEFAULT_AUTH_FAILURE_LIMIT))
      expect((await app.http.get(REQUIREMENTS).set('X-Api-Key', guess)).status).toBe(401);
    expectRateLimited(await app.http.get(REQUIREMENTS).set('X-Api-Key', 'one-more-guess-000000'));
    expectRateLimited(await app.http.get(REQUIREMENTS).set('X-Api-Key', VALID_KEY));
  });

  it('takes its limit from AUTH_FAILURE_LIMIT, and 0 turns it off', async () => {
    const limited = await startWithKeys({ AUTH_FAILURE_LIMIT: '2' });
    for (const guess of guesses(2))
      expect((await limited.http.get(REQUIREMENTS).set('X-Api-Key', guess)).status).toBe(401);
    expectRateLimited(await limited.http.get(REQUIREMENTS).set('X-Api-Key', VALID_KEY));

    const unlimited = await startWithKeys({ AUTH_FAILURE_LIMIT: '0' });
    for (const guess of guesses(DEFAULT_AUTH_FAILURE_LIMIT + 5))
      expect((await unlimited.http.get(REQUIREMENTS).set('X-Api-Key', guess)).status).toBe(401);
    await unlimited.http.get(REQUIREMENTS).set('X-Api-Key', VALID_KEY).expect(200);
  });
});

describe('two instances sharing REDIS_URL', () => {
  it('allow RATE_LIMIT requests together, not each', async () => {
    const shared = { AUTH_MODE: 'none', REDIS_URL, RATE_LIMIT_KEY_PREFIX: keyPrefix() };
    const [first, second] = await Promise.all([startApp(shared), startApp(shared)]);
    for (let index = 0; index < LIMIT; index += 1)
      await (index % 2 === 0 ? first : second).http.get(REQUIREMENTS).expect(200);
    expectRateLimited(await first.http.get(REQUIREMENTS));
    expectRateLimited(await second.http.get(REQUIREMENTS));
    for (const app of [first, second]) {
      const ready = await app.http.get('/health/ready').expect(200);
      expect(ready.body.details.rateLimit).toEqual({ status: 'up', store: 'redis' });
    }
  });

  it('keep apart the counts of another prefix', async () => {
    const [first, second] = await Promise.all([
      startApp({ AUTH_MODE: 'none', REDIS_URL, RATE_LIMIT_KEY_PREFIX: keyPrefix() }),
      startApp({ AUTH_MODE: 'none', REDIS_URL, RATE_LIMIT_KEY_PREFIX: keyPrefix() }),
    ]);
    for (let index = 0; index < LIMIT; index += 1) await first.http.get(REQUIREMENTS).expect(200);
    expectRateLimited(await first.http.get(REQUIREMENTS));
    await second.http.get(REQUIREMENTS).expect(200);
  });
});

describe('REDIS_URL naming a Redis that does not answer', () => {
  let directory: string;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'property-sales-rate-limit-'));
  });

  afterAll(async () => {
    await service?.stop();
    await rm(directory, { recursive: true, force: true });
  });

  it('serves, limits in memory, and says so in its log and its readiness details', async () => {
    service = await ServiceProcess.start({
      cwd: directory,
      env: {
        DATABASE_URL: 'sqlite::memory:',
        AUTH_MODE: 'none',
        RATE_LIMIT: String(LIMIT),
        RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
        REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
        RATE_LIMIT_KEY_PREFIX: keyPrefix(),
      },
    });
    await service.ready();
    const ready = await request(service.baseUrl).get('/health/ready').expect(200);
    expect(ready.body.details.rateLimit).toEqual({
      status: 'up',
      store: 'memory',
      redis: 'unavailable',
    });
    for (let index = 0; index < LIMIT; index += 1)
      await request(service.baseUrl).get(REQUIREMENTS).expect(200);
    expectRateLimited(await request(service.baseUrl).get(REQUIREMENTS));
    const warnings = service.stdout
      .split('\n')
      .filter((line) => line.includes('Redis is unavailable'));
    // Once for the outage, not once per request.
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('counted in memory, per instance');
  });
});

/** A Redis this file owns, on its own port, without persistence: frozen (SIGSTOP) and thawed at will. */
async function startPrivateRedis(): Promise<{ url: string; server: ChildProcess }> {
  const port = await freePort();
  const server = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const deadline = Date.now() + 10000;
  const answers = () =>
    new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
  while (!(await answers())) {
    if (Date.now() > deadline) throw new Error('The private Redis did not start');
    await sleep(50);
  }
  return { url: `redis://127.0.0.1:${port}`, server };
}

describe('a Redis that freezes (SIGSTOP) under load', () => {
  let redis: { url: string; server: ChildProcess } | undefined;

  afterAll(() => {
    redis?.server.kill('SIGCONT');
    redis?.server.kill('SIGKILL');
  });

  it('makes no request wait on it: the circuit opens at once, one probe at a time, and closes when it answers', async () => {
    redis = await startPrivateRedis();
    const running = await startApp({
      AUTH_MODE: 'none',
      REDIS_URL: redis.url,
      RATE_LIMIT: '1000000',
      RATE_LIMIT_KEY_PREFIX: keyPrefix(),
    });
    const storeOf = async () =>
      (await running.http.get('/health/ready').expect(200)).body.details.rateLimit.store as string;
    expect(await storeOf()).toBe('redis');
    /** Eight clients in a loop for `ms`: when each request ended, and how long it took. */
    const load = async (ms: number) => {
      const requests: { end: number; duration: number }[] = [];
      const until = Date.now() + ms;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (Date.now() < until) {
            const started = performance.now();
            await running.http.get(REQUIREMENTS).expect(200);
            const end = performance.now();
            requests.push({ end, duration: end - started });
          }
        }),
      );
      return requests;
    };
    redis.server.kill('SIGSTOP');
    // Frozen for 4 s: past several retry times, when every request in flight used to wait for the
    // command time-out (0.5 s) again, about every 1.5 s: three times.
    const frozen = await load(4000);
    // Now only the requests in flight when it froze wait, 50 ms. A request that took 450 ms is a
    // stall; requests ending within 0.2 s of each other share theirs, as a pause of the machine would.
    const stalls = frozen
      .filter(({ duration }) => duration >= 450)
      .map(({ end }) => end)
      .sort((a, b) => a - b)
      .filter((end, index, ends) => index === 0 || end - ends[index - 1] > 200);
    // At most one, for a pause of the machine: the stalls' end times otherwise.
    expect(stalls).toEqual(stalls.slice(0, 1));
    expect(await storeOf()).toBe('memory');
    redis.server.kill('SIGCONT');
    let store = 'memory';
    for (let waited = 0; store !== 'redis' && waited < 5000; waited += 100) {
      await sleep(100);
      store = await storeOf();
    }
    expect(store).toBe('redis');
  });
});
