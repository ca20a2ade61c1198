import bytes from 'bytes';
import { DateTime } from 'luxon';
import { createPublicKey } from 'node:crypto';
import { isAbsolute, resolve } from 'node:path';
import { trimmerOf } from '../common/trim';

export type DatabaseConfig =
  | { readonly kind: 'sqlite'; readonly path: string; readonly demoData: boolean }
  | {
      readonly kind: 'mysql';
      /** The first node's URL; mysql2's scheme. */
      readonly url: string;
      /**
       * Every node DATABASE_URL names, in its order, each as a URL of its own: one, or the nodes of a
       * Galera cluster (`mysql://user:pass@host1:3306,host2:3306/db`), used first to last as they serve.
       */
      readonly nodes: readonly string[];
      /** How often each of several nodes is asked whether it serves (on Galera: Synced, Primary). */
      readonly nodeCheckMs: number;
      /** Read replicas (mysql: URLs): plain reads outside a transaction go to them; empty for none. */
      readonly readUrls: readonly string[];
      /** How long a replica (or the primary) that failed is left out before it is tried again. */
      readonly replicaRetryMs: number;
      /** Where reads go while no replica serves: the primary, or nowhere (503). */
      readonly replicaFallback: 'primary' | 'none';
      /** A replica further behind its primary than this is left out; 0 checks no lag. */
      readonly replicaMaxLagSeconds: number;
      readonly migrationsRun: boolean;
      /** How long readiness reuses a schema check before it compares the schema again. */
      readonly schemaCheckIntervalMs: number;
    };

export interface AppConfig {
  readonly port: number;
  /** Route prefix without slashes; empty serves the API at the root. */
  readonly apiPrefix: string;
  /** IANA zone that dates without an offset are read in and every date is written in. */
  readonly timeZone: string;
  readonly xmlNamespace: string;
  readonly bodyLimitBytes: number;
  /** Longest record an import reads, in characters of its file: memory is a multiple of it. */
  readonly importMaxRecordSize: number;
  readonly database: DatabaseConfig;
  readonly logLevel: LogLevel;
  /** Human-readable log lines instead of JSON: for a developer's terminal. */
  readonly prettyLogs: boolean;
  /** Query parameters whose values the log and the traces redact, besides the built-in credentials. */
  readonly logRedactQueryParameters: readonly string[];
  /** Express's `trust proxy`: which hops may set X-Forwarded-For / -Proto. */
  readonly trustProxy: boolean | number | string;
  /** Origins allowed by CORS; empty turns CORS off. */
  readonly corsOrigins: readonly string[];
  /** After SIGTERM, how long readiness answers 503 while requests are still served: the gateway's notice. */
  readonly shutdownDrainMs: number;
  /** After the drain, how long requests in flight may take to finish before the process exits anyway. */
  readonly shutdownTimeoutMs: number;
  readonly connections: ConnectionLimits;
  readonly auth: AuthConfig;
  /** The OpenAPI UI and document: open, behind the API's authentication, or not served. */
  readonly swagger: 'public' | 'protected' | 'off';
  /**
   * Where clients reach the service, as its gateway publishes it: an http(s) URL or a path, without a
   * trailing `/`. The OpenAPI document's server; empty for the root of the host it is loaded from.
   */
  readonly publicBaseUrl: string;
  /**
   * The Prometheus metrics at /metrics: open, behind the API's authentication, open on the health port
   * alone, or not served.
   */
  readonly metrics: 'public' | 'protected' | 'health-port' | 'off';
  /** The source commit this build is of, for the build-info metric. */
  readonly commit: string;
  /** Requests per caller (or client address) and window; `undefined` when rate limiting is off. */
  readonly rateLimit?: RateLimitConfig;
  /** Longest a request waits on the database before it is answered 503. */
  readonly databaseTimeoutMs: number;
  readonly events: EventsConfig;
  readonly webhooks: WebhooksConfig;
}

/** Webhooks: the committed events POSTed to the subscribers' HTTPS endpoints, signed. */
export interface WebhooksConfig {
  /** Whether the webhook routes are served and deliveries run (WEBHOOKS). */
  readonly on: boolean;
  /** Whether a subscription may name an http:// URL; https:// only otherwise. */
  readonly allowHttp: boolean;
  /** Whether a URL may name (or resolve to) a loopback, private or link-local address. */
  readonly allowPrivateNetworks: boolean;
  /** How long one delivery may take, connection to answer, before it counts as a time-out. */
  readonly timeoutMs: number;
  /** How long a subscription may fail without a break before it is disabled. */
  readonly disableAfterMs: number;
  /** How long a rotated-out secret keeps signing beside the new one. */
  readonly secretGraceMs: number;
  /** The unit of the retry schedule: 1000 gives 5 s, 5 min, 30 min… after the first retry. */
  readonly retryBaseMs: number;
  /** The most subscriptions one owner (an API key, a token's subject) may have. */
  readonly maxPerOwner: number;
  /** The most subscriptions the service holds, whoever owns them. */
  readonly maxSubscriptions: number;
  /** The most subscriptions an instance delivers to at once. */
  readonly concurrency: number;
  /** The most subscriptions the backlog gauges name: those furthest behind. */
  readonly metricsSubscriptions: number;
}

/** Integration events: the outbox, and the broker its relay publishes to. */
export interface EventsConfig {
  /** The RabbitMQ broker (amqp:// or amqps://); `undefined` publishes nothing to a broker. */
  readonly url?: string;
  /** The durable topic exchange the relay declares and publishes to. */
  readonly exchange: string;
  /** The CloudEvents `source` of every event: this service, as its consumers name it. */
  readonly source: string;
  /**
   * The absolute URL at which consumers read the AsyncAPI document: each event's `dataschema` is its
   * data schema there, by JSON Pointer.
   */
  readonly schemaUrl: string;
  /** How long an event stays in the outbox once every consumer has it. */
  readonly retentionMs: number;
  /** How often the outbox is looked at for events committed by other instances (or commands). */
  readonly pollMs: number;
  /**
   * The HTTP feed of the committed events (GET /api/Events): on, the outbox keeps every event for
   * its readers, whether or not a broker or a handler takes them.
   */
  readonly feed: boolean;
  /** The most feed readers waiting (a long poll) on an instance, and per caller. */
  readonly feedMaxWaiting: number;
  readonly feedMaxWaitingPerCaller: number;
  /**
   * The least time between two wake-ups of the feed's waiting readers, and more for each reader
   * waiting: the commits after one are gathered into the next.
   */
  readonly feedWakeMs: number;
  readonly feedWakeMsPerReader: number;
}

/** What one client connection may hold of the server, so that slow clients cannot starve the others. */
export interface ConnectionLimits {
  /** The whole request head must arrive within this. */
  readonly headersTimeoutMs: number;
  /** The whole request, head and body, must arrive within this. */
  readonly requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  readonly keepAliveTimeoutMs: number;
  /**
   * Open connections at most: past it an idle one is closed to make room, or the new one refused when
   * none is idle. Requests in progress (other than the probes) take at most nine tenths of them.
   */
  readonly maxConnections: number;
  /** Open connections from one client address at most; more from it are closed at once. 0: no cap. */
  readonly maxConnectionsPerClient: number;
  /** A second port serving only the health probes, outside both caps; `undefined` for none. */
  readonly healthPort?: number;
  /** A body must average at least this, once `bodyRateGraceMs` has passed; 0 sets no minimum. */
  readonly minBodyBytesPerSecond: number;
  readonly bodyRateGraceMs: number;
  /**
   * After an answer sent before its body was read that keeps the connection (415, a 400 on the
   * headers), a rest up to this is read and discarded so that the connection carries the next
   * request; a longer one closes the connection.
   */
  readonly drainLimitBytes: number;
}

export interface RateLimitConfig {
  /** Requests per caller (per client address when anonymous) and window; 0 sets no such limit. */
  readonly limit: number;
  /**
   * Failed authentications per client address and window; past it, the address's requests are
   * refused before their credentials are checked, so keys cannot be guessed at speed. 0: no limit.
   */
  readonly authFailureLimit: number;
  readonly windowSeconds: number;
  /** Where every instance counts, so that N instances still allow the limit once; else in memory. */
  readonly redisUrl?: string;
  /** Prepended to every Redis key: instances of one service share it, other services must not. */
  readonly keyPrefix: string;
}

export interface ApiKey {
  /** The caller's identity: recorded in the agent history and the request log. */
  readonly name: string;
  /** SHA-256 of the key: configuration never holds a key itself. */
  readonly sha256: Buffer;
  /** What the key may call; `undefined` for a key listed without scopes, which may call anything. */
  readonly scopes?: readonly string[];
}

export type AuthConfig =
  | { readonly mode: 'none' }
  | { readonly mode: 'apikey'; readonly keys: readonly ApiKey[] }
  | {
      readonly mode: 'jwt';
      /** Where the issuer publishes its keys; or else a static public key. */
      readonly jwksUrl?: string;
      readonly publicKey?: string;
      readonly algorithms: readonly string[];
      readonly issuer: string;
      readonly audience: string;
      readonly clockSkewSeconds: number;
      /** The longest a token may live (`exp` - `iat`): a leaked long-lived token stays usable long. */
      readonly maxLifetimeSeconds: number;
      /** The scopes each app role of a token's `roles` claim grants, besides its `scope` and `scp`. */
      readonly roleScopes: ReadonlyMap<string, readonly string[]>;
      /** The issuer's token endpoint, for the OpenAPI document's OAuth 2.0 flow; optional. */
      readonly tokenUrl?: string;
    };

/**
 * Failed authentications a client address may make per window when authentication is on: far more
 * than a person mistyping or a client with a stale key makes, far fewer than guessing needs.
 */
export const DEFAULT_AUTH_FAILURE_LIMIT = 20;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const SQLITE_MEMORY = ':memory:';
export const DEFAULT_XML_NAMESPACE = 'http://schemas.datacontract.org/2004/07/PropertySales.Models';
export const DEFAULT_SQLITE_PATH = 'data/property-sales.sqlite';
/** The CloudEvents `source` of the service's events unless EVENTS_SOURCE names another. */
export const DEFAULT_EVENTS_SOURCE = 'urn:property-sales-service';

export class ConfigurationError extends Error {
  /**
   * @param problems One sentence per bad variable, naming it first.
   * @param variables The variables the problems name, in order, each once.
   */
  constructor(
    readonly problems: readonly string[],
    readonly variables: readonly string[],
  ) {
    super(`Invalid configuration: ${problems.join('; ')}`);
  }
}

type Environment = Record<string, string | undefined>;

/** Reads variables, collecting every problem so one start-up names all the bad ones. */
class EnvironmentReader {
  readonly problems: string[] = [];
  readonly variables = new Set<string>();

  constructor(private readonly env: Environment) {}

  text(name: string, fallback: string): string {
    return this.env[name] ?? fallback;
  }

  integer(name: string, fallback: number, min: number, max: number): number {
    const raw = this.env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!/^\d+$/.test(raw.trim()) || value < min || value > max) {
      this.report(name, `${name} must be a whole number from ${min} to ${max} (got '${raw}')`);
      return fallback;
    }
    return value;
  }

  flag(name: string, fallback: boolean): boolean {
    const raw = this.env[name];
    if (raw === undefined || raw === '') return fallback;
    const text = raw.trim().toLowerCase();
    if (text === 'true' || text === '1') return true;
    if (text === 'false' || text === '0') return false;
    this.report(name, `${name} must be true or false (got '${raw}')`);
    return fallback;
  }

  size(name: string, fallback: string, minimum = 1): number {
    const raw = this.env[name] ?? fallback;
    const value = bytes.parse(raw);
    if (value === null || !Number.isFinite(value) || value < minimum) {
      this.report(name, `${name} must be a size such as 1mb or 512kb (got '${raw}')`);
      return bytes.parse(fallback) ?? 0;
    }
    return value;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const raw = this.env[name]?.trim().toLowerCase();
    if (raw === undefined || raw === '') return fallback;
    if ((allowed as readonly string[]).includes(raw)) return raw as T;
    this.report(name, `${name} must be one of ${allowed.join(', ')} (got '${this.env[name]}')`);
    return fallback;
  }

  private report(name: string, problem: string): void {
    this.problems.push(problem);
    this.variables.add(name);
  }

  /** Records a problem naming the variable; a secret's value is never written out. */
  check(name: string, valid: boolean, expectation: string, { secret = false } = {}): void {
    if (valid) return;
    this.report(
      name,
      secret ? `${name} ${expectation}` : `${name} ${expectation} (got '${this.env[name]}')`,
    );
  }
}

/** A MySQL or MariaDB URL that names a database: mysql://user:password@host:3306/database. */
function isMysqlUrl(url: string): boolean {
  try {
    const parsed = new URL(url);
    return (
      (parsed.protocol === 'mysql:' || parsed.protocol === 'mariadb:') && parsed.pathname.length > 1
    );
  } catch {
    return false;
  }
}

/**
 * The nodes a MySQL URL names, each as a URL of its own: `mysql://user:pass@host1:3306,host2:3306/db`
 * names two, as a Galera cluster's clients write it (WHATWG URLs take one host).
 */
function nodeUrlsOf(url: string): string[] {
  const parts = /^([a-z]+:\/\/(?:[^@/]*@)?)([^/?#]*)/i.exec(url);
  if (!parts) return [url];
  const [whole, head, hosts] = parts;
  const tail = url.slice(whole.length);
  return hosts.split(',').map((host) => `${head}${host.trim()}${tail}`);
}

/** mysql2 reads a MariaDB URL under its own scheme. */
const trimSlashes = trimmerOf('/');

const asMysqlUrl = (url: string) => url.replace(/^mariadb:/, 'mysql:');

function readReadUrls(reader: EnvironmentReader, env: Environment, sqlite: boolean): string[] {
  const urls = (env.DATABASE_READ_URLS ?? '')
    .split(',')
    .map((url) => url.trim())
    .filter(Boolean);
  // The URLs carry passwords: a problem names the entries by position, never writes them out.
  if (sqlite) {
    reader.check(
      'DATABASE_READ_URLS',
      urls.length === 0,
      'must be empty when DATABASE_URL is SQLite: read replicas need a MySQL or MariaDB primary',
      { secret: true },
    );
    return [];
  }
  const bad = urls.flatMap((url, index) => (isMysqlUrl(url) ? [] : [index + 1]));
  const which =
    bad.length === 1
      ? `entry ${bad[0]} of ${urls.length} is not`
      : `entries ${bad.join(', ')} of ${urls.length} are not`;
  reader.check(
    'DATABASE_READ_URLS',
    bad.length === 0,
    `must list mysql://user:password@host:3306/database URLs (or mariadb://), comma-separated; ${which}`,
    { secret: true },
  );
  return urls.map(asMysqlUrl);
}

function readDatabase(reader: EnvironmentReader, env: Environment): DatabaseConfig {
  const url = env.DATABASE_URL?.trim() || `sqlite:${DEFAULT_SQLITE_PATH}`;
  const demoData = reader.flag('DEMO_DATA', true);
  const migrationsRun = reader.flag('MIGRATIONS_RUN', false);
  const replicaRetryMs = reader.integer('DATABASE_REPLICA_RETRY_MS', 5000, 100, 600000);
  const replicaFallback = reader.oneOf('DATABASE_REPLICA_FALLBACK', ['primary', 'none'], 'primary');
  const replicaMaxLagSeconds = reader.integer('DATABASE_REPLICA_MAX_LAG_SECONDS', 5, 0, 86400);
  if (url.startsWith('sqlite:')) {
    readReadUrls(reader, env, true);
    const path = url.slice('sqlite:'.length);
    reader.check('DATABASE_URL', path !== '', 'must name a file after sqlite:, or :memory:');
    const resolved = path === SQLITE_MEMORY || isAbsolute(path) ? path : resolve(path);
    return { kind: 'sqlite', path: resolved, demoData };
  }
  const nodes = nodeUrlsOf(url);
  reader.check(
    'DATABASE_URL',
    nodes.every(isMysqlUrl),
    'must be mysql://user:password@host:3306/database (or mariadb://; a cluster as host1:3306,host2:3306) or sqlite:<file>',
  );
  const readUrls = readReadUrls(reader, env, false);
  reader.check(
    'DATABASE_READ_URLS',
    nodes.length === 1 || readUrls.length === 0,
    'must be empty when DATABASE_URL names several nodes: each of them serves reads too',
    { secret: true },
  );
  return {
    kind: 'mysql',
    url: asMysqlUrl(nodes[0]),
    nodes: nodes.map(asMysqlUrl),
    nodeCheckMs: reader.integer('DATABASE_NODE_CHECK_MS', 1000, 100, 600000),
    readUrls,
    replicaRetryMs,
    replicaFallback,
    replicaMaxLagSeconds,
    migrationsRun,
    schemaCheckIntervalMs: reader.integer('SCHEMA_CHECK_INTERVAL_MS', 30000, 0, 3600000),
  };
}

/** `true`/`false`, a hop count, or addresses and subnets (`loopback, 10.0.0.0/8`), as Express takes them. */
function readTrustProxy(reader: EnvironmentReader, env: Environment): boolean | number | string {
  const raw = env.TRUST_PROXY?.trim() ?? '';
  if (raw === '' || raw.toLowerCase() === 'false') return false;
  if (raw.toLowerCase() === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  reader.check(
    'TRUST_PROXY',
    /^[\w.:/, -]+$/.test(raw),
    'must be true, false, a hop count, or addresses and subnets',
  );
  return raw;
}

/**
 * PUBLIC_BASE_URL: an http(s) URL or a path from the root, with no query, fragment or credentials;
 * a trailing `/` is dropped, so that a client joins it to `/api/…` with no doubled slash.
 */
function readPublicBaseUrl(reader: EnvironmentReader): string {
  const given = reader.text('PUBLIC_BASE_URL', '').trim();
  const url = given.endsWith('/') ? given.slice(0, -1) : given;
  const parsed = URL.parse(url, 'http://host');
  reader.check(
    'PUBLIC_BASE_URL',
    url === '' ||
      (parsed !== null &&
        !url.endsWith('/') &&
        /^https?:$/.test(parsed.protocol) &&
        !parsed.search &&
        !parsed.hash &&
        !parsed.username &&
        !parsed.password &&
        (/^https?:\/\//i.test(url) || (url.startsWith('/') && !url.startsWith('//')))),
    'must be an http:// or https:// URL, or a path from /, without a query or fragment',
  );
  return url;
}

function readOrigins(reader: EnvironmentReader, env: Environment): string[] {
  const origins = (env.CORS_ORIGINS ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter(Boolean);
  const valid = origins.every(
    (origin) => URL.canParse(origin) && new URL(origin).origin === origin,
  );
  reader.check(
    'CORS_ORIGINS',
    valid,
    'must be a comma-separated list of origins such as https://app.example.com',
  );
  return origins;
}

/** Scopes joined by `+` (a `+` needs no escaping in an environment file, unlike a space). */
const SCOPE_LIST = '[a-z][a-z0-9:.-]*(?:\\+[a-z][a-z0-9:.-]*)*';
const API_KEY_ENTRY = new RegExp(
  `^([\\w.@-]{1,64})=sha256:([0-9a-f]{64})(?::(${SCOPE_LIST}))?$`,
  'i',
);
const ROLE_ENTRY = new RegExp(`^([\\w.:/-]{1,128})=(${SCOPE_LIST})$`);

/** Comma-separated entries, blanks dropped. */
const entriesOf = (value = '') =>
  value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);

function readApiKeys(reader: EnvironmentReader, env: Environment): ApiKey[] {
  const entries = entriesOf(env.AUTH_API_KEYS);
  const keys = entries.map((entry) => API_KEY_ENTRY.exec(entry)).filter((match) => match !== null);
  reader.check(
    'AUTH_API_KEYS',
    entries.length > 0 && keys.length === entries.length,
    'must list name=sha256:<64 hex digits>[:scope+scope…] entries, comma-separated, when AUTH_MODE is apikey',
    // An operator may have pasted a key itself: it must not reach the logs.
    { secret: true },
  );
  return keys.map(([, name, hex, scopes]) => ({
    name,
    sha256: Buffer.from(hex, 'hex'),
    scopes: scopes?.split('+'),
  }));
}

/** AUTH_JWT_ROLE_SCOPES: `role=scope+scope,…`, the scopes each app role grants. */
function readRoleScopes(reader: EnvironmentReader, env: Environment): Map<string, string[]> {
  const entries = entriesOf(env.AUTH_JWT_ROLE_SCOPES);
  const roles = entries.map((entry) => ROLE_ENTRY.exec(entry)).filter((match) => match !== null);
  reader.check(
    'AUTH_JWT_ROLE_SCOPES',
    roles.length === entries.length && new Set(roles.map(([, role]) => role)).size === roles.length,
    'must list role=scope+scope… entries, comma-separated, each role once',
  );
  return new Map(roles.map(([, role, scopes]) => [role, scopes.split('+')]));
}

/**
 * LOG_REDACT_QUERY_PARAMETERS: names of query parameters, comma-separated. The tracing SDK, which
 * starts before the configuration is read, reads the variable itself (src/tracing/sdk.ts); a bad one
 * stops the service here before any request is served.
 */
function readRedactedParameters(reader: EnvironmentReader, env: Environment): string[] {
  const names = entriesOf(env.LOG_REDACT_QUERY_PARAMETERS);
  reader.check(
    'LOG_REDACT_QUERY_PARAMETERS',
    names.every((name) => /^[\w.~-]{1,128}$/.test(name)),
    'must list query parameter names (letters, digits, - . _ ~; up to 128 each), comma-separated',
  );
  return names;
}

/** A PEM public key as the verifier imports it: the SPKI label first, then a body that parses. */
function isPemPublicKey(pem: string): boolean {
  if (!pem.startsWith('-----BEGIN PUBLIC KEY-----')) return false;
  try {
    createPublicKey({ key: pem, format: 'pem' });
    return true;
  } catch {
    return false;
  }
}

function readJwt(reader: EnvironmentReader, env: Environment): AuthConfig {
  const jwksUrl = env.AUTH_JWKS_URL?.trim() || undefined;
  // A PEM may come with its line breaks written as \n, as environment files often carry it.
  const publicKey = env.AUTH_JWT_PUBLIC_KEY?.trim().replace(/\\n/g, '\n') || undefined;
  reader.check(
    'AUTH_JWKS_URL',
    (jwksUrl === undefined) !== (publicKey === undefined) &&
      (jwksUrl === undefined || URL.canParse(jwksUrl)),
    'or AUTH_JWT_PUBLIC_KEY (one of them) must be set when AUTH_MODE is jwt',
  );
  reader.check(
    'AUTH_JWT_PUBLIC_KEY',
    publicKey === undefined || isPemPublicKey(publicKey),
    'must be a readable PEM public key (-----BEGIN PUBLIC KEY-----)',
    // A key runs over many lines: naming the variable keeps the message to one.
    { secret: true },
  );
  const tokenUrl = env.AUTH_JWT_TOKEN_URL?.trim() || undefined;
  reader.check(
    'AUTH_JWT_TOKEN_URL',
    tokenUrl === undefined || /^https?:$/.test(URL.parse(tokenUrl)?.protocol ?? ''),
    "must be the http(s) URL of the identity provider's token endpoint",
  );
  const issuer = env.AUTH_JWT_ISSUER?.trim() ?? '';
  const audience = env.AUTH_JWT_AUDIENCE?.trim() ?? '';
  reader.check('AUTH_JWT_ISSUER', issuer !== '', 'must be set when AUTH_MODE is jwt');
  reader.check('AUTH_JWT_AUDIENCE', audience !== '', 'must be set when AUTH_MODE is jwt');
  const algorithms = (env.AUTH_JWT_ALGORITHMS ?? 'RS256').split(',').map((name) => name.trim());
  reader.check(
    'AUTH_JWT_ALGORITHMS',
    algorithms.every((name) => /^(RS|PS|ES)(256|384|512)$|^EdDSA$/.test(name)),
    'must list asymmetric JWS algorithms such as RS256, ES256 or EdDSA',
  );
  return {
    mode: 'jwt',
    jwksUrl,
    publicKey,
    algorithms,
    issuer,
    audience,
    clockSkewSeconds: reader.integer('AUTH_JWT_CLOCK_SKEW_SECONDS', 30, 0, 300),
    // A day admits the identity providers' usual access tokens (an hour, up to a day).
    maxLifetimeSeconds: reader.integer('AUTH_JWT_MAX_LIFETIME_SECONDS', 86400, 60, 604800),
    roleScopes: readRoleScopes(reader, env),
    tokenUrl,
  };
}

function readAuth(
  reader: EnvironmentReader,
  env: Environment,
  database: DatabaseConfig,
  serving: boolean,
): AuthConfig {
  const explicit = env.AUTH_MODE?.trim();
  // Only the embedded database may serve without authentication by default.
  reader.check(
    'AUTH_MODE',
    Boolean(explicit) || database.kind === 'sqlite' || !serving,
    'must be set explicitly (none, apikey or jwt) when DATABASE_URL is MySQL',
  );
  const mode = reader.oneOf('AUTH_MODE', ['none', 'apikey', 'jwt'], 'none');
  if (mode === 'apikey') return { mode, keys: readApiKeys(reader, env) };
  if (mode === 'jwt') return readJwt(reader, env);
  return { mode };
}

/** METRICS, which may name the health port only when there is one. */
function readMetrics(
  reader: EnvironmentReader,
  { healthPort }: ConnectionLimits,
): AppConfig['metrics'] {
  const metrics = reader.oneOf('METRICS', ['public', 'protected', 'health-port', 'off'], 'public');
  reader.check(
    'METRICS',
    metrics !== 'health-port' || healthPort !== undefined,
    'may be health-port only with HEALTH_PORT set',
  );
  return metrics;
}

function readConnectionLimits(
  reader: EnvironmentReader,
  port: number,
  trustProxy: AppConfig['trustProxy'],
): ConnectionLimits {
  const headersTimeoutMs = reader.integer('HTTP_HEADERS_TIMEOUT_MS', 10000, 100, 600000);
  const requestTimeoutMs = reader.integer('HTTP_REQUEST_TIMEOUT_MS', 30000, 100, 3600000);
  reader.check(
    'HTTP_REQUEST_TIMEOUT_MS',
    requestTimeoutMs >= headersTimeoutMs,
    'must be at least HTTP_HEADERS_TIMEOUT_MS: the head is part of the request',
  );
  const healthPort = reader.integer('HEALTH_PORT', 0, 1, 65535) || undefined;
  reader.check('HEALTH_PORT', healthPort !== port, 'must differ from PORT');
  return {
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: reader.integer('HTTP_KEEP_ALIVE_TIMEOUT_MS', 65000, 100, 3600000),
    // A tenth of them, at least one, is kept from the requests in progress (reservedConnections).
    maxConnections: reader.integer('HTTP_MAX_CONNECTIONS', 1000, 2, 1_000_000),
    // Behind a gateway every connection comes from the gateway: no cap by default. Else a quarter of
    // the default HTTP_MAX_CONNECTIONS, far above a browser's 6 or an HTTP client's pool.
    maxConnectionsPerClient: reader.integer(
      'HTTP_MAX_CONNECTIONS_PER_CLIENT',
      trustProxy === false ? 256 : 0,
      0,
      1_000_000,
    ),
    healthPort,
    minBodyBytesPerSecond: reader.integer('BODY_MIN_BYTES_PER_SECOND', 240, 0, 1_000_000_000),
    bodyRateGraceMs: reader.integer('BODY_RATE_GRACE_MS', 5000, 0, 600000),
    drainLimitBytes: reader.size('BODY_DRAIN_LIMIT', '4mb', 0),
  };
}

function readRateLimit(
  reader: EnvironmentReader,
  env: Environment,
  auth: AuthConfig,
): AppConfig['rateLimit'] {
  const limit = reader.integer('RATE_LIMIT', 0, 0, 1_000_000);
  const authFailureLimit = reader.integer(
    'AUTH_FAILURE_LIMIT',
    auth.mode === 'none' ? 0 : DEFAULT_AUTH_FAILURE_LIMIT,
    0,
    1_000_000,
  );
  const windowSeconds = reader.integer('RATE_LIMIT_WINDOW_SECONDS', 60, 1, 86_400);
  const redisUrl = env.REDIS_URL?.trim() || undefined;
  reader.check(
    'REDIS_URL',
    redisUrl === undefined ||
      /^rediss?:$/.test(URL.canParse(redisUrl) ? new URL(redisUrl).protocol : ''),
    'must be redis://[user:password@]host:6379[/database] or rediss://… for TLS',
    // It may carry a password.
    { secret: true },
  );
  const keyPrefix = reader.text('RATE_LIMIT_KEY_PREFIX', 'property-sales:rate-limit:');
  reader.check(
    'RATE_LIMIT_KEY_PREFIX',
    /^[\w.:-]{1,100}$/.test(keyPrefix),
    'must be 1 to 100 letters, digits, _ . : or -',
  );
  return limit > 0 || authFailureLimit > 0
    ? { limit, authFailureLimit, windowSeconds, redisUrl, keyPrefix }
    : undefined;
}

function readEvents(
  reader: EnvironmentReader,
  env: Environment,
  port: number,
  { maxConnections }: ConnectionLimits,
): EventsConfig {
  const url = env.EVENTS_URL?.trim() || undefined;
  reader.check(
    'EVENTS_URL',
    url === undefined || /^amqps?:$/.test(URL.canParse(url) ? new URL(url).protocol : ''),
    'must be amqp://user:password@host:5672/vhost or amqps://… for TLS',
    // It carries a password.
    { secret: true },
  );
  const exchange = reader.text('EVENTS_EXCHANGE', 'property-sales.events').trim();
  reader.check(
    'EVENTS_EXCHANGE',
    /^[\w.:-]{1,255}$/.test(exchange) && !exchange.startsWith('amq.'),
    'must be 1 to 255 letters, digits, _ . : or -, not starting with amq.',
  );
  const source = reader.text('EVENTS_SOURCE', DEFAULT_EVENTS_SOURCE).trim();
  reader.check(
    'EVENTS_SOURCE',
    source.length <= 255 && (URL.canParse(source) || /^\/[^\s?#]*$/.test(source)),
    'must be a URI reference: an absolute URI (urn:…, https://…) or a path (/…)',
  );
  const schemaUrl = reader
    .text('EVENTS_SCHEMA_URL', `http://localhost:${port}/asyncapi-json`)
    .trim();
  reader.check(
    'EVENTS_SCHEMA_URL',
    URL.canParse(schemaUrl) &&
      /^https?:$/.test(new URL(schemaUrl).protocol) &&
      !schemaUrl.includes('#'),
    "must be the http:// or https:// address of the AsyncAPI document, without a '#'",
  );
  const feed = reader.flag('EVENTS_FEED', false);
  // Each waiting reader holds a connection: the other half serve the other requests.
  const mostWaiting = Math.floor(maxConnections / 2);
  const feedMaxWaiting = reader.integer('EVENTS_FEED_MAX_WAITING', mostWaiting, 1, 100_000);
  reader.check(
    'EVENTS_FEED_MAX_WAITING',
    !feed || feedMaxWaiting <= mostWaiting,
    `must be at most half of HTTP_MAX_CONNECTIONS (${mostWaiting}): each waiting reader holds a connection`,
  );
  return {
    url,
    exchange,
    source,
    schemaUrl,
    retentionMs: reader.integer('EVENTS_RETENTION_MS', 86_400_000, 0, 31 * 86_400_000),
    pollMs: reader.integer('EVENTS_POLL_MS', 500, 10, 60_000),
    feed,
    feedMaxWaiting,
    feedMaxWaitingPerCaller: reader.integer('EVENTS_FEED_MAX_WAITING_PER_CALLER', 20, 1, 100_000),
    feedWakeMs: reader.integer('EVENTS_FEED_WAKE_MS', 250, 0, 10_000),
    feedWakeMsPerReader: reader.integer('EVENTS_FEED_WAKE_MS_PER_READER', 8, 0, 100),
  };
}

function readWebhooks(reader: EnvironmentReader): WebhooksConfig {
  return {
    on: reader.flag('WEBHOOKS', false),
    allowHttp: reader.flag('WEBHOOKS_ALLOW_HTTP', false),
    allowPrivateNetworks: reader.flag('WEBHOOKS_ALLOW_PRIVATE_NETWORKS', false),
    timeoutMs: reader.integer('WEBHOOKS_TIMEOUT_MS', 10_000, 100, 60_000),
    disableAfterMs: reader.integer('WEBHOOKS_DISABLE_AFTER_MS', 432_000_000, 1000, 31 * 86_400_000),
    secretGraceMs: reader.integer('WEBHOOKS_SECRET_GRACE_MS', 86_400_000, 0, 31 * 86_400_000),
    retryBaseMs: reader.integer('WEBHOOKS_RETRY_BASE_MS', 1000, 1, 60_000),
    maxPerOwner: reader.integer('WEBHOOKS_MAX_PER_OWNER', 25, 1, 10_000),
    maxSubscriptions: reader.integer('WEBHOOKS_MAX_SUBSCRIPTIONS', 10_000, 1, 100_000),
    concurrency: reader.integer('WEBHOOKS_CONCURRENCY', 64, 1, 1000),
    metricsSubscriptions: reader.integer('WEBHOOKS_METRICS_SUBSCRIPTIONS', 100, 1, 10_000),
  };
}

/**
 * Validates the environment once, at start-up; a bad value stops the service naming the variable.
 * Commands that serve nothing (migrations, import) pass `serving: false`: they need no AUTH_MODE.
 */
export function loadAppConfig(env: Environment = process.env, { serving = true } = {}): AppConfig {
  const reader = new EnvironmentReader(env);
  const apiPrefix = trimSlashes(reader.text('API_PREFIX', 'api').trim());
  reader.check(
    'API_PREFIX',
    /^[A-Za-z0-9._~\-/]*$/.test(apiPrefix),
    'may hold only letters, digits, - . _ ~ and /',
  );
  const timeZone = reader.text('APP_TIMEZONE', 'UTC').trim();
  reader.check(
    'APP_TIMEZONE',
    DateTime.local({ zone: timeZone }).isValid,
    'must be an IANA time zone such as UTC or Asia/Manila',
  );
  const xmlNamespace = reader.text('XML_NAMESPACE', DEFAULT_XML_NAMESPACE);
  reader.check('XML_NAMESPACE', URL.canParse(xmlNamespace), 'must be an absolute URI');
  const database = readDatabase(reader, env);
  const port = reader.integer('PORT', 3000, 1, 65535);
  const trustProxy = readTrustProxy(reader, env);
  const auth = readAuth(reader, env, database, serving);
  const connections = readConnectionLimits(reader, port, trustProxy);
  const config: AppConfig = {
    port,
    apiPrefix,
    timeZone,
    xmlNamespace,
    bodyLimitBytes: reader.size('BODY_LIMIT', '1mb'),
    importMaxRecordSize: reader.size('IMPORT_MAX_RECORD_SIZE', '1mb'),
    database,
    logLevel: reader.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    prettyLogs: reader.oneOf('LOG_FORMAT', ['json', 'pretty'], 'json') === 'pretty',
    logRedactQueryParameters: readRedactedParameters(reader, env),
    trustProxy,
    corsOrigins: readOrigins(reader, env),
    shutdownDrainMs: reader.integer('SHUTDOWN_DRAIN_MS', 5000, 0, 600000),
    shutdownTimeoutMs: reader.integer('SHUTDOWN_TIMEOUT_MS', 10000, 100, 600000),
    connections,
    auth,
    swagger: reader.oneOf('SWAGGER', ['public', 'protected', 'off'], 'public'),
    publicBaseUrl: readPublicBaseUrl(reader),
    metrics: readMetrics(reader, connections),
    commit: reader.text('SERVICE_COMMIT', 'unknown'),
    rateLimit: readRateLimit(reader, env, auth),
    databaseTimeoutMs: reader.integer('DATABASE_TIMEOUT_MS', 5000, 100, 120000),
    events: readEvents(reader, env, port, connections),
    webhooks: readWebhooks(reader),
  };
  if (reader.problems.length > 0) {
    throw new ConfigurationError(reader.problems, [...reader.variables]);
  }
  return config;
}

/** Injection token of the validated AppConfig. */
export const APP_CONFIG = Symbol('APP_CONFIG');
