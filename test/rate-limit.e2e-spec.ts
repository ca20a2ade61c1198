import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { type Server } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { Mutex } from 'async-mutex';
import request from 'supertest';
import { DEFAULT_AUTH_FAILURE_LIMIT } from '../src/config/app-config';
import { apiKeysVariable, JwksServer, nowSeconds, TokenIssuer } from './support/auth-credentials';
import { expectProblem, type HttpResult } from './support/http-assertions';
import { sendAtOnce } from './support/http-burst';
import { LatencyRelay } from './support/latency-relay';
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

/** How many answers of each status. */
const statusCounts = (answers: readonly HttpResult[]) =>
  answers.reduce<Record<number, number>>(
    (counts, { status }) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }),
    {},
  );

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

/** Closes these apps at once, rather than after the test: a concurrent test runs no afterEach. */
async function closeApps(closing: readonly RunningApp[]): Promise<void> {
  for (const app of closing) apps.splice(apps.indexOf(app), 1);
  await Promise.all(closing.map((app) => app.close()));
}

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

/** How a guesser's burst authenticates: the service's settings, the right credential and the guesses. */
interface Credentials {
  readonly env: Environment;
  readonly right: Record<string, string>;
  readonly wrong: readonly Record<string, string>[];
}

const BURST = 120;
const BURST_LIMIT = 5;
/** Long enough for a burst to end within one window, short enough to wait for its end. */
const BURST_WINDOW_SECONDS = 3;
/** Each way: a Redis in the same data centre, busy; loopback would answer too fast to show a gap. */
const REDIS_DELAY_MS = 5;
/** Each way: an identity provider's JWKS endpoint across the internet. */
const JWKS_DELAY_MS = 25;
const ISSUER = 'https://login.example.test/';
const AUDIENCE = 'property-sales-api';

describe('limits against credentials sent at once on open connections', () => {
  const credentials = new Map<string, Credentials>();
  let redis: LatencyRelay;
  let jwksServer: JwksServer;
  let jwks: LatencyRelay;

  beforeAll(async () => {
    redis = await LatencyRelay.start(REDIS_URL, REDIS_DELAY_MS);
    const [issuer, stranger] = await Promise.all([
      TokenIssuer.create('rl-issuer'),
      TokenIssuer.create('rl-stranger'),
    ]);
    jwksServer = await JwksServer.start([await issuer.jwk()]);
    jwks = await LatencyRelay.start(jwksServer.url, JWKS_DELAY_MS);
    // Under the issuer's key id, whoever signs: each signature is verified before it fails.
    const bearer = async (signer: TokenIssuer, sub: string) => {
      const iat = nowSeconds();
      const claims = { iss: ISSUER, aud: AUDIENCE, sub, iat, exp: iat + 300 };
      const token = await signer.sign(
        { ...claims, scope: 'requirements:read' },
        { kid: issuer.kid },
      );
      return { Authorization: `Bearer ${token}` };
    };
    credentials.set('API keys', {
      env: { AUTH_MODE: 'apikey', AUTH_API_KEYS: apiKeysVariable({ valid: VALID_KEY }) },
      right: { 'X-Api-Key': VALID_KEY },
      wrong: Array.from({ length: BURST }, (_, index) => ({
        'X-Api-Key': `guess-${index}-0000000000000000`,
      })),
    });
    // Each instance fetches the issuer's keys at its first token: the burst's tokens wait on it together.
    credentials.set('tokens', {
      env: {
        AUTH_MODE: 'jwt',
        AUTH_JWKS_URL: jwks.url,
        AUTH_JWT_ISSUER: ISSUER,
        AUTH_JWT_AUDIENCE: AUDIENCE,
      },
      right: await bearer(issuer, 'rl-caller'),
      wrong: await Promise.all(
        Array.from({ length: BURST }, (_, index) => bearer(stranger, `guess-${index}`)),
      ),
    });
  });

  afterAll(async () => {
    await Promise.all([redis?.close(), jwks?.close(), jwksServer?.close()]);
  });

  /** Where the limits are counted: how many instances, and what each is given. */
  const inRedis = () => ({ REDIS_URL: redis.url, RATE_LIMIT_KEY_PREFIX: keyPrefix() });
  const stores: [string, number, () => Environment][] = [
    ['in memory', 1, () => ({})],
    ['in Redis', 1, inRedis],
    ['in Redis, by two instances', 2, inRedis],
  ];
  const kinds = [['API keys'], ['tokens']];

  /** `count` instances with these credentials and limits, sharing `store()`. */
  function startInstances(count: number, store: () => Environment, env: Environment) {
    const shared = { ...store(), ...env, RATE_LIMIT_WINDOW_SECONDS: String(BURST_WINDOW_SECONDS) };
    return Promise.all(Array.from({ length: count }, () => startApp(shared)));
  }

  /** Sends each request to the next instance in turn, all at once. */
  const burst = (instances: readonly RunningApp[], headers: readonly Record<string, string>[]) =>
    sendAtOnce(
      headers.map((header, index) => ({
        baseUrl: instances[index % instances.length].baseUrl,
        path: REQUIREMENTS,
        headers: header,
      })),
    );

  /**
   * Each case waits out its window (most of its time) while the next ones send their bursts: the cases
   * run together, their instances and Redis keys their own, and start, send their burst and close one
   * at a time, so that none slows another's burst.
   */
  const oneBurstAtATime = new Mutex();
  const limitsOfCase: [string, Environment][] = [
    ['AUTH_FAILURE_LIMIT', { AUTH_FAILURE_LIMIT: String(BURST_LIMIT), RATE_LIMIT: '0' }],
    ['RATE_LIMIT', { RATE_LIMIT: String(BURST_LIMIT), AUTH_FAILURE_LIMIT: '0' }],
  ];
  const windowCases = limitsOfCase.flatMap(([limit, limits]) =>
    stores.flatMap(([where, instanceCount, store]) =>
      kinds.map(([kind]) => ({ limit, limits, where, instanceCount, store, kind })),
    ),
  );

  it.concurrent.each(windowCases)(
    `$limit, counted $where: checks ${BURST_LIMIT} of ${BURST} $kind sent at once, refuses every right one among them, and takes it once the window ends`,
    async ({ limits, instanceCount, store, kind }) => {
      const { env, right, wrong } = credentials.get(kind)!;
      // The right credential at every fifth place from the sixteenth: by then each instance has
      // been sent more guesses than the limit, so a right one answered 200 was checked past it.
      const sent = wrong.map((guess, index) =>
        index >= 3 * BURST_LIMIT && index % BURST_LIMIT === 0 ? right : guess,
      );
      const { instances, answers } = await oneBurstAtATime.runExclusive(async () => {
        const started = await startInstances(instanceCount, store, { ...env, ...limits });
        return { instances: started, answers: await burst(started, sent) };
      });
      try {
        const guesses = answers.filter((_, index) => sent[index] !== right);
        const rights = answers.filter((_, index) => sent[index] === right);
        // A 401 is a guess checked; a 429 one refused. A right one checked would be a 200.
        expect(statusCounts(guesses)).toEqual({
          401: BURST_LIMIT,
          429: guesses.length - BURST_LIMIT,
        });
        expect(statusCounts(rights)).toEqual({ 429: rights.length });
        rights.forEach(expectRateLimited);
        await sleep(
          Math.max(...rights.map((answer) => Number(answer.headers['retry-after']))) * 1000,
        );
        await instances[0].http.get(REQUIREMENTS).set(right).expect(200);
      } finally {
        await oneBurstAtATime.runExclusive(() => closeApps(instances));
      }
    },
  );

  describe.each(stores)('AUTH_FAILURE_LIMIT, counted %s', (_where, instanceCount, store) => {
    it.each(kinds)(
      `answers ${BURST} right %s sent at once: successes never count`,
      async (kind) => {
        const { env, right } = credentials.get(kind)!;
        const instances = await startInstances(instanceCount, store, {
          ...env,
          AUTH_FAILURE_LIMIT: String(BURST_LIMIT),
          RATE_LIMIT: '0',
        });
        const answers = await burst(
          instances,
          Array.from({ length: BURST }, () => right),
        );
        expect(statusCounts(answers)).toEqual({ 200: BURST });
      },
    );
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

describe('an instance paused while Redis answers (a long garbage collection, a CPU quota spent)', () => {
  it('takes its own pause for no stall of Redis: every guess is counted there, and the limit holds', async () => {
    const limit = 10;
    const running = await startApp({
      AUTH_MODE: 'apikey',
      AUTH_API_KEYS: apiKeysVariable({ valid: VALID_KEY }),
      AUTH_FAILURE_LIMIT: String(limit),
      RATE_LIMIT: '0',
      REDIS_URL,
      RATE_LIMIT_KEY_PREFIX: keyPrefix(),
    });
    // Each request is followed by 80 ms in which this process runs nothing else, as when the
    // system or the collector pauses it: Redis's answer waits in the socket meanwhile.
    const server = running.app.getHttpServer() as Server;
    const pause = () =>
      setImmediate(() => {
        const until = performance.now() + 80;
        while (performance.now() < until);
      });
    server.on('request', pause);
    const statuses: number[] = [];
    try {
      for (const guess of GUESSES.slice(0, limit))
        statuses.push((await running.http.get(REQUIREMENTS).set('X-Api-Key', guess)).status);
    } finally {
      server.off('request', pause);
    }

    expect(statuses).toEqual(Array(limit).fill(401));
    expectRateLimited(await running.http.get(REQUIREMENTS).set('X-Api-Key', VALID_KEY));
    const ready = await running.http.get('/health/ready').expect(200);
    expect(ready.body.details.rateLimit).toEqual({ status: 'up', store: 'redis' });
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
  let redis: { url: string; server: ChildProcess };

  beforeAll(async () => {
    redis = await startPrivateRedis();
  });

  afterAll(() => {
    redis?.server.kill('SIGCONT');
    redis?.server.kill('SIGKILL');
  });

  /** Where the instance counts, as its readiness says. */
  const storeOf = async (running: RunningApp) =>
    (await running.http.get('/health/ready').expect(200)).body.details.rateLimit.store as string;

  /** Thaws Redis, and waits for the instance to count there again. */
  async function thaw(running: RunningApp): Promise<void> {
    redis.server.kill('SIGCONT');
    let store = 'memory';
    for (let waited = 0; store !== 'redis' && waited < 5000; waited += 100) {
      await sleep(100);
      store = await storeOf(running);
    }
    expect(store).toBe('redis');
  }

  it('makes no request wait on it: the circuit opens at once, one probe at a time, and closes when it answers', async () => {
    const running = await startApp({
      AUTH_MODE: 'none',
      REDIS_URL: redis.url,
      RATE_LIMIT: '1000000',
      RATE_LIMIT_KEY_PREFIX: keyPrefix(),
    });
    expect(await storeOf(running)).toBe('redis');
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
    expect(await storeOf(running)).toBe('memory');
    await thaw(running);
  });

  it('keeps no place for the checks it made in memory: right keys sent at once after it thaws are answered at once', async () => {
    const running = await startApp({
      AUTH_MODE: 'apikey',
      AUTH_API_KEYS: apiKeysVariable({ valid: VALID_KEY }),
      AUTH_FAILURE_LIMIT: String(BURST_LIMIT),
      RATE_LIMIT: '0',
      REDIS_URL: redis.url,
      RATE_LIMIT_KEY_PREFIX: keyPrefix(),
    });
    const rightKeys = () =>
      sendAtOnce(
        Array.from({ length: 2 * BURST_LIMIT }, () => ({
          baseUrl: running.baseUrl,
          path: REQUIREMENTS,
          headers: { 'X-Api-Key': VALID_KEY },
        })),
      );
    redis.server.kill('SIGSTOP');
    // Their reservations wait in the frozen Redis's socket while the checks go on in memory.
    expect(statusCounts(await rightKeys())).toEqual({ 200: 2 * BURST_LIMIT });
    await thaw(running);
    const started = performance.now();
    expect(statusCounts(await rightKeys())).toEqual({ 200: 2 * BURST_LIMIT });
    // Places Redis gave those reservations on thawing would hold the address for a hold, 5 s.
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
