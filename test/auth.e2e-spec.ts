import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { CompactSign } from 'jose';
import request, { type Response, type Test } from 'supertest';
import {
  apiKeysVariable,
  base64url,
  type Claims,
  JwksServer,
  nowSeconds,
  signHs256,
  TokenIssuer,
  unsecuredToken,
} from './support/auth-credentials';
import { CATALOGUE, textOfLength, transactionRecord } from './support/fixtures';
import { expectProblem, type HttpResult, rawRequest } from './support/http-assertions';
import { ServiceProcess, startedTogether, TemporaryDirectories } from './support/processes';
import {
  describeOnEachDatabase,
  describeOnSqlite,
  type Environment,
  RunningApp,
  type SuiteContext,
} from './support/test-app';
import { createTestDatabase, type TestDatabase, testDatabaseKinds } from './support/test-database';
import {
  getAgentHistoryPath,
  getTransactionPath,
  UPDATE_AGENTS,
} from './support/update-agents-cases';

// ---------------------------------------------------------------------------------------------
// Credentials and expectations

const GATEWAY_KEY = 'gw-live-7Qm2Xv9Lp4Rt8Wz1Kc6Hn3Bd5Fs0Yj';
const BACKOFFICE_KEY = 'bo-live-3Tn8Gk1Vw6Pz4Xq9Mc2Lr7Hd5Sj0Bf';
const UNKNOWN_KEY = 'xx-live-0000000000000000000000000000';
const API_KEYS = { gateway: GATEWAY_KEY, backoffice: BACKOFFICE_KEY };

const ISSUER = 'https://login.example.test/';
const AUDIENCE = 'property-sales-api';
const SUBJECT = 'agent-supervisor-17';
/** The longest a token may live in the JWT suites that set it. */
const MAX_LIFETIME_SECONDS = 3600;

const APIKEY_CHALLENGE = 'ApiKey realm="property-sales"';
const BEARER_CHALLENGE = 'Bearer realm="property-sales"';
const INVALID_TOKEN_CHALLENGE = /^Bearer realm="property-sales", error="invalid_token"/;
const LEGACY_XML_ERROR = /^<Error><Message>[^<]+<\/Message><\/Error>$/;
const REQUIREMENTS = '/api/Requirement/GetRequirements';
const LIST_TRANSACTIONS = '/api/Transaction/ListTransactions';
const HEALTH_PROBES = ['/health/live', '/health/ready'];

/** A 401 as a JSON error (application/json) with the challenge its mode sends; returns the body. */
function expectUnauthenticated(response: HttpResult, challenge: string | RegExp) {
  const body = expectProblem(response, 401, { modelState: false });
  expect(body.type).toMatch(/unauthenticated$/);
  const header = response.headers['www-authenticate'];
  if (typeof challenge === 'string') expect(header).toBe(challenge);
  else expect(header).toMatch(challenge);
  return body;
}

/** A 401 as the legacy XML Error, with the challenge still in its header. */
function expectXmlUnauthenticated(response: Response, mediaType: string, challenge: RegExp) {
  expect(response.status).toBe(401);
  expect(response.headers['content-type']).toBe(`${mediaType}; charset=utf-8`);
  expect(response.text).toMatch(LEGACY_XML_ERROR);
  expect(response.headers['www-authenticate']).toMatch(challenge);
}

/** A 429 as a JSON error (application/json) with a positive whole Retry-After, within the window. */
function expectRateLimited(response: HttpResult, windowSeconds: number) {
  const body = expectProblem(response, 429, { modelState: false });
  expect(body.type).toMatch(/rate_limited$/);
  expectRetryAfter(response, windowSeconds);
}

function expectRetryAfter(response: HttpResult, windowSeconds: number) {
  const retryAfter = response.headers['retry-after'];
  expect(retryAfter).toMatch(/^[1-9]\d*$/);
  expect(Number(retryAfter)).toBeLessThanOrEqual(windowSeconds);
}

/** An UpdateAgents body that changes the broker's name: each call appends one history record. */
const renameBroker = (transactionId: number, brokername: string) => ({
  transaction_id: transactionId,
  financetype: 'Cash',
  brokername,
});

interface HistoryRecord {
  readonly changed_by: string | null;
  readonly changes: { field: string; before: string | null; after: string | null }[];
}

// ---------------------------------------------------------------------------------------------
// Services on SQLite alone, for what touches no stored data

/** A service on an in-memory SQLite for the enclosing describe; `env` is read when it starts. */
function useSqliteApp(env: () => Environment | Promise<Environment>) {
  let running: RunningApp | undefined;
  beforeAll(async () => {
    running = await RunningApp.start('sqlite::memory:', await env());
  });
  afterAll(async () => {
    await running?.close();
  });
  return {
    get running(): RunningApp {
      if (!running) throw new Error('The service did not start');
      return running;
    },
    get http() {
      return this.running.http;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Spawned services: start-up and the request log

const directories = new TemporaryDirectories('auth');
const services: ServiceProcess[] = [];
const databases: TestDatabase[] = [];

/** `node dist/src/main.js` with exactly these service variables; not waited on. */
async function spawnService(env: Record<string, string>): Promise<ServiceProcess> {
  const directory = await directories.make();
  const service = await ServiceProcess.start({
    cwd: directory,
    env: { DATABASE_URL: `sqlite:${join(directory, 'service.sqlite')}`, ...env },
  });
  services.push(service);
  return service;
}

/** The service once it serves. */
async function servingService(env: Record<string, string>): Promise<ServiceProcess> {
  const service = await spawnService(env);
  await service.ready();
  return service;
}

/** The service once it has exited, as one that refuses to start does. */
async function exitedService(env: Record<string, string>): Promise<ServiceProcess> {
  const service = await spawnService(env);
  await service.exit();
  return service;
}

afterAll(async () => {
  await Promise.allSettled(services.splice(0).map((service) => service.stop()));
  await Promise.allSettled(databases.splice(0).map((database) => database.drop()));
  await directories.removeAll();
});

interface LogLine {
  readonly reqId?: string;
  readonly msg?: string;
  readonly req?: { id?: string; url?: string };
  readonly res?: { statusCode?: number };
  readonly caller?: unknown;
}

function logLines(service: ServiceProcess): LogLine[] {
  return service.stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as LogLine);
}

async function eventually(condition: () => boolean, what: string, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await delay(20);
  }
}

/** The one line the request with this X-Request-Id wrote, once it is on stdout. */
async function requestLine(service: ServiceProcess, id: string): Promise<LogLine> {
  await eventually(
    () => logLines(service).some((line) => line.req?.id === id),
    `the log line of ${id}`,
  );
  const lines = logLines(service).filter((line) => line.reqId === id || line.req?.id === id);
  expect(lines).toHaveLength(1);
  return lines[0];
}

// =============================================================================================
// AUTH_MODE=apikey

describeOnEachDatabase(
  'AUTH_MODE=apikey',
  (context: SuiteContext) => {
    const READ = 101;
    const HISTORY = 102;
    const REFUSED_WRITE = 103;

    beforeAll(() =>
      context.running.seed({
        requirements: CATALOGUE,
        transactions: [READ, HISTORY, REFUSED_WRITE].map((id) => transactionRecord(id)),
      }),
    );

    const history = async (id: number): Promise<HistoryRecord[]> => {
      const response = await context.http
        .get(getAgentHistoryPath(id))
        .set('X-Api-Key', GATEWAY_KEY)
        .set('Accept', 'application/json')
        .expect(200);
      return response.body as HistoryRecord[];
    };

    const apiCalls: [string, () => Test][] = [
      ['GetTransaction', () => context.http.get(getTransactionPath(READ))],
      ['GetAgentHistory', () => context.http.get(getAgentHistoryPath(READ))],
      ['GetRequirements', () => context.http.get(REQUIREMENTS)],
      // An invalid query too: the caller is refused before its parameters are read.
      ['ListTransactions', () => context.http.get(`${LIST_TRANSACTIONS}?limit=9999`)],
      ['UpdateAgents', () => context.http.post(UPDATE_AGENTS).send(renameBroker(READ, 'Nobody'))],
    ];

    it.each(apiCalls)(
      'answers %s without a key with 401, the ApiKey challenge and a problem',
      async (_, call) => {
        const body = expectUnauthenticated(await call(), APIKEY_CHALLENGE);
        expect(body.status).toBe(401);
      },
    );

    it.each<[string, Record<string, string>]>([
      ['an unknown key in X-Api-Key', { 'X-Api-Key': UNKNOWN_KEY }],
      ['an unknown key in Authorization: ApiKey', { Authorization: `ApiKey ${UNKNOWN_KEY}` }],
      ['a known key with a character more', { 'X-Api-Key': `${GATEWAY_KEY}x` }],
      ['a known key in other letter case', { 'X-Api-Key': GATEWAY_KEY.toUpperCase() }],
      [
        'the configured hash in place of the key',
        { 'X-Api-Key': apiKeysVariable({ gateway: GATEWAY_KEY }).split('sha256:')[1] },
      ],
    ])('refuses %s with 401', async (_, headers) => {
      const response = await context.http.get(getTransactionPath(READ)).set(headers);
      expectUnauthenticated(response, /^ApiKey realm="property-sales"/);
      expect(response.text).not.toContain(headers['X-Api-Key'] ?? UNKNOWN_KEY);
    });

    it.each<[string, string, Record<string, string>]>([
      ['an empty X-Api-Key', '', { 'X-Api-Key': '' }],
      ['a key under the Bearer scheme', '', { Authorization: `Bearer ${GATEWAY_KEY}` }],
      [
        'a key as Basic credentials',
        '',
        { Authorization: `Basic ${Buffer.from(`gateway:${GATEWAY_KEY}`).toString('base64')}` },
      ],
      ['a key in the query string', `?api_key=${GATEWAY_KEY}`, {}],
    ])('treats %s as no key', async (_, query, headers) => {
      const response = await context.http.get(`${getTransactionPath(READ)}${query}`).set(headers);
      expectUnauthenticated(response, APIKEY_CHALLENGE);
    });

    it.each<[string, Record<string, string>]>([
      ['X-Api-Key', { 'X-Api-Key': GATEWAY_KEY }],
      ['Authorization: ApiKey', { Authorization: `ApiKey ${BACKOFFICE_KEY}` }],
    ])('accepts a key sent as %s', async (_, headers) => {
      const response = await context.http
        .get(getTransactionPath(READ))
        .set(headers)
        .set('Accept', 'application/json')
        .expect(200);
      expect(response.body).toMatchObject({ transaction_id: READ });
      expect(response.headers['www-authenticate']).toBeUndefined();
      await context.http.get(REQUIREMENTS).set(headers).expect(200);
      await context.http.get(LIST_TRANSACTIONS).set(headers).expect(200);
    });

    it.each(['application/xml', 'text/xml'])(
      'writes the 401 as the legacy XML Error when %s is asked for',
      async (mediaType) => {
        const missing = await context.http.get(getTransactionPath(READ)).set('Accept', mediaType);
        expectXmlUnauthenticated(missing, mediaType, /^ApiKey realm="property-sales"$/);
        const wrong = await context.http
          .get(getTransactionPath(READ))
          .set('Accept', mediaType)
          .set('X-Api-Key', UNKNOWN_KEY);
        expectXmlUnauthenticated(wrong, mediaType, /^ApiKey realm="property-sales"/);
      },
    );

    it('leaves the health probes open, with or without a key', async () => {
      for (const probe of HEALTH_PROBES) {
        await context.http.get(probe).expect(200);
        await context.http.get(probe).set('X-Api-Key', UNKNOWN_KEY).expect(200);
      }
    });

    it('refuses an unauthenticated UpdateAgents before reading its body, and writes nothing', async () => {
      expectUnauthenticated(
        await context.http
          .post(UPDATE_AGENTS)
          .set('Content-Type', 'application/json')
          .send('{"transaction_id": "not a number"'),
        APIKEY_CHALLENGE,
      );
      expectUnauthenticated(
        await context.http
          .post(UPDATE_AGENTS)
          .set('X-Api-Key', UNKNOWN_KEY)
          .send(renameBroker(REFUSED_WRITE, 'Intruder')),
        /^ApiKey realm="property-sales"/,
      );
      expect(await history(REFUSED_WRITE)).toEqual([]);
      const stored = await context.http
        .get(getTransactionPath(REFUSED_WRITE))
        .set('X-Api-Key', GATEWAY_KEY)
        .set('Accept', 'application/json')
        .expect(200);
      expect(stored.body.brokername).toBe(transactionRecord(REFUSED_WRITE).brokername);
    });

    it("records the key's name as changed_by in the agent history, for each key", async () => {
      await context.http
        .post(UPDATE_AGENTS)
        .set('X-Api-Key', GATEWAY_KEY)
        .send(renameBroker(HISTORY, 'Broker By Gateway'))
        .expect(204);
      await context.http
        .post(UPDATE_AGENTS)
        .set('Authorization', `ApiKey ${BACKOFFICE_KEY}`)
        .send(renameBroker(HISTORY, 'Broker By Backoffice'))
        .expect(204);
      const records = await history(HISTORY);
      expect(records.map((record) => record.changed_by)).toEqual(['gateway', 'backoffice']);
      expect(records.map((record) => record.changes)).toEqual([
        [expect.objectContaining({ field: 'brokername', after: 'Broker By Gateway' })],
        [expect.objectContaining({ field: 'brokername', after: 'Broker By Backoffice' })],
      ]);
      const text = JSON.stringify(records);
      expect(text).not.toContain(GATEWAY_KEY);
      expect(text).not.toContain(BACKOFFICE_KEY);
    });

    it('limits nobody while RATE_LIMIT is unset', async () => {
      for (let index = 0; index < 30; index += 1) {
        const response = await context.http
          .get(getTransactionPath(READ))
          .set('X-Api-Key', GATEWAY_KEY);
        expect(response.status).toBe(200);
        expect(response.headers['retry-after']).toBeUndefined();
      }
    });
  },
  // Refused keys from one address, more than the default limit on failed authentications allows.
  { AUTH_MODE: 'apikey', AUTH_API_KEYS: apiKeysVariable(API_KEYS), AUTH_FAILURE_LIMIT: '0' },
);

// =============================================================================================
// AUTH_MODE=jwt, keys from a JWKS URL

/** The identity provider's signing key, and one it never published. */
let issuer: TokenIssuer;
let stranger: TokenIssuer;

beforeAll(async () => {
  issuer = await TokenIssuer.create('issuer-key-2026');
  stranger = await TokenIssuer.create('stranger-key');
});

/** The scopes of the service's own operations: what these suites' valid tokens are granted. */
const ALL_SCOPES = 'transactions:read transactions:write requirements:read';

/** Claims a valid token carries; `overrides` set or (with undefined) remove some. */
function claims(overrides: Partial<Claims> = {}): Claims {
  const now = nowSeconds();
  const all: Claims = {
    iss: ISSUER,
    aud: AUDIENCE,
    sub: SUBJECT,
    iat: now,
    exp: now + 300,
    scope: ALL_SCOPES,
  };
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete all[name];
    else all[name] = value;
  }
  return all;
}

describe('AUTH_MODE=jwt', () => {
  const env: Environment = {
    // Each suite sends dozens of refused tokens from one address; test/rate-limit.e2e-spec.ts tests
    // the limit on failed authentications.
    AUTH_FAILURE_LIMIT: '0',
    AUTH_MODE: 'jwt',
    AUTH_JWT_ISSUER: ISSUER,
    AUTH_JWT_AUDIENCE: AUDIENCE,
    AUTH_JWT_CLOCK_SKEW_SECONDS: '60',
    AUTH_JWT_MAX_LIFETIME_SECONDS: String(MAX_LIFETIME_SECONDS),
  };
  let jwks: JwksServer | undefined;

  beforeAll(async () => {
    jwks = await JwksServer.start([await issuer.jwk()]);
    // Read by the services below when they start, which is after this.
    env.AUTH_JWKS_URL = jwks.url;
  });

  afterAll(async () => {
    await jwks?.close();
  });

  describeOnEachDatabase(
    'with a JWKS URL',
    (context: SuiteContext) => {
      const READ = 201;
      const HISTORY = 202;
      const LONG_SUBJECTS = 203;
      const WRONG_TYPES = 204;

      beforeAll(() =>
        context.running.seed({
          requirements: CATALOGUE,
          transactions: [READ, HISTORY, LONG_SUBJECTS, WRONG_TYPES].map((id) =>
            transactionRecord(id),
          ),
        }),
      );

      const withToken = (call: Test, token: string) => call.set('Authorization', `Bearer ${token}`);

      it('accepts a valid token, and records its sub as changed_by', async () => {
        const token = await issuer.sign(claims());
        const read = await withToken(context.http.get(getTransactionPath(READ)), token)
          .set('Accept', 'application/json')
          .expect(200);
        expect(read.body).toMatchObject({ transaction_id: READ });
        await withToken(context.http.post(UPDATE_AGENTS), token)
          .send(renameBroker(HISTORY, 'Broker By Token'))
          .expect(204);
        const history = await withToken(context.http.get(getAgentHistoryPath(HISTORY)), token)
          .set('Accept', 'application/json')
          .expect(200);
        expect((history.body as HistoryRecord[]).map((record) => record.changed_by)).toEqual([
          SUBJECT,
        ]);
        // The key came from the JWKS endpoint.
        expect(jwks?.fetches).toBeGreaterThan(0);
      });

      it('records a subject of any length whole, as a token carries it', async () => {
        // 300 characters of several bytes each; 5000 of one byte, as a header of 16 kB holds them.
        const subjects = [textOfLength('subject', 300), `urn:agent:${'7'.repeat(4990)}`];
        for (const [index, subject] of subjects.entries()) {
          await withToken(
            context.http.post(UPDATE_AGENTS),
            await issuer.sign(claims({ sub: subject })),
          )
            .send(renameBroker(LONG_SUBJECTS, `Broker ${index}`))
            .expect(204);
        }
        const history = await withToken(
          context.http.get(getAgentHistoryPath(LONG_SUBJECTS)),
          await issuer.sign(claims()),
        )
          .set('Accept', 'application/json')
          .expect(200);
        expect((history.body as HistoryRecord[]).map((record) => record.changed_by)).toEqual(
          subjects,
        );
      });

      it('accepts a token that lives exactly AUTH_JWT_MAX_LIFETIME_SECONDS', async () => {
        const iat = nowSeconds();
        const token = await issuer.sign(claims({ iat, exp: iat + MAX_LIFETIME_SECONDS }));
        await withToken(context.http.get(getTransactionPath(READ)), token).expect(200);
      });

      it('accepts an audience list that includes the service', async () => {
        const token = await issuer.sign(claims({ aud: ['other-api', AUDIENCE] }));
        await withToken(context.http.get(getTransactionPath(READ)), token).expect(200);
      });

      it('accepts a token expired by less than AUTH_JWT_CLOCK_SKEW_SECONDS', async () => {
        const now = nowSeconds();
        const token = await issuer.sign(claims({ iat: now - 320, exp: now - 20 }));
        await withToken(context.http.get(getTransactionPath(READ)), token).expect(200);
      });

      it('accepts a token valid from less than AUTH_JWT_CLOCK_SKEW_SECONDS ahead', async () => {
        const token = await issuer.sign(claims({ nbf: nowSeconds() + 20 }));
        await withToken(context.http.get(getTransactionPath(READ)), token).expect(200);
      });

      it('answers a request without a token with 401 and the Bearer challenge', async () => {
        for (const call of [
          () => context.http.get(getTransactionPath(READ)),
          () => context.http.get(getAgentHistoryPath(READ)).set('X-Api-Key', GATEWAY_KEY),
          () => context.http.get(getTransactionPath(READ)).set('Authorization', 'Bearer'),
          () =>
            context.http
              .post(UPDATE_AGENTS)
              .set('Authorization', `ApiKey ${GATEWAY_KEY}`)
              .send(renameBroker(HISTORY, 'Nobody')),
        ]) {
          expectUnauthenticated(await call(), BEARER_CHALLENGE);
        }
      });

      const invalidTokens: [string, () => Promise<string>][] = [
        [
          'expired beyond the clock skew',
          () => issuer.sign(claims({ iat: nowSeconds() - 600, exp: nowSeconds() - 120 })),
        ],
        [
          'not yet valid beyond the clock skew',
          () => issuer.sign(claims({ nbf: nowSeconds() + 120, exp: nowSeconds() + 600 })),
        ],
        ['from another issuer', () => issuer.sign(claims({ iss: 'https://evil.example.test/' }))],
        ['for another audience', () => issuer.sign(claims({ aud: 'some-other-api' }))],
        ['signed by a key the JWKS does not list', () => stranger.sign(claims())],
        [
          "signed by another key under the issuer's key id",
          () => stranger.sign(claims(), { kid: issuer.kid }),
        ],
        [
          'whose payload was altered after signing',
          async () => {
            const [header, , signature] = (await issuer.sign(claims())).split('.');
            return `${header}.${base64url(claims({ sub: 'administrator' }))}.${signature}`;
          },
        ],
        ['without sub', () => issuer.sign(claims({ sub: undefined }))],
        ['without exp', () => issuer.sign(claims({ exp: undefined }))],
        ['without iat, so of unknown lifetime', () => issuer.sign(claims({ iat: undefined }))],
        [
          'living longer than AUTH_JWT_MAX_LIFETIME_SECONDS',
          () => issuer.sign(claims({ exp: nowSeconds() + MAX_LIFETIME_SECONDS + 1 })),
        ],
        [
          'issued ahead of the clock beyond the skew',
          () => issuer.sign(claims({ iat: nowSeconds() + 120, exp: nowSeconds() + 600 })),
        ],
        ['unsecured (alg: none)', () => Promise.resolve(unsecuredToken(claims()))],
        ['malformed', () => Promise.resolve('not-a-jwt')],
        ['of three parts that are not JWT', () => Promise.resolve('e30.e30.c2ln')],
        ['signed HS256 with a shared secret', () => signHs256(claims(), 'a-shared-secret-0123')],
        [
          "signed HS256 with the issuer's public key as the secret",
          async () => signHs256(claims(), await issuer.spki()),
        ],
      ];

      it.each(invalidTokens)(
        'refuses a token %s: 401 with error="invalid_token"',
        async (_, token) => {
          const text = await token();
          const response = await withToken(context.http.get(getTransactionPath(READ)), text);
          expectUnauthenticated(response, INVALID_TOKEN_CHALLENGE);
          expect(response.text).not.toContain(text);
        },
      );

      /** UpdateAgents with this token is refused as invalid, and changes nothing. */
      async function expectRefusedWrite(token: string) {
        expectUnauthenticated(
          await withToken(context.http.post(UPDATE_AGENTS), token).send(
            renameBroker(WRONG_TYPES, 'Intruder'),
          ),
          INVALID_TOKEN_CHALLENGE,
        );
        const valid = await issuer.sign(claims());
        const history = await withToken(context.http.get(getAgentHistoryPath(WRONG_TYPES)), valid)
          .set('Accept', 'application/json')
          .expect(200);
        expect(history.body).toEqual([]);
        const stored = await withToken(context.http.get(getTransactionPath(WRONG_TYPES)), valid)
          .set('Accept', 'application/json')
          .expect(200);
        expect(stored.body.brokername).toBe(transactionRecord(WRONG_TYPES).brokername);
      }

      // Signed by the issuer, but a claim the service reads is not of its type (RFC 7519, RFC 8693).
      it.each<[string, Record<string, unknown>]>([
        ['sub as an array', { sub: [SUBJECT, 'administrator'] }],
        ['sub as an object', { sub: { id: SUBJECT } }],
        ['sub as a number', { sub: 17 }],
        ['sub as null', { sub: null }],
        ['sub empty', { sub: '' }],
        ['scope as an array', { scope: ALL_SCOPES.split(' ') }],
        ['scope as a number', { scope: 7 }],
        ['scp as an object', { scp: { scope: 'transactions:write' } }],
        ['scp as an array holding a number', { scp: ['transactions:write', 7] }],
        ['roles as a string', { roles: 'Sales.Agents.Editor' }],
        ['roles as an array holding an object', { roles: ['Sales.Agents.Editor', {}] }],
        ['aud as an array holding a number', { aud: [AUDIENCE, 7] }],
      ])('refuses a token with %s: 401 invalid_token, nothing written', async (_, wrong) => {
        await expectRefusedWrite(await issuer.sign(claims(wrong)));
      });

      it('refuses a token whose nbf is no finite number: 401 invalid_token, nothing written', async () => {
        // JSON reads -1e400 as -Infinity, which no signing library writes: the payload is signed as is.
        const payload = JSON.stringify(claims()).replace(/}$/, ',"nbf":-1e400}');
        const token = await new CompactSign(new TextEncoder().encode(payload))
          .setProtectedHeader({ alg: issuer.alg, typ: 'JWT', kid: issuer.kid })
          .sign(issuer.privateKey);
        await expectRefusedWrite(token);
      });

      // What jose refuses itself, kept refused whatever the verification's options become.
      it.each<[string, Record<string, unknown>]>([
        ['iss as an array', { iss: [ISSUER] }],
        ['aud as a number', { aud: 7 }],
        ['exp as a string', { exp: String(nowSeconds() + 300) }],
        ['nbf as a string', { nbf: String(nowSeconds()) }],
        ['iat as a string', { iat: String(nowSeconds()) }],
      ])('keeps refusing a token with %s: 401 invalid_token, nothing written', async (_, wrong) => {
        await expectRefusedWrite(await issuer.sign(claims(wrong)));
      });

      it('writes nothing for a refused token', async () => {
        const token = await stranger.sign(claims());
        expectUnauthenticated(
          await withToken(context.http.post(UPDATE_AGENTS), token).send(
            renameBroker(READ, 'Intruder'),
          ),
          INVALID_TOKEN_CHALLENGE,
        );
        const history = await withToken(
          context.http.get(getAgentHistoryPath(READ)),
          await issuer.sign(claims()),
        )
          .set('Accept', 'application/json')
          .expect(200);
        expect(history.body).toEqual([]);
      });

      it('writes the 401 as the legacy XML Error when XML is asked for', async () => {
        const missing = await context.http
          .get(getTransactionPath(READ))
          .set('Accept', 'application/xml');
        expectXmlUnauthenticated(missing, 'application/xml', /^Bearer realm="property-sales"$/);
        const expired = await withToken(
          context.http.get(getTransactionPath(READ)).set('Accept', 'application/xml'),
          await issuer.sign(claims({ exp: nowSeconds() - 3600 })),
        );
        expectXmlUnauthenticated(expired, 'application/xml', INVALID_TOKEN_CHALLENGE);
      });

      it('leaves the health probes open', async () => {
        for (const probe of HEALTH_PROBES) await context.http.get(probe).expect(200);
      });
    },
    env,
  );

  describe('a static public key (AUTH_JWT_PUBLIC_KEY)', () => {
    describe.each<[string, (pem: string) => string]>([
      ['as a multi-line PEM', (pem) => pem],
      ['on one line, its line breaks written as \\n', (pem) => pem.trim().replace(/\n/g, '\\n')],
    ])('%s', (_, encode) => {
      let publicKey = '';
      const service = useSqliteApp(async () => {
        publicKey = encode(await issuer.spki());
        return {
          AUTH_MODE: 'jwt',
          AUTH_JWT_PUBLIC_KEY: publicKey,
          AUTH_JWT_ISSUER: ISSUER,
          AUTH_JWT_AUDIENCE: AUDIENCE,
        };
      });
      beforeAll(() =>
        service.running.seed({ requirements: CATALOGUE, transactions: [transactionRecord(301)] }),
      );

      it('accepts a token the key signed, and records its sub', async () => {
        expect(publicKey).toContain('-----BEGIN PUBLIC KEY-----');
        const token = await issuer.sign(claims({ sub: 'static-key-user' }));
        await service.http
          .get(getTransactionPath(301))
          .set('Authorization', `Bearer ${token}`)
          .expect(200);
        await service.http
          .post(UPDATE_AGENTS)
          .set('Authorization', `Bearer ${token}`)
          .send(renameBroker(301, 'Broker By Static Key'))
          .expect(204);
        const history = await service.http
          .get(getAgentHistoryPath(301))
          .set('Authorization', `Bearer ${token}`)
          .set('Accept', 'application/json')
          .expect(200);
        expect((history.body as HistoryRecord[]).map((record) => record.changed_by)).toEqual([
          'static-key-user',
        ]);
      });

      it('refuses a token another key signed, and one expired', async () => {
        for (const token of [
          await stranger.sign(claims()),
          await issuer.sign(claims({ exp: nowSeconds() - 3600 })),
        ]) {
          expectUnauthenticated(
            await service.http.get(getTransactionPath(301)).set('Authorization', `Bearer ${token}`),
            INVALID_TOKEN_CHALLENGE,
          );
        }
      });
    });

    it('keeps the one-line form on one line: it is what the test sends', async () => {
      const oneLine = (await issuer.spki()).trim().replace(/\n/g, '\\n');
      expect(oneLine).not.toContain('\n');
      expect(oneLine).toContain('\\n');
    });
  });
});

// =============================================================================================
// The request log, from the built service

describe('the request log line', () => {
  const started = startedTogether({
    keys: () =>
      servingService({
        // Successful health probes are logged at debug.
        LOG_LEVEL: 'debug',
        AUTH_MODE: 'apikey',
        AUTH_API_KEYS: apiKeysVariable(API_KEYS),
      }),
    query: () =>
      servingService({
        LOG_LEVEL: 'info',
        AUTH_MODE: 'apikey',
        AUTH_API_KEYS: apiKeysVariable(API_KEYS),
        LOG_REDACT_QUERY_PARAMETERS: 'partner_pin, X-Signed',
      }),
    tokens: async () =>
      servingService({
        LOG_LEVEL: 'info',
        AUTH_MODE: 'jwt',
        AUTH_JWT_PUBLIC_KEY: await issuer.spki(),
        AUTH_JWT_ISSUER: ISSUER,
        AUTH_JWT_AUDIENCE: AUDIENCE,
      }),
  });

  it("carries the key's name as caller, and never the key", async () => {
    const service = await started('keys');
    const http = request(service.baseUrl);
    // The demo data is loaded on a new SQLite file; 1001 is unlocked.
    await http
      .get(getTransactionPath(1001))
      .set('X-Api-Key', GATEWAY_KEY)
      .set('X-Request-Id', 'auth-log-read')
      .expect(200);
    await http
      .post(UPDATE_AGENTS)
      .set('Authorization', `ApiKey ${BACKOFFICE_KEY}`)
      .set('X-Request-Id', 'auth-log-write')
      .send(renameBroker(1001, 'Broker In The Log'))
      .expect(204);
    await http
      .get(getTransactionPath(1001))
      .set('X-Api-Key', UNKNOWN_KEY)
      .set('X-Request-Id', 'auth-log-refused')
      .expect(401);
    await http.get('/health/live').set('X-Request-Id', 'auth-log-probe').expect(200);

    expect((await requestLine(service, 'auth-log-read')).caller).toBe('gateway');
    expect((await requestLine(service, 'auth-log-write')).caller).toBe('backoffice');
    const refused = await requestLine(service, 'auth-log-refused');
    expect(refused.res?.statusCode).toBe(401);
    expect(refused.caller).toBeUndefined();
    expect((await requestLine(service, 'auth-log-probe')).caller).toBeUndefined();
    for (const secret of [GATEWAY_KEY, BACKOFFICE_KEY, UNKNOWN_KEY])
      expect(service.output).not.toContain(secret);
    await service.stop();
  });

  it('never carries a credential sent in the query string: its name, then REDACTED', async () => {
    const service = await started('query');
    const secret = (index: number) => `query-S3CRET-${index}`;
    // Sent as written (supertest would encode the brackets), each to be refused or not found.
    const sent: [string, string, string][] = [
      [
        'query-keys',
        `${getTransactionPath(1001)}?api_key=${secret(1)}&apikey=${secret(2)}&key=${secret(3)}&access_token=${secret(4)}&limit=2`,
        `${getTransactionPath(1001)}?api_key=REDACTED&apikey=REDACTED&key=REDACTED&access_token=REDACTED&limit=2`,
      ],
      [
        'query-variants',
        `${LIST_TRANSACTIONS}?status=a%26b&API-KEY=${secret(5)}&Access%5FToken=${secret(6)}&password[]=${secret(7)}&token&empty=&=x`,
        `${LIST_TRANSACTIONS}?status=a%26b&API-KEY=REDACTED&Access%5FToken=REDACTED&password[]=REDACTED&token&empty=&=x`,
      ],
      [
        'query-configured',
        `${REQUIREMENTS}?Partner_Pin=${secret(8)}&x_signed=${secret(9)}&partner=kept`,
        `${REQUIREMENTS}?Partner_Pin=REDACTED&x_signed=REDACTED&partner=kept`,
      ],
      // No route answers it: the line's message carries the URL too.
      ['query-unrouted', `/nowhere?id_token=${secret(10)}`, '/nowhere?id_token=REDACTED'],
    ];
    for (const [id, path] of sent) {
      const response = await rawRequest(service.baseUrl, {
        method: 'GET',
        path,
        headers: { 'X-Request-Id': id },
      });
      expect([401, 404]).toContain(response.status);
    }

    for (const [id, , logged] of sent)
      expect((await requestLine(service, id)).req?.url).toBe(logged);
    expect((await requestLine(service, 'query-unrouted')).msg).toMatch(
      /^GET \/nowhere\?id_token=REDACTED 404 \d+ms$/,
    );
    expect(service.output).not.toContain('S3CRET');
    await service.stop();
  });

  it("carries the token's sub as caller, and never the token", async () => {
    const service = await started('tokens');
    const http = request(service.baseUrl);
    const token = await issuer.sign(claims({ sub: 'log-subject-9' }));
    const refusedToken = await stranger.sign(claims({ sub: 'log-intruder' }));
    await http
      .get(getTransactionPath(1001))
      .set('Authorization', `Bearer ${token}`)
      .set('X-Request-Id', 'jwt-log-read')
      .expect(200);
    await http
      .get(getTransactionPath(1001))
      .set('Authorization', `Bearer ${refusedToken}`)
      .set('X-Request-Id', 'jwt-log-refused')
      .expect(401);

    expect((await requestLine(service, 'jwt-log-read')).caller).toBe('log-subject-9');
    expect((await requestLine(service, 'jwt-log-refused')).caller).toBeUndefined();
    for (const secret of [token, refusedToken]) {
      expect(service.output).not.toContain(secret);
      expect(service.output).not.toContain(secret.split('.')[2]);
    }
    expect(service.output).not.toContain('log-intruder');
    await service.stop();
  });
});

// =============================================================================================
// SWAGGER

const OPENAPI_ROUTES = ['/swagger', '/swagger-json', '/swagger-yaml'];

describe('SWAGGER', () => {
  describe('off', () => {
    const service = useSqliteApp(() => ({ SWAGGER: 'off' }));

    it('serves neither the UI nor the document', async () => {
      for (const path of OPENAPI_ROUTES) {
        const response = await service.http.get(path);
        expectProblem(response, 404, { modelState: false });
      }
      await service.http.get(REQUIREMENTS).expect(200);
    });
  });

  describe('protected, with AUTH_MODE=apikey', () => {
    const service = useSqliteApp(() => ({
      SWAGGER: 'protected',
      AUTH_MODE: 'apikey',
      AUTH_API_KEYS: apiKeysVariable(API_KEYS),
    }));

    it('answers 401 without a key, or with a wrong one', async () => {
      for (const path of OPENAPI_ROUTES) {
        expectUnauthenticated(await service.http.get(path), APIKEY_CHALLENGE);
        expectUnauthenticated(
          await service.http.get(path).set('X-Api-Key', UNKNOWN_KEY),
          /^ApiKey realm="property-sales"/,
        );
      }
    });

    it('serves the UI and the document with a key', async () => {
      const ui = await service.http.get('/swagger').set('X-Api-Key', GATEWAY_KEY).expect(200);
      expect(ui.text).toContain('swagger-ui');
      const document = await service.http
        .get('/swagger-json')
        .set('Authorization', `ApiKey ${BACKOFFICE_KEY}`)
        .expect(200);
      expect(document.body).toMatchObject({ openapi: expect.stringMatching(/^3\./) });
    });
  });

  describe('public (the default), with AUTH_MODE=apikey', () => {
    const service = useSqliteApp(() => ({
      AUTH_MODE: 'apikey',
      AUTH_API_KEYS: apiKeysVariable(API_KEYS),
    }));

    it('serves the UI and the document without a key, while the API asks for one', async () => {
      const ui = await service.http.get('/swagger').expect(200);
      expect(ui.text).toContain('swagger-ui');
      const document = await service.http.get('/swagger-json').expect(200);
      expect(document.body).toMatchObject({ openapi: expect.stringMatching(/^3\./) });
      expectUnauthenticated(await service.http.get(REQUIREMENTS), APIKEY_CHALLENGE);
    });
  });
});

// =============================================================================================
// METRICS

describe('METRICS', () => {
  describe('off', () => {
    const service = useSqliteApp(() => ({ METRICS: 'off' }));

    it('serves no metrics', async () => {
      expectProblem(await service.http.get('/metrics'), 404, { modelState: false });
    });
  });

  describe('protected, with AUTH_MODE=apikey', () => {
    const service = useSqliteApp(() => ({
      METRICS: 'protected',
      AUTH_MODE: 'apikey',
      AUTH_API_KEYS: apiKeysVariable(API_KEYS),
    }));

    it('answers 401 without a key, and the metrics with one', async () => {
      expectUnauthenticated(await service.http.get('/metrics'), APIKEY_CHALLENGE);
      const metrics = await service.http.get('/metrics').set('X-Api-Key', GATEWAY_KEY).expect(200);
      expect(metrics.text).toContain('http_requests_total');
    });
  });

  describe('public (the default), with AUTH_MODE=apikey', () => {
    const service = useSqliteApp(() => ({
      AUTH_MODE: 'apikey',
      AUTH_API_KEYS: apiKeysVariable(API_KEYS),
    }));

    it('serves the metrics without a key, while the API asks for one', async () => {
      const metrics = await service.http.get('/metrics').expect(200);
      expect(metrics.text).toContain('process_cpu_user_seconds_total');
      expectUnauthenticated(await service.http.get(REQUIREMENTS), APIKEY_CHALLENGE);
    });
  });
});

// =============================================================================================
// Start-up

describe('start-up', () => {
  const REFUSALS: [string, Record<string, string>, string[]][] = [
    ['AUTH_MODE=apikey without AUTH_API_KEYS', { AUTH_MODE: 'apikey' }, ['AUTH_API_KEYS']],
    [
      'AUTH_MODE=jwt without a key source, issuer or audience',
      { AUTH_MODE: 'jwt' },
      ['AUTH_JWKS_URL', 'AUTH_JWT_ISSUER', 'AUTH_JWT_AUDIENCE'],
    ],
    ['an unknown AUTH_MODE', { AUTH_MODE: 'basic' }, ['AUTH_MODE']],
    ['an unknown SWAGGER', { SWAGGER: 'hidden' }, ['SWAGGER']],
    ['an unknown METRICS', { METRICS: 'private' }, ['METRICS']],
    ['a RATE_LIMIT that is not a number', { RATE_LIMIT: 'many' }, ['RATE_LIMIT']],
  ];
  const onMariaDb = testDatabaseKinds().includes('mariadb');
  /** The one MariaDB database of the MariaDB cases, made by whichever starts first. */
  let mariaDb: Promise<TestDatabase> | undefined;
  const mariaDbUrl = async () => {
    mariaDb ??= createTestDatabase('mariadb').then((database) => {
      databases.push(database);
      return database;
    });
    return (await mariaDb).url;
  };

  const started = startedTogether<Record<string, () => Promise<ServiceProcess>>>({
    ...(onMariaDb && {
      'MariaDB without AUTH_MODE': async () =>
        exitedService({ DATABASE_URL: await mariaDbUrl(), MIGRATIONS_RUN: 'true' }),
      'MariaDB with AUTH_MODE=none': async () =>
        servingService({
          DATABASE_URL: await mariaDbUrl(),
          MIGRATIONS_RUN: 'true',
          AUTH_MODE: 'none',
        }),
    }),
    'SQLite without AUTH_MODE': () => servingService({}),
    ...Object.fromEntries(REFUSALS.map(([title, env]) => [title, () => exitedService(env)])),
    'a key in clear': () =>
      exitedService({ AUTH_MODE: 'apikey', AUTH_API_KEYS: `gateway=${GATEWAY_KEY}` }),
  });

  if (onMariaDb) {
    describe('on MariaDB', () => {
      it('refuses to start without AUTH_MODE, naming it', async () => {
        const service = await started('MariaDB without AUTH_MODE');
        const { code } = await service.exit();
        expect(code).not.toBe(0);
        expect(code).not.toBeNull();
        expect(service.stderr).toContain('AUTH_MODE');
      });

      it('starts with AUTH_MODE=none, and serves without credentials', async () => {
        const service = await started('MariaDB with AUTH_MODE=none');
        await request(service.baseUrl).get('/health/ready').expect(200);
        await request(service.baseUrl).get(REQUIREMENTS).expect(200);
        expect((await service.stop()).code).toBe(0);
      });
    });
  }

  it('starts on SQLite without AUTH_MODE, open to every caller', async () => {
    const service = await started('SQLite without AUTH_MODE');
    await request(service.baseUrl).get(getTransactionPath(1001)).expect(200);
    expect((await service.stop()).code).toBe(0);
  });

  it.each(REFUSALS)('refuses to start with %s, naming the variable', async (title, _, names) => {
    const service = await started(title);
    const { code } = await service.exit();
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    for (const name of names) expect(service.stderr).toContain(name);
  });

  it('refuses an API key given in clear in AUTH_API_KEYS, without writing the key out', async () => {
    const service = await started('a key in clear');
    const { code } = await service.exit();
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    expect(service.stderr).toContain('AUTH_API_KEYS');
    // Start-up errors end up in the same log store as everything else.
    expect(service.output).not.toContain(GATEWAY_KEY);
  });
});

// =============================================================================================
// Rate limiting

const WINDOW_SECONDS = 60;
const RATE_KEYS = {
  alpha: 'rl-alpha-5b0f8e2c9d1a7364',
  beta: 'rl-beta-c81e4f2a06d9b735',
  gamma: 'rl-gamma-9a3d7c1e5f08b246',
  delta: 'rl-delta-2e6b0a9f4c7d8153',
  epsilon: 'rl-epsilon-7f1c3b9e0d2a6845',
};

describeOnSqlite(
  'RATE_LIMIT=3 per caller, AUTH_MODE=apikey',
  (context: SuiteContext) => {
    const READ = 401;
    beforeAll(() =>
      context.running.seed({ requirements: CATALOGUE, transactions: [transactionRecord(READ)] }),
    );

    const read = (key: string, headers: Record<string, string> = {}) =>
      context.http.get(getTransactionPath(READ)).set('X-Api-Key', key).set(headers);

    it("answers a caller's 4th request in the window with 429, Retry-After and a problem, in XML when asked", async () => {
      for (let index = 0; index < 3; index += 1) await read(RATE_KEYS.alpha).expect(200);
      expectRateLimited(await read(RATE_KEYS.alpha), WINDOW_SECONDS);
      const xml = await read(RATE_KEYS.alpha, { Accept: 'application/xml' });
      expect(xml.status).toBe(429);
      expect(xml.headers['content-type']).toBe('application/xml; charset=utf-8');
      expect(xml.text).toMatch(LEGACY_XML_ERROR);
      expectRetryAfter(xml, WINDOW_SECONDS);
    });

    it('keeps a bucket per caller: another key is still served', async () => {
      for (let index = 0; index < 3; index += 1) await read(RATE_KEYS.alpha);
      expect((await read(RATE_KEYS.alpha)).status).toBe(429);
      for (let index = 0; index < 3; index += 1) await read(RATE_KEYS.beta).expect(200);
    });

    it('keys the bucket by the caller, not by X-Forwarded-For', async () => {
      for (let index = 1; index <= 3; index += 1)
        await read(RATE_KEYS.gamma, { 'X-Forwarded-For': `203.0.113.${index}` }).expect(200);
      expectRateLimited(
        await read(RATE_KEYS.gamma, { 'X-Forwarded-For': '198.51.100.77' }),
        WINDOW_SECONDS,
      );
    });

    it("counts a caller's requests across routes", async () => {
      for (let index = 0; index < 3; index += 1) await read(RATE_KEYS.delta).expect(200);
      expectRateLimited(
        await context.http.get(getAgentHistoryPath(READ)).set('X-Api-Key', RATE_KEYS.delta),
        WINDOW_SECONDS,
      );
    });

    it('never limits the health probes', async () => {
      for (let index = 0; index < 4; index += 1) await read(RATE_KEYS.epsilon);
      expect((await read(RATE_KEYS.epsilon)).status).toBe(429);
      for (let index = 0; index < 8; index += 1) {
        for (const probe of HEALTH_PROBES) {
          const anonymous = await context.http.get(probe).expect(200);
          expect(anonymous.headers['retry-after']).toBeUndefined();
          await context.http.get(probe).set('X-Api-Key', RATE_KEYS.epsilon).expect(200);
        }
      }
    });
  },
  {
    AUTH_MODE: 'apikey',
    AUTH_API_KEYS: apiKeysVariable(RATE_KEYS),
    RATE_LIMIT: '3',
    RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
  },
);

describe('RATE_LIMIT=3 with AUTH_MODE=none', () => {
  const service = useSqliteApp(() => ({
    AUTH_MODE: 'none',
    RATE_LIMIT: '3',
    RATE_LIMIT_WINDOW_SECONDS: String(WINDOW_SECONDS),
  }));

  it('counts one client address, whatever X-Forwarded-For says', async () => {
    const spoofed = [
      { 'X-Forwarded-For': '203.0.113.10' },
      { 'X-Forwarded-For': '203.0.113.11, 10.0.0.1' },
      { Forwarded: 'for=203.0.113.12', 'X-Real-IP': '203.0.113.12' },
    ];
    for (const headers of spoofed) await service.http.get(REQUIREMENTS).set(headers).expect(200);
    expectRateLimited(
      await service.http.get(REQUIREMENTS).set('X-Forwarded-For', '198.51.100.200'),
      WINDOW_SECONDS,
    );
    expect((await service.http.get(REQUIREMENTS)).status).toBe(429);
  });

  it('never limits the health probes', async () => {
    for (let index = 0; index < 8; index += 1)
      for (const probe of HEALTH_PROBES) await service.http.get(probe).expect(200);
  });
});
