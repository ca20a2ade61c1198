import { Controller, Get, Module } from '@nestjs/common';
import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import request, { type Response, type Test } from 'supertest';
import { PublicRoute } from '../src/auth/auth.guard';
import { RequiresScope } from '../src/auth/scopes';
import { TRANSACTIONS_READ as TRANSACTIONS_READ_SCOPE } from '../src/transaction/transaction.controller';
import {
  apiKeyEntry,
  type Claims,
  JwksServer,
  nowSeconds,
  TokenIssuer,
} from './support/auth-credentials';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { ForgottenScopeModule } from './support/forgotten-scope.module';
import { expectProblem, type HttpResult } from './support/http-assertions';
import { jsonLines, ServiceProcess } from './support/processes';
import {
  describeOnEachDatabase,
  type Environment,
  RunningApp,
  type SuiteContext,
} from './support/test-app';
import {
  BODY_FORMATS,
  type BodyFormat,
  getAgentHistoryPath,
  getTransactionPath,
  transactionBody,
  UPDATE_AGENTS,
  type WireBody,
} from './support/update-agents-cases';

/**
 * Authorization by scope, as callers see it over HTTP: each operation answers 401 without a
 * credential, 403 insufficient_scope (in the client's format, with its challenge) to a credential
 * without the operation's scope, and serves one with it, whatever the credential (API keys, RS256
 * and ES256 tokens with `scope`, `scp` or `roles`); grants cannot be misconfigured silently; the
 * refusals are logged without the credential, and counted against the caller, not as failed logins.
 */

// ---------------------------------------------------------------------------------------------
// Scopes, routes and client formats

const TRANSACTIONS_READ = 'transactions:read';
const TRANSACTIONS_WRITE = 'transactions:write';
const REQUIREMENTS_READ = 'requirements:read';
const METRICS_READ = 'metrics:read';
const API_DOCS_READ = 'api-docs:read';
/** Every scope the service declares. */
const ALL_SCOPES: readonly string[] = [
  TRANSACTIONS_READ,
  TRANSACTIONS_WRITE,
  REQUIREMENTS_READ,
  METRICS_READ,
  API_DOCS_READ,
];
/** Every declared scope but one: the most a caller refused that one can hold. */
const allScopesBut = (scope: string) => ALL_SCOPES.filter((granted) => granted !== scope);

const REQUIREMENTS = '/api/Requirement/GetRequirements';
const LIST_TRANSACTIONS = '/api/Transaction/ListTransactions';
/** Read by the read routes, never written. */
const READ_ID = 7101;
/** Every UpdateAgents of a suite renames this transaction's broker. */
const WRITE_ID = 7102;
const SEEDED = {
  requirements: CATALOGUE,
  transactions: [READ_ID, WRITE_ID].map((id) => transactionRecord(id)),
};

const REALM = 'realm="property-sales"';
const LEGACY_XML_ERROR = /^<Error><Message>([^<]+)<\/Message><\/Error>$/;

type Headers = Record<string, string>;
type Http = RunningApp['http'];

/** How a client speaks: what it accepts, how it writes an UpdateAgents body, what it is answered in. */
interface ClientFormat {
  readonly name: string;
  /** The Accept header it sends, if any. */
  readonly accept?: string;
  readonly body: BodyFormat;
  /** The media type of the answers it gets, successes and errors. */
  readonly answers: 'application/json' | 'application/xml';
}

const bodyFormat = (contentType: string) =>
  BODY_FORMATS.find((format) => format.contentType === contentType)!;

const FORMATS: readonly ClientFormat[] = [
  {
    name: 'JSON',
    accept: 'application/json',
    body: bodyFormat('application/json'),
    answers: 'application/json',
  },
  {
    name: 'XML',
    accept: 'application/xml',
    body: bodyFormat('application/xml'),
    answers: 'application/xml',
  },
  // A form post, and a GET without Accept: both are answered in JSON.
  {
    name: 'form, no Accept',
    body: bodyFormat('application/x-www-form-urlencoded'),
    answers: 'application/json',
  },
];
const NO_ACCEPT = FORMATS[2];

interface HistoryRecord {
  readonly changed_by: string | null;
  readonly changes: { field: string; before: unknown; after: unknown }[];
}

/** WRITE_ID as the service's reads show it. */
interface Stored {
  readonly transaction: WireBody;
  readonly etag: unknown;
  readonly history: HistoryRecord[];
}

/** What a served request must have done: its caller, the broker name an UpdateAgents sent. */
interface Expected {
  readonly caller: string | null;
  readonly brokername: string;
  readonly stored: () => Promise<Stored>;
}

interface RouteCase {
  readonly name: string;
  readonly scope: string;
  /** Sends the request in the client's format; UpdateAgents renames WRITE_ID's broker to `brokername`. */
  readonly send: (http: Http, format: ClientFormat, headers: Headers, brokername: string) => Test;
  readonly expectServed: (
    response: Response,
    format: ClientFormat,
    expected: Expected,
  ) => Promise<void>;
}

const withAccept = (call: Test, format: ClientFormat) =>
  format.accept ? call.set('Accept', format.accept) : call;

const readRoute = (name: string, scope: string, path: string, shows?: string): RouteCase => ({
  name,
  scope,
  send: (http, format, headers) => withAccept(http.get(path).set(headers), format),
  expectServed: (response, format) => {
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe(`${format.answers}; charset=utf-8`);
    if (shows) expect(response.text).toContain(shows);
    return Promise.resolve();
  },
});

const ROUTES: readonly RouteCase[] = [
  readRoute(
    'GetTransaction',
    TRANSACTIONS_READ,
    getTransactionPath(READ_ID),
    'Villa Verde Estates',
  ),
  readRoute('ListTransactions', TRANSACTIONS_READ, LIST_TRANSACTIONS, 'Villa Verde Estates'),
  readRoute('GetAgentHistory', TRANSACTIONS_READ, getAgentHistoryPath(READ_ID)),
  readRoute('GetRequirements', REQUIREMENTS_READ, REQUIREMENTS, 'Bank letter of guarantee'),
  {
    name: 'UpdateAgents',
    scope: TRANSACTIONS_WRITE,
    send: (http, format, headers, brokername) =>
      withAccept(http.post(UPDATE_AGENTS).set(headers), format)
        .set('Content-Type', format.body.contentType)
        .send(format.body.encode(transactionBody(WRITE_ID, { brokername }))),
    expectServed: async (response, _format, { caller, brokername, stored }) => {
      expect(response.status).toBe(204);
      const { transaction, history } = await stored();
      expect(transaction.brokername).toBe(brokername);
      expect(history.at(-1)).toMatchObject({
        changed_by: caller,
        changes: [{ field: 'brokername', after: brokername }],
      });
    },
  },
];

const ROUTES_BY_FORMAT = ROUTES.flatMap((route) => FORMATS.map((format) => ({ route, format })));

let renames = 0;
/** A broker name no earlier request sent: a write that got through cannot go unseen. */
const newBrokerName = () => `Broker ${(renames += 1)}`;

/** The documents METRICS=protected and SWAGGER=protected put behind a scope. */
const DOCUMENTS: readonly { path: string; scope: string; shows: string }[] = [
  { path: '/metrics', scope: METRICS_READ, shows: 'http_requests_total' },
  { path: '/swagger-json', scope: API_DOCS_READ, shows: '"openapi":"3.' },
  { path: '/swagger-yaml', scope: API_DOCS_READ, shows: 'openapi: 3.' },
  { path: '/swagger', scope: API_DOCS_READ, shows: 'swagger-ui' },
  { path: '/asyncapi-json', scope: API_DOCS_READ, shows: '"asyncapi"' },
];

// ---------------------------------------------------------------------------------------------
// Expectations

/** An error in the client's format; returns its message. */
function expectError(response: HttpResult, format: ClientFormat, status: number, code: string) {
  if (format.answers === 'application/xml') {
    expect(response.status).toBe(status);
    expect(response.headers['content-type']).toBe('application/xml; charset=utf-8');
    expect(response.text).toMatch(LEGACY_XML_ERROR);
    return LEGACY_XML_ERROR.exec(response.text)![1];
  }
  const body = expectProblem(response, status, { modelState: false });
  expect(body.type).toMatch(new RegExp(`${code}$`));
  return body.Message as string;
}

function expectUnauthenticated(response: HttpResult, format: ClientFormat, scheme: string) {
  expectError(response, format, 401, 'unauthenticated');
  expect(response.headers['www-authenticate']).toBe(`${scheme} ${REALM}`);
}

function expectInsufficientScope(
  response: HttpResult,
  format: ClientFormat,
  scheme: string,
  scope: string,
) {
  expect(expectError(response, format, 403, 'insufficient_scope')).toContain(scope);
  expect(response.headers['www-authenticate']).toBe(
    `${scheme} ${REALM}, error="insufficient_scope", scope="${scope}"`,
  );
}

/** WRITE_ID's transaction and history, read with `reader`. */
async function storedWrite(http: Http, reader: Headers): Promise<Stored> {
  const read = await http
    .get(getTransactionPath(WRITE_ID))
    .set(reader)
    .set('Accept', 'application/json');
  expect(read.status).toBe(200);
  const history = await http
    .get(getAgentHistoryPath(WRITE_ID))
    .set(reader)
    .set('Accept', 'application/json');
  expect(history.status).toBe(200);
  return {
    transaction: read.body as WireBody,
    etag: read.headers.etag,
    history: history.body as HistoryRecord[],
  };
}

// ---------------------------------------------------------------------------------------------
// Credentials

/** A credential presented on a request, and the caller it identifies. */
interface Presented {
  readonly headers: Headers;
  readonly caller: string;
  /** What must never reach a response or a log: the key or the token. */
  readonly secret: string;
}

interface CredentialKind {
  readonly name: string;
  /**
   * The fewest scopes it can be granted: an API key listed without scopes holds them all, so one
   * granted none cannot be written.
   */
  readonly minScopes: number;
  /** A credential of this kind granted exactly `scopes`. */
  readonly present: (scopes: readonly string[]) => Promise<Presented>;
}

/** Bit i set: the key holds ALL_SCOPES[i]. */
const maskOf = (scopes: readonly string[]) =>
  ALL_SCOPES.reduce(
    (mask, scope, index) => (scopes.includes(scope) ? mask | (1 << index) : mask),
    0,
  );

/** One configured key for each non-empty set of scopes. */
const scopedKey = (mask: number) => ({
  name: `scoped-${mask}`,
  key: `sk-live-${String(mask).padStart(2, '0')}-4f9c2e7a1b8d3605e0`,
  scopes: ALL_SCOPES.filter((_, index) => (mask & (1 << index)) !== 0),
});
const SCOPED_KEYS = Array.from({ length: 2 ** ALL_SCOPES.length - 1 }, (_, index) =>
  scopedKey(index + 1),
);
/** Listed without scopes: may call everything. */
const FULL_ACCESS = { name: 'full-access', key: 'fa-live-8d2b6e0c4a9f1735c2' };
const API_KEYS = [
  apiKeyEntry(FULL_ACCESS.name, FULL_ACCESS.key),
  ...SCOPED_KEYS.map(({ name, key, scopes }) => apiKeyEntry(name, key, scopes)),
].join(',');

const apiKeyKind = (name: string, header: (key: string) => Headers): CredentialKind => ({
  name,
  minScopes: 1,
  present: (scopes) => {
    const mask = maskOf(scopes);
    if (mask === 0) throw new Error('An API key granted no scope cannot be configured');
    const { name: caller, key } = scopedKey(mask);
    return Promise.resolve({ headers: header(key), caller, secret: key });
  },
});

const ISSUER = 'https://login.example.test/';
const AUDIENCE = 'property-sales-api';

let rsa: TokenIssuer;
let ec: TokenIssuer;
let jwks: JwksServer | undefined;

/** A token signed by `issuer` for `sub`, with these claims besides the standard ones. */
async function signToken(issuer: TokenIssuer, sub: string, grants: Claims): Promise<string> {
  const now = nowSeconds();
  return issuer.sign({ iss: ISSUER, aud: AUDIENCE, sub, iat: now, exp: now + 300, ...grants });
}

const bearer = (token: string): Headers => ({ Authorization: `Bearer ${token}` });

const tokenKind = (
  name: string,
  sub: string,
  issuer: () => TokenIssuer,
  grants: (scopes: readonly string[]) => Claims,
): CredentialKind => ({
  name,
  minScopes: 0,
  present: async (scopes) => {
    const token = await signToken(issuer(), sub, grants(scopes));
    return { headers: bearer(token), caller: sub, secret: token };
  },
});

/** An app role per scope, as an identity provider's client-credentials tokens carry them. */
const ROLE_OF: Record<string, string> = {
  [TRANSACTIONS_READ]: 'Transactions.Read',
  [TRANSACTIONS_WRITE]: 'Transactions.Write',
  [REQUIREMENTS_READ]: 'Requirements.Read',
  [METRICS_READ]: 'Metrics.Read',
  [API_DOCS_READ]: 'ApiDocs.Read',
};
const ROLE_SCOPES = [
  ...Object.entries(ROLE_OF).map(([scope, role]) => `${role}=${scope}`),
  `Auditor=${TRANSACTIONS_READ}+${REQUIREMENTS_READ}`,
].join(',');

const JWT_KINDS: readonly CredentialKind[] = [
  tokenKind(
    'a JWT RS256 with a scope string',
    'rs256-scope-client',
    () => rsa,
    (scopes) => ({
      scope: scopes.join(' '),
    }),
  ),
  tokenKind(
    'a JWT RS256 with an scp array',
    'rs256-scp-client',
    () => rsa,
    (scopes) => ({
      scp: [...scopes],
    }),
  ),
  tokenKind(
    'a JWT ES256 with a scope string',
    'es256-scope-client',
    () => ec,
    (scopes) => ({
      scope: scopes.join(' '),
    }),
  ),
  tokenKind(
    'a JWT ES256 with an scp array',
    'es256-scp-client',
    () => ec,
    (scopes) => ({
      scp: [...scopes],
    }),
  ),
  tokenKind(
    'a JWT ES256 with an scp string (Azure AD)',
    'es256-azure-client',
    () => ec,
    (scopes) => ({
      scp: scopes.join(' '),
    }),
  ),
  tokenKind(
    'a JWT RS256 with app roles alone',
    'rs256-roles-client',
    () => rsa,
    (scopes) => ({
      roles: scopes.map((scope) => ROLE_OF[scope]),
    }),
  ),
];

beforeAll(async () => {
  rsa = await TokenIssuer.create('rsa-key-2026', 'RS256');
  ec = await TokenIssuer.create('ec-key-2026', 'ES256');
  jwks = await JwksServer.start([await rsa.jwk(), await ec.jwk()]);
  // Read by the JWT services when they start, which is after this.
  JWT.env.AUTH_JWKS_URL = jwks.url;
});

afterAll(async () => {
  await jwks?.close();
});

// ---------------------------------------------------------------------------------------------
// The matrix and the property, per authentication mode and database

interface ModeSetup {
  readonly scheme: 'ApiKey' | 'Bearer';
  readonly kinds: readonly CredentialKind[];
  /** Headers of a caller that may read transactions: to see what a request changed. */
  readonly reader: () => Promise<Headers>;
  readonly env: Environment;
}

const PROTECTED_DOCUMENTS: Environment = {
  METRICS: 'protected',
  SWAGGER: 'protected',
  // Authentication's default guard, limits and all; far above the refusals below.
  AUTH_FAILURE_LIMIT: '1000',
};

const API_KEY: ModeSetup = {
  scheme: 'ApiKey',
  kinds: [
    apiKeyKind('an API key in X-Api-Key', (key) => ({ 'X-Api-Key': key })),
    apiKeyKind('an API key in Authorization: ApiKey', (key) => ({
      Authorization: `ApiKey ${key}`,
    })),
  ],
  reader: () => Promise.resolve({ 'X-Api-Key': FULL_ACCESS.key }),
  env: { ...PROTECTED_DOCUMENTS, AUTH_MODE: 'apikey', AUTH_API_KEYS: API_KEYS },
};

const JWT: ModeSetup = {
  scheme: 'Bearer',
  kinds: JWT_KINDS,
  reader: async () => (await JWT_KINDS[0].present([TRANSACTIONS_READ])).headers,
  env: {
    ...PROTECTED_DOCUMENTS,
    AUTH_MODE: 'jwt',
    AUTH_JWT_ISSUER: ISSUER,
    AUTH_JWT_AUDIENCE: AUDIENCE,
    AUTH_JWT_ALGORITHMS: 'RS256,ES256',
    AUTH_JWT_ROLE_SCOPES: ROLE_SCOPES,
  },
};

const PROPERTY_RUNS = 60;

/** The tests every authenticating mode answers alike, on the suite's service. */
function scopeMatrix(context: SuiteContext, setup: ModeSetup): void {
  const stored = async () => storedWrite(context.http, await setup.reader());

  beforeAll(() => context.running.seed(SEEDED));

  it.each(ROUTES_BY_FORMAT)(
    'answers $route.name ($format.name) without a credential: 401 with the challenge',
    async ({ route, format }) => {
      const response = await route.send(context.http, format, {}, newBrokerName());
      expectUnauthenticated(response, format, setup.scheme);
    },
  );

  describe.each(setup.kinds)('with $name', (kind) => {
    it.each(ROUTES_BY_FORMAT)(
      'answers $route.name ($format.name) 403 to a caller granted every scope but $route.scope, changing nothing',
      async ({ route, format }) => {
        const caller = await kind.present(allScopesBut(route.scope));
        const before = await stored();
        const response = await route.send(context.http, format, caller.headers, newBrokerName());
        expectInsufficientScope(response, format, setup.scheme, route.scope);
        expect(response.text).not.toContain(caller.secret);
        expect(await stored()).toEqual(before);
      },
    );

    it.each(ROUTES_BY_FORMAT)(
      'serves $route.name ($format.name) to a caller granted $route.scope alone',
      async ({ route, format }) => {
        const caller = await kind.present([route.scope]);
        const brokername = newBrokerName();
        const response = await route.send(context.http, format, caller.headers, brokername);
        expect(response.headers['www-authenticate']).toBeUndefined();
        await route.expectServed(response, format, { caller: caller.caller, brokername, stored });
      },
    );
  });

  it(`never serves a caller without the route's scope, nor refuses one with it (${PROPERTY_RUNS} random grants)`, async () => {
    const grant = fc.constantFrom(...setup.kinds).chain((kind) =>
      fc.record({
        kind: fc.constant(kind),
        scopes: fc.shuffledSubarray([...ALL_SCOPES], { minLength: kind.minScopes }),
      }),
    );
    const outcomes = { served: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(
        grant,
        fc.constantFrom(...ROUTES),
        fc.constantFrom(...FORMATS),
        async ({ kind, scopes }, route, format) => {
          const caller = await kind.present(scopes);
          const brokername = newBrokerName();
          const response = await route.send(context.http, format, caller.headers, brokername);
          if (scopes.includes(route.scope)) {
            outcomes.served += 1;
            await route.expectServed(response, format, {
              caller: caller.caller,
              brokername,
              stored,
            });
          } else {
            outcomes.refused += 1;
            expectInsufficientScope(response, format, setup.scheme, route.scope);
          }
        },
      ),
      { numRuns: PROPERTY_RUNS },
    );
    // Both sides of the property were tried.
    expect(outcomes.served).toBeGreaterThan(0);
    expect(outcomes.refused).toBeGreaterThan(0);
  });

  it.each(DOCUMENTS)(
    'answers $path 401 without a credential, 403 without $scope, and serves it with $scope alone',
    async ({ path, scope, shows }) => {
      const [kind] = setup.kinds;
      expectUnauthenticated(await context.http.get(path), NO_ACCEPT, setup.scheme);
      const lacking = await kind.present(allScopesBut(scope));
      expectInsufficientScope(
        await context.http.get(path).set(lacking.headers),
        NO_ACCEPT,
        setup.scheme,
        scope,
      );
      const holding = await kind.present([scope]);
      const served = await context.http.get(path).set(holding.headers);
      expect(served.status).toBe(200);
      expect(served.text).toContain(shows);
    },
  );
}

describeOnEachDatabase(
  'AUTH_MODE=apikey, keys with scopes',
  (context: SuiteContext) => {
    scopeMatrix(context, API_KEY);

    it.each(ROUTES)('serves $name to a key listed without scopes', async (route) => {
      const brokername = newBrokerName();
      const response = await route.send(
        context.http,
        FORMATS[0],
        { 'X-Api-Key': FULL_ACCESS.key },
        brokername,
      );
      await route.expectServed(response, FORMATS[0], {
        caller: FULL_ACCESS.name,
        brokername,
        stored: () => storedWrite(context.http, { 'X-Api-Key': FULL_ACCESS.key }),
      });
    });

    it('serves the protected documents to a key listed without scopes', async () => {
      for (const { path, shows } of DOCUMENTS) {
        const response = await context.http.get(path).set('X-Api-Key', FULL_ACCESS.key);
        expect(response.status).toBe(200);
        expect(response.text).toContain(shows);
      }
    });
  },
  API_KEY.env,
);

describeOnEachDatabase(
  'AUTH_MODE=jwt, RS256 and ES256 keys from a JWKS',
  (context: SuiteContext) => {
    scopeMatrix(context, JWT);

    const statusOf = async (route: RouteCase, claims: Claims) => {
      const token = await signToken(rsa, 'role-client', claims);
      return (await route.send(context.http, FORMATS[0], bearer(token), newBrokerName())).status;
    };
    const statuses = (claims: Claims) =>
      Promise.all(ROUTES.map(async (route) => [route.name, await statusOf(route, claims)]));

    it('grants a role each scope AUTH_JWT_ROLE_SCOPES maps it to', async () => {
      expect(Object.fromEntries(await statuses({ roles: ['Auditor'] }))).toEqual({
        GetTransaction: 200,
        ListTransactions: 200,
        GetAgentHistory: 200,
        GetRequirements: 200,
        UpdateAgents: 403,
      });
    });

    it('grants nothing for a role AUTH_JWT_ROLE_SCOPES does not map, even one named as a scope', async () => {
      const refused = await statuses({
        roles: ['Administrator', TRANSACTIONS_READ, TRANSACTIONS_WRITE],
      });
      expect(refused.map(([, status]) => status)).toEqual(ROUTES.map(() => 403));
    });

    it('adds the scopes of roles to those of scope and scp', async () => {
      const served = await statuses({
        scope: REQUIREMENTS_READ,
        scp: [TRANSACTIONS_READ],
        roles: ['Transactions.Write', 'Administrator'],
      });
      expect(Object.fromEntries(served)).toEqual({
        GetTransaction: 200,
        ListTransactions: 200,
        GetAgentHistory: 200,
        GetRequirements: 200,
        UpdateAgents: 204,
      });
    });
  },
  JWT.env,
);

describeOnEachDatabase(
  'AUTH_MODE=none',
  (context: SuiteContext) => {
    beforeAll(() => context.running.seed(SEEDED));

    it.each(ROUTES_BY_FORMAT)(
      'serves $route.name ($format.name) without a credential',
      async ({ route, format }) => {
        const brokername = newBrokerName();
        const response = await route.send(context.http, format, {}, brokername);
        await route.expectServed(response, format, {
          caller: null,
          brokername,
          stored: () => storedWrite(context.http, {}),
        });
      },
    );

    it('serves the documents METRICS and SWAGGER protect without a credential', async () => {
      for (const { path, shows } of DOCUMENTS) {
        const response = await context.http.get(path);
        expect(response.status).toBe(200);
        expect(response.text).toContain(shows);
      }
    });
  },
  { AUTH_MODE: 'none', METRICS: 'protected', SWAGGER: 'protected' },
);

// ---------------------------------------------------------------------------------------------
// Rate limiting

describe('RATE_LIMIT=3 and AUTH_FAILURE_LIMIT=2, with scoped keys', () => {
  const KEYS = {
    lister: { key: 'rl-lister-6c0e9a3f7b2d1458', scopes: [TRANSACTIONS_READ] },
    cataloguer: { key: 'rl-cataloguer-2b7f5d9e0a4c6183', scopes: [REQUIREMENTS_READ] },
    latecomer: { key: 'rl-latecomer-9e3a1c7b5f0d2846', scopes: [REQUIREMENTS_READ] },
  };
  let running: RunningApp | undefined;

  beforeAll(async () => {
    running = await RunningApp.start('sqlite::memory:', {
      AUTH_MODE: 'apikey',
      AUTH_API_KEYS: Object.entries(KEYS)
        .map(([name, { key, scopes }]) => apiKeyEntry(name, key, scopes))
        .join(','),
      RATE_LIMIT: '3',
      RATE_LIMIT_WINDOW_SECONDS: '60',
      AUTH_FAILURE_LIMIT: '2',
    });
  });

  afterAll(async () => {
    await running?.close();
  });

  const call = (path: string, key: string) => running!.http.get(path).set('X-Api-Key', key);

  it("counts a 403 as one of the caller's requests, not as a failed authentication of its address", async () => {
    // The lister is refused the catalogue three times: its requests are spent, the held scope too.
    for (let index = 0; index < 3; index += 1)
      expectInsufficientScope(
        await call(REQUIREMENTS, KEYS.lister.key),
        NO_ACCEPT,
        'ApiKey',
        REQUIREMENTS_READ,
      );
    const limited = await call(LIST_TRANSACTIONS, KEYS.lister.key);
    expectError(limited, NO_ACCEPT, 429, 'rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);

    // Another caller at the same address is served: three refusals counted as failed
    // authentications (2 allowed), or against the address (3 allowed), would lock it out.
    for (let index = 0; index < 3; index += 1)
      expect((await call(REQUIREMENTS, KEYS.cataloguer.key)).status).toBe(200);

    // Whereas two failed authentications do lock the address out, for every caller.
    for (const guess of ['guess-0-00000000000000', 'guess-1-00000000000000'])
      expect((await call(REQUIREMENTS, guess)).status).toBe(401);
    expectError(await call(REQUIREMENTS, KEYS.latecomer.key), NO_ACCEPT, 429, 'rate_limited');
  });
});

// ---------------------------------------------------------------------------------------------
// Start-up checks

/** Every route covered: by the controller's scope, or public. */
@RequiresScope(TRANSACTIONS_READ_SCOPE)
@Controller('CoveredScope')
class CoveredScopeController {
  @Get('Scoped')
  scoped() {
    return { scoped: true };
  }

  @Get('Open')
  @PublicRoute()
  open() {
    return { open: true };
  }
}

@Module({ controllers: [CoveredScopeController] })
class CoveredScopeModule {}

describe('start-up checks', () => {
  const READER = { key: 'sc-reader-1f8b3d6a9c0e2754', scopes: [TRANSACTIONS_READ] };
  const CATALOGUER = { key: 'sc-cataloguer-5a2c8e0f3b7d9146', scopes: [REQUIREMENTS_READ] };
  const keys = (extra: string[] = []) => ({
    AUTH_MODE: 'apikey',
    AUTH_API_KEYS: [
      apiKeyEntry('reader', READER.key, READER.scopes),
      apiKeyEntry('cataloguer', CATALOGUER.key, CATALOGUER.scopes),
      ...extra,
    ].join(','),
  });

  /** The message a start rejects with; fails when the service starts. */
  async function startFailure(
    env: Environment,
    modules?: Parameters<typeof RunningApp.start>[2],
  ): Promise<string> {
    let running: RunningApp;
    try {
      running = await RunningApp.start('sqlite::memory:', env, modules);
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
    await running.close();
    throw new Error('The service started');
  }

  it('refuses to start with a route that neither requires a scope nor is public, naming it', async () => {
    const message = await startFailure(keys(), [ForgottenScopeModule]);
    expect(message).toContain('ForgottenScopeController.forgotten');
    expect(message).not.toContain('ForgottenScopeController.scoped');
  });

  it("starts with a module whose routes are covered by its controller's scope or public", async () => {
    const running = await RunningApp.start('sqlite::memory:', keys(), [CoveredScopeModule]);
    try {
      const scoped = '/api/CoveredScope/Scoped';
      expectUnauthenticated(await running.http.get(scoped), NO_ACCEPT, 'ApiKey');
      expectInsufficientScope(
        await running.http.get(scoped).set('X-Api-Key', CATALOGUER.key),
        NO_ACCEPT,
        'ApiKey',
        TRANSACTIONS_READ,
      );
      await running.http.get(scoped).set('X-Api-Key', READER.key).expect(200);
      await running.http.get('/api/CoveredScope/Open').expect(200);
    } finally {
      await running.close();
    }
  });

  it('refuses to start when AUTH_API_KEYS grants a scope no route requires, naming it', async () => {
    const message = await startFailure(
      keys([
        apiKeyEntry('purger', 'sc-purger-7d4b0e8a2f6c1935', [
          TRANSACTIONS_READ,
          'transactions:delete',
        ]),
      ]),
    );
    expect(message).toContain('AUTH_API_KEYS (purger)');
    expect(message).toContain('transactions:delete');
  });

  it('refuses to start when AUTH_JWT_ROLE_SCOPES grants a scope no route requires, naming it', async () => {
    const message = await startFailure({
      AUTH_MODE: 'jwt',
      AUTH_JWT_PUBLIC_KEY: await rsa.spki(),
      AUTH_JWT_ISSUER: ISSUER,
      AUTH_JWT_AUDIENCE: AUDIENCE,
      AUTH_JWT_ROLE_SCOPES: `Transactions.Read=${TRANSACTIONS_READ},Purger=transactions:delete`,
    });
    expect(message).toContain('AUTH_JWT_ROLE_SCOPES (Purger)');
    expect(message).toContain('transactions:delete');
  });
});

// ---------------------------------------------------------------------------------------------
// The log, from the built service

interface LogLine {
  readonly level: string;
  readonly msg: string;
  readonly req?: { id?: string };
  readonly res?: { statusCode?: number };
  readonly route?: string;
  readonly caller?: string;
  readonly missing_scope?: string;
}

const logLines = (service: ServiceProcess) => jsonLines<LogLine>(service.stdout);

/** Lines at warn or above, outside any request, that speak of scopes. */
const scopeWarnings = (service: ServiceProcess) =>
  logLines(service).filter(
    (line) =>
      ['warn', 'error', 'fatal'].includes(line.level) && !line.req && /scope/i.test(line.msg),
  );

/** The one line of the request with this X-Request-Id, once it is on stdout. */
async function requestLine(service: ServiceProcess, id: string): Promise<LogLine> {
  const deadline = Date.now() + 5000;
  while (!logLines(service).some((line) => line.req?.id === id)) {
    if (Date.now() > deadline) throw new Error(`No log line for the request ${id}`);
    await delay(20);
  }
  const lines = logLines(service).filter((line) => line.req?.id === id);
  expect(lines).toHaveLength(1);
  return lines[0];
}

describe('the log of the built service', () => {
  const directories: string[] = [];
  const services: ServiceProcess[] = [];

  /** `node dist/src/main.js` on a new SQLite file (demo data loaded: transaction 1001), once it serves. */
  async function spawnService(env: Environment): Promise<ServiceProcess> {
    const directory = await mkdtemp(join(tmpdir(), 'property-sales-authz-'));
    directories.push(directory);
    const service = await ServiceProcess.start({
      cwd: directory,
      env: {
        DATABASE_URL: `sqlite:${join(directory, 'service.sqlite')}`,
        LOG_LEVEL: 'info',
        ...env,
      },
    });
    services.push(service);
    await service.ready();
    return service;
  }

  afterAll(async () => {
    await Promise.allSettled(services.splice(0).map((service) => service.stop()));
    await Promise.all(
      directories.splice(0).map((directory) => rm(directory, { recursive: true, force: true })),
    );
  });

  const LEGACY_GATEWAY = 'lg-live-3c9e1a7f5b0d2864';
  const LEGACY_BATCH = 'lb-live-8a2f6d0c4e9b1357';
  const REPORTING = 'rp-live-5e1b9d3f7a0c2468';

  it('warns once at start of the API keys listed without scopes, naming them alone', async () => {
    const service = await spawnService({
      AUTH_MODE: 'apikey',
      AUTH_API_KEYS: [
        apiKeyEntry('legacy-gateway', LEGACY_GATEWAY),
        apiKeyEntry('reporting', REPORTING, [REQUIREMENTS_READ]),
        apiKeyEntry('legacy-batch', LEGACY_BATCH),
      ].join(','),
    });
    const http = request(service.baseUrl);
    // Requests by each key do not repeat the warning.
    for (const key of [LEGACY_GATEWAY, LEGACY_BATCH, LEGACY_GATEWAY])
      await http.get(getTransactionPath(1001)).set('X-Api-Key', key).expect(200);
    await http.get(REQUIREMENTS).set('X-Api-Key', REPORTING).expect(200);
    await http
      .get(getTransactionPath(1001))
      .set('X-Request-Id', 'authz-last')
      .set('X-Api-Key', REPORTING)
      .expect(403);
    await requestLine(service, 'authz-last');

    const warnings = scopeWarnings(service);
    expect(warnings).toHaveLength(1);
    expect(warnings[0].level).toBe('warn');
    expect(warnings[0].msg).toContain('legacy-gateway');
    expect(warnings[0].msg).toContain('legacy-batch');
    expect(warnings[0].msg).not.toContain('reporting');
    for (const key of [LEGACY_GATEWAY, LEGACY_BATCH, REPORTING])
      expect(service.output).not.toContain(key);
  });

  it("logs a refused key's request at warn with its caller, route and missing scope, never the key; no start warning when every key has scopes", async () => {
    const service = await spawnService({
      AUTH_MODE: 'apikey',
      AUTH_API_KEYS: [
        apiKeyEntry('reporting', REPORTING, [REQUIREMENTS_READ]),
        apiKeyEntry('operations', LEGACY_BATCH, [TRANSACTIONS_READ, TRANSACTIONS_WRITE]),
      ].join(','),
    });
    const http = request(service.baseUrl);
    await http
      .get(getTransactionPath(1001))
      .set('X-Api-Key', REPORTING)
      .set('X-Request-Id', 'authz-refused-key')
      .expect(403);
    await http
      .get(REQUIREMENTS)
      .set('X-Api-Key', REPORTING)
      .set('X-Request-Id', 'authz-served-key')
      .expect(200);

    expect(await requestLine(service, 'authz-refused-key')).toMatchObject({
      level: 'warn',
      res: { statusCode: 403 },
      caller: 'reporting',
      route: '/api/Transaction/GetTransaction/:transaction_id',
      missing_scope: TRANSACTIONS_READ,
    });
    const served = await requestLine(service, 'authz-served-key');
    expect(served).toMatchObject({ level: 'info', caller: 'reporting' });
    expect(served.missing_scope).toBeUndefined();
    expect(scopeWarnings(service)).toEqual([]);
    for (const key of [REPORTING, LEGACY_BATCH]) expect(service.output).not.toContain(key);
  });

  it("logs a refused token's request at warn with its subject, route and missing scope, never the token", async () => {
    const service = await spawnService({
      AUTH_MODE: 'jwt',
      AUTH_JWT_PUBLIC_KEY: await ec.spki(),
      AUTH_JWT_ALGORITHMS: 'ES256',
      AUTH_JWT_ISSUER: ISSUER,
      AUTH_JWT_AUDIENCE: AUDIENCE,
    });
    const token = await signToken(ec, 'audit-subject-42', { scope: TRANSACTIONS_READ });
    await request(service.baseUrl)
      .post(UPDATE_AGENTS)
      .set(bearer(token))
      .set('X-Request-Id', 'authz-refused-token')
      .send({ transaction_id: 1001, financetype: 'Cash', brokername: 'Intruder' })
      .expect(403);

    expect(await requestLine(service, 'authz-refused-token')).toMatchObject({
      level: 'warn',
      res: { statusCode: 403 },
      caller: 'audit-subject-42',
      route: '/api/Transaction/UpdateAgents',
      missing_scope: TRANSACTIONS_WRITE,
    });
    expect(service.output).not.toContain(token);
    expect(service.output).not.toContain(token.split('.')[2]);
  });
});
