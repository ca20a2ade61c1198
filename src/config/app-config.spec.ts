import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tracingRequested } from '../tracing/tracing';
import { ConfigurationError, DEFAULT_AUTH_FAILURE_LIMIT, loadAppConfig } from './app-config';
import { CONFIGURATION_VARIABLES, withConfigurationTable } from './configuration-variables';

/** The ConfigurationError a bad environment raises; fails the test when none is raised. */
/** AUTH_MODE is given unless a test names it: only its own variable should be at fault. */
function configurationErrorOf(env: Record<string, string | undefined>): ConfigurationError {
  try {
    loadAppConfig({ AUTH_MODE: 'none', ...env });
  } catch (error) {
    if (error instanceof ConfigurationError) return error;
    throw error;
  }
  throw new Error(`loadAppConfig accepted ${JSON.stringify(env)}`);
}

describe('loadAppConfig', () => {
  it('runs with no variables at all, on the defaults', () => {
    const config = loadAppConfig({});
    expect(config).toMatchObject({
      port: 3000,
      apiPrefix: 'api',
      timeZone: 'UTC',
      xmlNamespace: 'http://schemas.datacontract.org/2004/07/PropertySales.Models',
      bodyLimitBytes: 1024 * 1024,
      database: {
        kind: 'sqlite',
        path: resolve('data/property-sales.sqlite'),
        demoData: true,
      },
    });
  });

  it('treats an empty or blank variable as unset where a default exists', () => {
    const config = loadAppConfig({ PORT: '', DATABASE_URL: '   ', DEMO_DATA: '' });
    expect(config.port).toBe(3000);
    expect(config.database).toEqual({
      kind: 'sqlite',
      path: resolve('data/property-sales.sqlite'),
      demoData: true,
    });
  });

  it('reads each variable it is given', () => {
    const config = loadAppConfig({
      PORT: '8080',
      APP_TIMEZONE: 'Asia/Manila',
      XML_NAMESPACE: 'http://example.com/ns',
      BODY_LIMIT: '512kb',
      DEMO_DATA: 'false',
    });
    expect(config.port).toBe(8080);
    expect(config.timeZone).toBe('Asia/Manila');
    expect(config.xmlNamespace).toBe('http://example.com/ns');
    expect(config.bodyLimitBytes).toBe(512 * 1024);
    expect(config.database).toMatchObject({ kind: 'sqlite', demoData: false });
  });

  it.each([
    ['true', true],
    ['TRUE', true],
    ['1', true],
    ['false', false],
    ['False', false],
    ['0', false],
  ])('reads DEMO_DATA=%s as %s', (value, expected) => {
    expect(loadAppConfig({ DEMO_DATA: value }).database).toMatchObject({ demoData: expected });
  });

  describe('refuses a bad value, naming the variable and the value', () => {
    it.each([
      ['PORT', 'abc'],
      ['PORT', '70000'],
      ['PORT', '0'],
      ['PORT', '-1'],
      ['PORT', '80.5'],
      ['APP_TIMEZONE', 'Mars/Base'],
      ['DATABASE_URL', 'ftp://x'],
      ['DATABASE_URL', 'mysql://user@host:3306'],
      ['DATABASE_URL', 'postgres://user@host:5432/db'],
      ['DATABASE_URL', 'sqlite:'],
      ['DEMO_DATA', 'maybe'],
      ['MIGRATIONS_RUN', 'yes please'],
      ['BODY_LIMIT', 'lots'],
      ['BODY_LIMIT', '0'],
      ['XML_NAMESPACE', 'not a uri'],
      ['API_PREFIX', 'api v1'],
      ['LOG_REDACT_QUERY_PARAMETERS', 'partner pin'],
      ['LOG_REDACT_QUERY_PARAMETERS', 'pin,p=q'],
      ['LOG_REDACT_QUERY_PARAMETERS', 'x'.repeat(129)],
    ])('%s=%s', (name, value) => {
      const error = configurationErrorOf({ [name]: value });
      expect(error.problems).toHaveLength(1);
      expect(error.problems[0]).toContain(name);
      expect(error.problems[0]).toContain(`'${value}'`);
      expect(error.message).toContain(name);
    });
  });

  it('reports every bad variable at once', () => {
    const error = configurationErrorOf({
      PORT: 'abc',
      APP_TIMEZONE: 'Mars/Base',
      DATABASE_URL: 'ftp://x',
      DEMO_DATA: 'maybe',
      BODY_LIMIT: 'lots',
    });
    expect(error.problems).toHaveLength(5);
    for (const name of ['PORT', 'APP_TIMEZONE', 'DATABASE_URL', 'DEMO_DATA', 'BODY_LIMIT']) {
      expect(error.message).toContain(name);
    }
  });

  describe('DATABASE_URL', () => {
    it('takes mysql:// as a MySQL-family server, keeping the URL, without migrating at start by default', () => {
      const url = 'mysql://user:secret@db.example.com:3306/sales';
      expect(loadAppConfig({ DATABASE_URL: url }, { serving: false }).database).toEqual({
        kind: 'mysql',
        url,
        nodes: [url],
        nodeCheckMs: 1000,
        readUrls: [],
        replicaRetryMs: 5000,
        replicaFallback: 'primary',
        replicaMaxLagSeconds: 5,
        migrationsRun: false,
        schemaCheckIntervalMs: 30000,
      });
    });

    it('takes mariadb:// as the same family, handing mysql2 a mysql:// URL (the server says which it is)', () => {
      const database = loadAppConfig({
        DATABASE_URL: 'mariadb://user:secret@db.example.com:3306/sales',
        AUTH_MODE: 'none',
      }).database;
      expect(database).toEqual({
        kind: 'mysql',
        url: 'mysql://user:secret@db.example.com:3306/sales',
        nodes: ['mysql://user:secret@db.example.com:3306/sales'],
        nodeCheckMs: 1000,
        readUrls: [],
        replicaRetryMs: 5000,
        replicaFallback: 'primary',
        replicaMaxLagSeconds: 5,
        migrationsRun: false,
        schemaCheckIntervalMs: 30000,
      });
    });

    it('takes a cluster as several hosts, each a node URL of its own, in their order', () => {
      const database = loadAppConfig({
        DATABASE_URL: 'mariadb://user:p%40ss@db1:3306,db2:3307, db3/sales?ssl=true',
        DATABASE_NODE_CHECK_MS: '500',
        AUTH_MODE: 'none',
      }).database;
      expect(database).toMatchObject({
        url: 'mysql://user:p%40ss@db1:3306/sales?ssl=true',
        nodes: [
          'mysql://user:p%40ss@db1:3306/sales?ssl=true',
          'mysql://user:p%40ss@db2:3307/sales?ssl=true',
          'mysql://user:p%40ss@db3/sales?ssl=true',
        ],
        nodeCheckMs: 500,
      });
    });

    it('refuses read replicas beside several nodes, and a node that is no URL', () => {
      const problems = (env: Record<string, string>) =>
        configurationErrorOf({ AUTH_MODE: 'none', ...env }).variables;
      expect(
        problems({
          DATABASE_URL: 'mysql://u@db1:3306,db2:3306/sales',
          DATABASE_READ_URLS: 'mysql://u@replica:3306/sales',
        }),
      ).toEqual(['DATABASE_READ_URLS']);
      expect(problems({ DATABASE_URL: 'mysql://u@db1:3306,:x/sales' })).toEqual(['DATABASE_URL']);
    });

    it('migrates MySQL at start only with MIGRATIONS_RUN=true', () => {
      const database = loadAppConfig({
        DATABASE_URL: 'mysql://user@host:3306/sales',
        MIGRATIONS_RUN: 'true',
        AUTH_MODE: 'none',
      }).database;
      expect(database).toMatchObject({ kind: 'mysql', migrationsRun: true });
    });

    it('keeps sqlite::memory: in memory', () => {
      expect(loadAppConfig({ DATABASE_URL: 'sqlite::memory:' }).database).toEqual({
        kind: 'sqlite',
        path: ':memory:',
        demoData: true,
      });
    });

    it('names another SQLite file, relative to the working directory or absolute', () => {
      expect(loadAppConfig({ DATABASE_URL: 'sqlite:other/sales.db' }).database).toMatchObject({
        kind: 'sqlite',
        path: resolve('other/sales.db'),
      });
      expect(loadAppConfig({ DATABASE_URL: 'sqlite:/var/lib/sales.db' }).database).toMatchObject({
        kind: 'sqlite',
        path: '/var/lib/sales.db',
      });
    });
  });

  describe('DATABASE_READ_URLS and DATABASE_REPLICA_RETRY_MS', () => {
    const PRIMARY = 'mysql://app:secret@primary.example.com:3306/sales';
    const mysql = (env: Record<string, string>) => {
      const { database } = loadAppConfig({ DATABASE_URL: PRIMARY, ...env }, { serving: false });
      if (database.kind !== 'mysql') throw new Error(`Not MySQL: ${JSON.stringify(database)}`);
      return database;
    };

    it('has no replicas and a 5 s retry pause by default, unset or empty', () => {
      expect(mysql({})).toMatchObject({ readUrls: [], replicaRetryMs: 5000 });
      expect(mysql({ DATABASE_READ_URLS: '', DATABASE_REPLICA_RETRY_MS: '' })).toMatchObject({
        readUrls: [],
        replicaRetryMs: 5000,
      });
      expect(mysql({ DATABASE_READ_URLS: ' , ' })).toMatchObject({ readUrls: [] });
    });

    it('reads a comma-separated list, trimmed, handing mysql2 mysql:// URLs', () => {
      expect(
        mysql({
          DATABASE_READ_URLS:
            ' mysql://ro:pw@replica-1.example.com:3306/sales ,mariadb://ro:pw@replica-2.example.com/sales,',
          DATABASE_REPLICA_RETRY_MS: '30000',
        }),
      ).toMatchObject({
        url: PRIMARY,
        readUrls: [
          'mysql://ro:pw@replica-1.example.com:3306/sales',
          'mysql://ro:pw@replica-2.example.com/sales',
        ],
        replicaRetryMs: 30000,
      });
    });

    it("takes the primary's own URL as a replica", () => {
      expect(mysql({ DATABASE_READ_URLS: PRIMARY }).readUrls).toEqual([PRIMARY]);
    });

    it.each([
      ['ftp://replica.example.com/sales', 'entry 1 of 1 is not'],
      ['mysql://ro@replica.example.com:3306', 'entry 1 of 1 is not'],
      ['mysql://ro@replica.example.com:3306/', 'entry 1 of 1 is not'],
      ['postgres://ro@replica.example.com/sales', 'entry 1 of 1 is not'],
      ['sqlite:replica.db', 'entry 1 of 1 is not'],
      ['not a url', 'entry 1 of 1 is not'],
      ['mysql://ro:pw@a.example.com/sales, mysql://ro:pw@b.example.com', 'entry 2 of 2 is not'],
      ['mysql://ro:topsecret@a:3306, x, mysql://ro@c/sales', 'entries 1, 2 of 3 are not'],
    ])('refuses DATABASE_READ_URLS=%s, naming the variable and the entry', (value, which) => {
      const error = configurationErrorOf({ DATABASE_URL: PRIMARY, DATABASE_READ_URLS: value });
      expect(error.problems).toHaveLength(1);
      expect(error.problems[0]).toMatch(/^DATABASE_READ_URLS must list mysql:\/\//);
      expect(error.problems[0]).toContain(which);
      // A replica URL carries a password: it is never written out.
      expect(error.message).not.toContain(value);
      expect(error.message).not.toContain('topsecret');
    });

    it.each(['sqlite:data/sales.sqlite', 'sqlite::memory:', undefined])(
      'refuses replicas when DATABASE_URL is SQLite (%s)',
      (databaseUrl) => {
        const error = configurationErrorOf({
          DATABASE_URL: databaseUrl,
          DATABASE_READ_URLS: 'mysql://ro:topsecret@replica.example.com:3306/sales',
        });
        expect(error.problems).toEqual([
          'DATABASE_READ_URLS must be empty when DATABASE_URL is SQLite: read replicas need a MySQL or MariaDB primary',
        ]);
        expect(error.message).not.toContain('topsecret');
      },
    );

    it('lets SQLite run with DATABASE_READ_URLS empty', () => {
      expect(loadAppConfig({ DATABASE_READ_URLS: ' ' }).database).toMatchObject({
        kind: 'sqlite',
      });
    });

    it.each(['abc', '99', '600001', '-1', '1.5', '0'])(
      'refuses DATABASE_REPLICA_RETRY_MS=%s, naming the variable and the value',
      (value) => {
        const error = configurationErrorOf({
          DATABASE_URL: PRIMARY,
          DATABASE_REPLICA_RETRY_MS: value,
        });
        expect(error.problems).toEqual([
          `DATABASE_REPLICA_RETRY_MS must be a whole number from 100 to 600000 (got '${value}')`,
        ]);
      },
    );

    it('takes DATABASE_REPLICA_RETRY_MS at both ends of its range', () => {
      expect(mysql({ DATABASE_REPLICA_RETRY_MS: '100' }).replicaRetryMs).toBe(100);
      expect(mysql({ DATABASE_REPLICA_RETRY_MS: '600000' }).replicaRetryMs).toBe(600000);
    });

    it('reports bad replica settings along with every other bad variable', () => {
      const error = configurationErrorOf({
        DATABASE_URL: 'ftp://x',
        DATABASE_READ_URLS: 'ftp://y',
        DATABASE_REPLICA_RETRY_MS: '5',
      });
      expect(error.problems).toHaveLength(3);
      for (const name of ['DATABASE_URL', 'DATABASE_READ_URLS', 'DATABASE_REPLICA_RETRY_MS']) {
        expect(error.message).toContain(name);
      }
    });
  });

  describe('DATABASE_REPLICA_FALLBACK and DATABASE_REPLICA_MAX_LAG_SECONDS', () => {
    const PRIMARY = 'mysql://app:secret@primary.example.com:3306/sales';
    const REPLICA = 'mysql://ro:secret@replica.example.com:3306/sales';
    const mysql = (env: Record<string, string>) => {
      const { database } = loadAppConfig(
        { DATABASE_URL: PRIMARY, DATABASE_READ_URLS: REPLICA, ...env },
        { serving: false },
      );
      if (database.kind !== 'mysql') throw new Error(`Not MySQL: ${JSON.stringify(database)}`);
      return database;
    };

    it('falls back to the primary and leaves out a replica 5 s behind by default, unset or empty', () => {
      const defaults = { replicaFallback: 'primary', replicaMaxLagSeconds: 5 };
      expect(mysql({})).toMatchObject(defaults);
      expect(
        mysql({ DATABASE_REPLICA_FALLBACK: '', DATABASE_REPLICA_MAX_LAG_SECONDS: '' }),
      ).toMatchObject(defaults);
    });

    it.each([
      ['primary', 'primary'],
      ['none', 'none'],
      [' NONE ', 'none'],
      ['Primary', 'primary'],
    ])('takes DATABASE_REPLICA_FALLBACK=%s', (value, fallback) => {
      expect(mysql({ DATABASE_REPLICA_FALLBACK: value }).replicaFallback).toBe(fallback);
    });

    it.each(['replica', 'off', 'true', '503'])(
      'refuses DATABASE_REPLICA_FALLBACK=%s, naming the variable and the choices',
      (value) => {
        const error = configurationErrorOf({
          DATABASE_URL: PRIMARY,
          DATABASE_READ_URLS: REPLICA,
          DATABASE_REPLICA_FALLBACK: value,
        });
        expect(error.problems).toEqual([
          `DATABASE_REPLICA_FALLBACK must be one of primary, none (got '${value}')`,
        ]);
        expect(error.variables).toEqual(['DATABASE_REPLICA_FALLBACK']);
      },
    );

    it('takes DATABASE_REPLICA_MAX_LAG_SECONDS at both ends of its range; 0 checks no lag', () => {
      expect(mysql({ DATABASE_REPLICA_MAX_LAG_SECONDS: '0' }).replicaMaxLagSeconds).toBe(0);
      expect(mysql({ DATABASE_REPLICA_MAX_LAG_SECONDS: '1' }).replicaMaxLagSeconds).toBe(1);
      expect(mysql({ DATABASE_REPLICA_MAX_LAG_SECONDS: '86400' }).replicaMaxLagSeconds).toBe(86400);
    });

    it.each(['abc', '-1', '1.5', '86401', '5s'])(
      'refuses DATABASE_REPLICA_MAX_LAG_SECONDS=%s, naming the variable and the value',
      (value) => {
        const error = configurationErrorOf({
          DATABASE_URL: PRIMARY,
          DATABASE_READ_URLS: REPLICA,
          DATABASE_REPLICA_MAX_LAG_SECONDS: value,
        });
        expect(error.problems).toEqual([
          `DATABASE_REPLICA_MAX_LAG_SECONDS must be a whole number from 0 to 86400 (got '${value}')`,
        ]);
      },
    );

    it('checks both on SQLite too, as DATABASE_REPLICA_RETRY_MS, so that a typo is never silent', () => {
      expect(
        loadAppConfig({ DATABASE_REPLICA_FALLBACK: 'none', DATABASE_REPLICA_MAX_LAG_SECONDS: '0' })
          .database,
      ).toMatchObject({ kind: 'sqlite' });
      const error = configurationErrorOf({
        DATABASE_REPLICA_FALLBACK: 'nowhere',
        DATABASE_REPLICA_MAX_LAG_SECONDS: 'x',
      });
      expect(error.variables).toEqual([
        'DATABASE_REPLICA_FALLBACK',
        'DATABASE_REPLICA_MAX_LAG_SECONDS',
      ]);
    });
  });

  it('reads LOG_REDACT_QUERY_PARAMETERS as names, comma-separated, none by default', () => {
    expect(loadAppConfig({}).logRedactQueryParameters).toEqual([]);
    expect(
      loadAppConfig({ LOG_REDACT_QUERY_PARAMETERS: ' partner_pin, X-Signed.v2 ,,~otp ' })
        .logRedactQueryParameters,
    ).toEqual(['partner_pin', 'X-Signed.v2', '~otp']);
  });

  describe('API_PREFIX', () => {
    it.each([
      ['api', 'api'],
      ['/api', 'api'],
      ['api/', 'api'],
      ['/v1/sales/', 'v1/sales'],
      ['//v1/sales//', 'v1/sales'],
      [' /api ', 'api'],
      ['', ''],
      ['/', ''],
    ])('reads %j as %j', (value, expected) => {
      expect(loadAppConfig({ API_PREFIX: value }).apiPrefix).toBe(expected);
    });
  });

  describe('authentication, Swagger and rate limiting', () => {
    const KEY_HASH = 'a'.repeat(64);

    it('serves without authentication by default only on the embedded database', () => {
      expect(loadAppConfig({}).auth).toEqual({ mode: 'none' });
      expect(() => loadAppConfig({ DATABASE_URL: 'mysql://u@h:3306/d' })).toThrow(
        /AUTH_MODE must be set explicitly/,
      );
      expect(loadAppConfig({ DATABASE_URL: 'mysql://u@h:3306/d', AUTH_MODE: 'none' }).auth).toEqual(
        { mode: 'none' },
      );
      // Commands that serve nothing need no AUTH_MODE.
      expect(
        loadAppConfig({ DATABASE_URL: 'mysql://u@h:3306/d' }, { serving: false }).auth,
      ).toEqual({ mode: 'none' });
    });

    it('reads API keys as names and SHA-256 hashes, never as keys', () => {
      const config = loadAppConfig({
        AUTH_MODE: 'apikey',
        AUTH_API_KEYS: `gateway=sha256:${KEY_HASH}, reports=sha256:${'b'.repeat(64)}`,
      });
      expect(config.auth).toEqual({
        mode: 'apikey',
        keys: [
          { name: 'gateway', sha256: Buffer.from(KEY_HASH, 'hex') },
          { name: 'reports', sha256: Buffer.from('b'.repeat(64), 'hex') },
        ],
      });
      for (const keys of ['', 'gateway=plaintext-key', `gateway=sha256:${'a'.repeat(63)}`]) {
        expect(
          configurationErrorOf({ AUTH_MODE: 'apikey', AUTH_API_KEYS: keys }).message,
        ).toContain('AUTH_API_KEYS');
      }
    });

    it('reads the scopes of each API key after its hash, joined by +; a key without scopes has none listed', () => {
      const config = loadAppConfig({
        AUTH_MODE: 'apikey',
        AUTH_API_KEYS:
          `reporting=sha256:${KEY_HASH}:transactions:read+requirements:read,` +
          `gateway=sha256:${'b'.repeat(64)}`,
      });
      expect(config.auth).toEqual({
        mode: 'apikey',
        keys: [
          {
            name: 'reporting',
            sha256: Buffer.from(KEY_HASH, 'hex'),
            scopes: ['transactions:read', 'requirements:read'],
          },
          { name: 'gateway', sha256: Buffer.from('b'.repeat(64), 'hex'), scopes: undefined },
        ],
      });
      for (const scopes of [
        ':',
        ':transactions:read+',
        ':transactions read',
        ':+transactions:read',
      ]) {
        expect(
          configurationErrorOf({
            AUTH_MODE: 'apikey',
            AUTH_API_KEYS: `reporting=sha256:${KEY_HASH}${scopes}`,
          }).problems,
        ).toEqual([
          'AUTH_API_KEYS must list name=sha256:<64 hex digits>[:scope+scope…] entries, comma-separated, when AUTH_MODE is apikey',
        ]);
      }
    });

    it('maps JWT roles to scopes with AUTH_JWT_ROLE_SCOPES, each role once, and takes an http(s) AUTH_JWT_TOKEN_URL', () => {
      const jwt = {
        AUTH_MODE: 'jwt',
        AUTH_JWKS_URL: 'https://id.example.com/.well-known/jwks.json',
        AUTH_JWT_ISSUER: 'https://id.example.com/',
        AUTH_JWT_AUDIENCE: 'property-sales',
      };
      expect(loadAppConfig(jwt).auth).toMatchObject({ roleScopes: new Map(), tokenUrl: undefined });
      expect(
        loadAppConfig({
          ...jwt,
          AUTH_JWT_ROLE_SCOPES:
            'Reports.Reader=transactions:read+requirements:read, Agents.Editor=transactions:write',
          AUTH_JWT_TOKEN_URL: 'https://id.example.com/oauth2/token',
        }).auth,
      ).toMatchObject({
        roleScopes: new Map([
          ['Reports.Reader', ['transactions:read', 'requirements:read']],
          ['Agents.Editor', ['transactions:write']],
        ]),
        tokenUrl: 'https://id.example.com/oauth2/token',
      });
      expect(
        configurationErrorOf({
          ...jwt,
          AUTH_JWT_ROLE_SCOPES: 'Reader=transactions:read,Reader=requirements:read,Writer',
          AUTH_JWT_TOKEN_URL: 'ftp://id.example.com/token',
        }).problems.map((problem) => problem.split(' ')[0]),
      ).toEqual(['AUTH_JWT_TOKEN_URL', 'AUTH_JWT_ROLE_SCOPES']);
    });

    it('requires a key source, an issuer and an audience for JWTs, with a bounded clock skew and token lifetime', () => {
      const config = loadAppConfig({
        AUTH_MODE: 'jwt',
        AUTH_JWKS_URL: 'https://id.example.com/.well-known/jwks.json',
        AUTH_JWT_ISSUER: 'https://id.example.com/',
        AUTH_JWT_AUDIENCE: 'property-sales',
      });
      expect(config.auth).toMatchObject({
        mode: 'jwt',
        algorithms: ['RS256'],
        clockSkewSeconds: 30,
        maxLifetimeSeconds: 86400,
      });
      const error = configurationErrorOf({
        AUTH_MODE: 'jwt',
        AUTH_JWT_CLOCK_SKEW_SECONDS: '3600',
        AUTH_JWT_MAX_LIFETIME_SECONDS: '31536000',
      });
      for (const name of [
        'AUTH_JWKS_URL',
        'AUTH_JWT_ISSUER',
        'AUTH_JWT_AUDIENCE',
        'AUTH_JWT_CLOCK_SKEW_SECONDS',
        'AUTH_JWT_MAX_LIFETIME_SECONDS',
      ]) {
        expect(error.message).toContain(name);
      }
      expect(
        configurationErrorOf({ AUTH_MODE: 'jwt', AUTH_JWT_ALGORITHMS: 'HS256' }).message,
      ).toContain('AUTH_JWT_ALGORITHMS');
      expect(configurationErrorOf({ AUTH_MODE: 'magic' }).message).toContain('AUTH_MODE');
    });

    it('reads a PEM public key, and refuses in one line one that does not read as a public key', () => {
      const jwt = {
        AUTH_MODE: 'jwt',
        AUTH_JWT_ISSUER: 'https://id.example.com/',
        AUTH_JWT_AUDIENCE: 'property-sales',
      };
      const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const pem = keys.publicKey.export({ type: 'spki', format: 'pem' }).toString().trim();
      const oneLine = pem.replace(/\n/g, '\\n');
      expect(loadAppConfig({ ...jwt, AUTH_JWT_PUBLIC_KEY: oneLine }).auth).toMatchObject({
        publicKey: pem,
      });
      const [header, body, footer] = pem.split('\n');
      for (const malformed of [
        `${header}\nnot a key\n${footer}`,
        `${header}\n${body.slice(0, 20)}\n${footer}`,
        keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        `key: ${pem}`,
      ]) {
        expect(configurationErrorOf({ ...jwt, AUTH_JWT_PUBLIC_KEY: malformed }).problems).toEqual([
          'AUTH_JWT_PUBLIC_KEY must be a readable PEM public key (-----BEGIN PUBLIC KEY-----)',
        ]);
      }
    });

    it('reads SWAGGER, METRICS and RATE_LIMIT, rate limiting off by default', () => {
      expect(loadAppConfig({}).swagger).toBe('public');
      expect(loadAppConfig({ SWAGGER: 'off' }).swagger).toBe('off');
      expect(configurationErrorOf({ SWAGGER: 'hidden' }).message).toContain('SWAGGER');
      expect(loadAppConfig({}).metrics).toBe('public');
      expect(loadAppConfig({ METRICS: 'protected' }).metrics).toBe('protected');
      expect(configurationErrorOf({ METRICS: 'private' }).message).toContain('METRICS');
      expect(loadAppConfig({}).rateLimit).toBeUndefined();
      expect(
        loadAppConfig({ RATE_LIMIT: '100', RATE_LIMIT_WINDOW_SECONDS: '10' }).rateLimit,
      ).toEqual({
        limit: 100,
        authFailureLimit: 0,
        windowSeconds: 10,
        redisUrl: undefined,
        keyPrefix: 'property-sales:rate-limit:',
      });
      expect(configurationErrorOf({ RATE_LIMIT: 'lots' }).message).toContain('RATE_LIMIT');
    });

    it('reads PUBLIC_BASE_URL as an http(s) URL or a path, without its trailing slash; empty by default', () => {
      expect(loadAppConfig({}).publicBaseUrl).toBe('');
      for (const [given, read] of [
        ['https://api.example.com/property-sales/', 'https://api.example.com/property-sales'],
        ['http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
        ['/property-sales', '/property-sales'],
        ['/', ''],
      ])
        expect(loadAppConfig({ PUBLIC_BASE_URL: given }).publicBaseUrl).toBe(read);
      for (const refused of [
        'api.example.com',
        'ftp://api.example.com',
        '//api.example.com',
        'https://api.example.com/?a=1',
        'https://api.example.com/#top',
        'https://user:secret@api.example.com',
        'property-sales',
      ])
        expect(configurationErrorOf({ PUBLIC_BASE_URL: refused }).problems).toEqual([
          `PUBLIC_BASE_URL must be an http:// or https:// URL, or a path from /, without a query or fragment (got '${refused}')`,
        ]);
    });

    it('limits failed authentications by default once authentication is on, AUTH_FAILURE_LIMIT=0 aside', () => {
      const withKeys = { AUTH_MODE: 'apikey', AUTH_API_KEYS: `ops=sha256:${'a'.repeat(64)}` };
      expect(loadAppConfig(withKeys).rateLimit).toEqual(
        expect.objectContaining({ limit: 0, authFailureLimit: DEFAULT_AUTH_FAILURE_LIMIT }),
      );
      expect(loadAppConfig({ ...withKeys, AUTH_FAILURE_LIMIT: '5' }).rateLimit).toEqual(
        expect.objectContaining({ limit: 0, authFailureLimit: 5 }),
      );
      expect(loadAppConfig({ ...withKeys, AUTH_FAILURE_LIMIT: '0' }).rateLimit).toBeUndefined();
      expect(configurationErrorOf({ AUTH_FAILURE_LIMIT: '-1' }).message).toContain(
        'AUTH_FAILURE_LIMIT',
      );
    });

    it('reads REDIS_URL and RATE_LIMIT_KEY_PREFIX, never writing out the URL', () => {
      expect(
        loadAppConfig({
          RATE_LIMIT: '5',
          REDIS_URL: 'rediss://user:secret@redis.internal:6380/2',
          RATE_LIMIT_KEY_PREFIX: 'ps-prod:',
        }).rateLimit,
      ).toEqual(
        expect.objectContaining({
          redisUrl: 'rediss://user:secret@redis.internal:6380/2',
          keyPrefix: 'ps-prod:',
        }),
      );
      const badUrl = configurationErrorOf({ REDIS_URL: 'http://user:secret@redis:6379' }).message;
      expect(badUrl).toContain('REDIS_URL');
      expect(badUrl).not.toContain('secret');
      expect(configurationErrorOf({ RATE_LIMIT_KEY_PREFIX: 'a b' }).message).toContain(
        'RATE_LIMIT_KEY_PREFIX',
      );
    });
  });

  describe('integration events', () => {
    it('publishes to no broker by default, to the durable exchange property-sales.events', () => {
      expect(loadAppConfig({}).events).toEqual({
        url: undefined,
        exchange: 'property-sales.events',
        source: 'urn:property-sales-service',
        schemaUrl: 'http://localhost:3000/asyncapi-json',
        retentionMs: 86_400_000,
        pollMs: 500,
        feed: false,
        // Half of HTTP_MAX_CONNECTIONS.
        feedMaxWaiting: 500,
        feedMaxWaitingPerCaller: 20,
        feedWakeMs: 250,
        feedWakeMsPerReader: 8,
      });
      // The document as the service serves it on its own port.
      expect(loadAppConfig({ PORT: '8080' }).events.schemaUrl).toBe(
        'http://localhost:8080/asyncapi-json',
      );
    });

    it('reads EVENTS_*, never writing out the broker URL', () => {
      expect(
        loadAppConfig({
          EVENTS_URL: 'amqps://relay:secret@mq.internal:5671/sales',
          EVENTS_EXCHANGE: 'sales.events',
          EVENTS_SOURCE: 'https://sales.example.com/property-sales',
          EVENTS_SCHEMA_URL: ' https://api.example.com/property-sales/asyncapi-json ',
          EVENTS_RETENTION_MS: '3600000',
          EVENTS_POLL_MS: '100',
          EVENTS_FEED: 'true',
          EVENTS_FEED_MAX_WAITING: '500',
          EVENTS_FEED_MAX_WAITING_PER_CALLER: '5',
          EVENTS_FEED_WAKE_MS: '1000',
          EVENTS_FEED_WAKE_MS_PER_READER: '0',
        }).events,
      ).toEqual({
        url: 'amqps://relay:secret@mq.internal:5671/sales',
        exchange: 'sales.events',
        source: 'https://sales.example.com/property-sales',
        schemaUrl: 'https://api.example.com/property-sales/asyncapi-json',
        retentionMs: 3_600_000,
        pollMs: 100,
        feed: true,
        feedMaxWaiting: 500,
        feedMaxWaitingPerCaller: 5,
        feedWakeMs: 1000,
        feedWakeMsPerReader: 0,
      });
      const badUrl = configurationErrorOf({ EVENTS_URL: 'http://relay:secret@mq:5672' });
      expect(badUrl.variables).toEqual(['EVENTS_URL']);
      expect(badUrl.message).not.toContain('secret');
      for (const [name, value] of [
        ['EVENTS_EXCHANGE', 'amq.topic'],
        ['EVENTS_EXCHANGE', 'two words'],
        ['EVENTS_SOURCE', 'not a uri'],
        ['EVENTS_SCHEMA_URL', 'asyncapi-json'],
        ['EVENTS_SCHEMA_URL', 'urn:property-sales:asyncapi'],
        ['EVENTS_SCHEMA_URL', 'https://api.example.com/asyncapi-json#/components'],
        ['EVENTS_POLL_MS', '0'],
        ['EVENTS_FEED', 'yes'],
        ['EVENTS_FEED_WAKE_MS', '10001'],
        ['EVENTS_FEED_WAKE_MS_PER_READER', '101'],
      ])
        expect(configurationErrorOf({ [name]: value }).variables).toEqual([name]);
      expect(loadAppConfig({ EVENTS_SOURCE: '/property-sales' }).events.source).toBe(
        '/property-sales',
      );
    });

    it('lets feed readers wait on half of HTTP_MAX_CONNECTIONS at most, by default all of that half', () => {
      const feed = { EVENTS_FEED: 'true', HTTP_MAX_CONNECTIONS: '101' };
      expect(loadAppConfig(feed).events.feedMaxWaiting).toBe(50);
      expect(loadAppConfig({ ...feed, EVENTS_FEED_MAX_WAITING: '50' }).events.feedMaxWaiting).toBe(
        50,
      );
      const error = configurationErrorOf({ ...feed, EVENTS_FEED_MAX_WAITING: '51' });
      expect(error.variables).toEqual(['EVENTS_FEED_MAX_WAITING']);
      expect(error.problems).toEqual([
        expect.stringContaining('must be at most half of HTTP_MAX_CONNECTIONS (50)'),
      ]);
      // The feed off, nobody waits: the setting is left as it is.
      expect(
        loadAppConfig({ HTTP_MAX_CONNECTIONS: '101', EVENTS_FEED_MAX_WAITING: '2000' }).events
          .feedMaxWaiting,
      ).toBe(2000);
    });
  });

  describe('connection limits and shutdown', () => {
    it('bounds every client by default: timeouts, connection caps, a minimum body rate, a drain', () => {
      const config = loadAppConfig({});
      expect(config.connections).toEqual({
        headersTimeoutMs: 10000,
        requestTimeoutMs: 30000,
        keepAliveTimeoutMs: 65000,
        maxConnections: 1000,
        maxConnectionsPerClient: 256,
        minBodyBytesPerSecond: 240,
        bodyRateGraceMs: 5000,
        drainLimitBytes: 4 * 1024 * 1024,
      });
      expect(config.shutdownDrainMs).toBe(5000);
    });

    it('reads each of them, and 0 for no minimum body rate, no drain and no body drained', () => {
      const config = loadAppConfig({
        HTTP_HEADERS_TIMEOUT_MS: '500',
        HTTP_REQUEST_TIMEOUT_MS: '2000',
        HTTP_KEEP_ALIVE_TIMEOUT_MS: '75000',
        HTTP_MAX_CONNECTIONS: '50',
        HTTP_MAX_CONNECTIONS_PER_CLIENT: '8',
        HEALTH_PORT: '9000',
        BODY_MIN_BYTES_PER_SECOND: '0',
        BODY_RATE_GRACE_MS: '1000',
        BODY_DRAIN_LIMIT: '0',
        SHUTDOWN_DRAIN_MS: '0',
      });
      expect(config.connections).toEqual({
        headersTimeoutMs: 500,
        requestTimeoutMs: 2000,
        keepAliveTimeoutMs: 75000,
        maxConnections: 50,
        maxConnectionsPerClient: 8,
        healthPort: 9000,
        minBodyBytesPerSecond: 0,
        bodyRateGraceMs: 1000,
        drainLimitBytes: 0,
      });
      expect(config.shutdownDrainMs).toBe(0);
    });

    it('caps connections per client address by default only when no gateway stands in front (TRUST_PROXY)', () => {
      const perClient = (env: Record<string, string>) =>
        loadAppConfig(env).connections.maxConnectionsPerClient;
      expect(perClient({ TRUST_PROXY: 'loopback' })).toBe(0);
      expect(perClient({ TRUST_PROXY: '1' })).toBe(0);
      expect(perClient({ TRUST_PROXY: 'false' })).toBe(256);
      expect(perClient({ TRUST_PROXY: 'true', HTTP_MAX_CONNECTIONS_PER_CLIENT: '50' })).toBe(50);
      expect(perClient({ HTTP_MAX_CONNECTIONS_PER_CLIENT: '0' })).toBe(0);
    });

    it('refuses a health port that is the main port', () => {
      const error = configurationErrorOf({ PORT: '8080', HEALTH_PORT: '8080' });
      expect(error.problems).toEqual([
        expect.stringContaining('HEALTH_PORT must differ from PORT'),
      ]);
    });

    it.each([
      ['HTTP_HEADERS_TIMEOUT_MS', '0'],
      ['HTTP_REQUEST_TIMEOUT_MS', 'soon'],
      ['HTTP_KEEP_ALIVE_TIMEOUT_MS', '-1'],
      ['HTTP_MAX_CONNECTIONS', '1'],
      ['HTTP_MAX_CONNECTIONS_PER_CLIENT', '-1'],
      ['HEALTH_PORT', '0'],
      ['HEALTH_PORT', '65536'],
      ['BODY_MIN_BYTES_PER_SECOND', '1.5'],
      ['BODY_RATE_GRACE_MS', 'long'],
      ['SHUTDOWN_DRAIN_MS', '5s'],
    ])('refuses %s=%s', (name, value) => {
      const error = configurationErrorOf({ [name]: value });
      expect(error.problems).toEqual([expect.stringContaining(name)]);
    });

    it('refuses a request timeout shorter than the header timeout', () => {
      const error = configurationErrorOf({
        HTTP_HEADERS_TIMEOUT_MS: '20000',
        HTTP_REQUEST_TIMEOUT_MS: '10000',
      });
      expect(error.problems).toEqual([expect.stringContaining('HTTP_REQUEST_TIMEOUT_MS')]);
    });
  });
});

describe('the declared configuration variables', () => {
  type Environment = Record<string, string | undefined>;

  /** What the service makes of an environment: its configuration, or the problems it names. */
  function outcomeOf(env: Environment, serving = true): unknown {
    try {
      return { config: loadAppConfig(env, { serving }), tracing: tracingRequested(env) };
    } catch (error) {
      if (error instanceof ConfigurationError) return error.problems;
      throw error;
    }
  }

  /** The variable names read from an environment, whatever the reader does with them. */
  function namesReadFrom(env: Environment, serving = true): Set<string> {
    const read = new Set<string>();
    const recording = new Proxy(env, {
      get(target, name) {
        if (typeof name === 'string') read.add(name);
        return Reflect.get(target, name) as unknown;
      },
    });
    outcomeOf(recording, serving);
    return read;
  }

  // Each way the code reads its configuration: the service and the commands, on each database and
  // in each authentication mode, so that every branch reads what it reads.
  const mysql = 'mysql://user:password@127.0.0.1:3306/sales';
  const paths: Record<string, [Environment, boolean]> = {
    'the service on SQLite': [{}, true],
    'a command on SQLite': [{}, false],
    'the service on MySQL with API keys': [{ DATABASE_URL: mysql, AUTH_MODE: 'apikey' }, true],
    'the service on MySQL with JWTs': [{ DATABASE_URL: mysql, AUTH_MODE: 'jwt' }, true],
    'a command on MySQL': [{ DATABASE_URL: mysql }, false],
  };
  const read = new Set(
    Object.values(paths).flatMap(([env, serving]) => [...namesReadFrom(env, serving)]),
  );
  const declared = new Set(CONFIGURATION_VARIABLES.flatMap((variable) => variable.names));

  it('declares every variable the configuration reads', () => {
    expect([...read].filter((name) => !declared.has(name))).toEqual([]);
  });

  it('declares no variable that no configuration path reads', () => {
    expect([...declared].filter((name) => !read.has(name))).toEqual([]);
  });

  // A default written as one value (`5000`, or `86400000` (a day)) must be what the code takes.
  const plainDefaults = CONFIGURATION_VARIABLES.flatMap((variable) => {
    const value = /^`([^`]*)`(?: \([^)]*\))?$/.exec(variable.default)?.[1];
    return variable.names.length === 1 && value !== undefined
      ? [[variable.names[0], value] as const]
      : [];
  });

  it.each(plainDefaults)('declares the default the code takes for %s (%s)', (name, value) => {
    // On SQLite and on MySQL, since some variables are read on one of them only.
    const bases: Environment[] = [{}, { DATABASE_URL: mysql, AUTH_MODE: 'none' }];
    for (const base of bases.filter((env) => !(name in env))) {
      expect(outcomeOf({ ...base, [name]: value })).toEqual(outcomeOf(base));
    }
  });

  it('is the table of docs/configuration.md, as npm run docs:config writes it', () => {
    const page = readFileSync(join(__dirname, '..', '..', 'docs', 'configuration.md'), 'utf8');
    expect(page).toBe(withConfigurationTable(page));
  });
});
