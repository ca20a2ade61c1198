import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { createApp, startupFailureOf } from '../src/app.factory';
import { loadAppConfig } from '../src/config/app-config';
import { apiKeyEntry } from './support/auth-credentials';
import { ForgottenScopeModule } from './support/forgotten-scope.module';
import {
  childEnvironment,
  type CommandResult,
  freePort,
  jsonLines,
  runNode,
  SERVICE_MAIN,
  startOnNewSqlite,
  TemporaryDirectories,
} from './support/processes';
import { createTestDatabase, type TestDatabase, testDatabaseKinds } from './support/test-database';

/**
 * Each kind of failure to start, from the built service as operators start it: one JSON line on
 * stderr saying what failed and naming what fixes it (the variable, or the command), never PORT
 * unless the port could not be bound. And the start on a Node.js other than the one package.json
 * names, which stops at once with one plain line.
 */

interface FailureLine {
  readonly level: string;
  readonly msg: string;
  readonly variables: string[];
  readonly command?: string;
  readonly err?: { readonly type?: string; readonly code?: string };
}

const directories = new TemporaryDirectories('start-up-failures');
const databases: TestDatabase[] = [];

afterAll(async () => {
  await Promise.all(databases.splice(0).map((database) => database.drop()));
  await directories.removeAll();
});

/** The built service on a new SQLite file unless told otherwise; resolves once it has exited. */
async function refusedStart(env: Record<string, string>): Promise<CommandResult> {
  const directory = await directories.make();
  return runNode(SERVICE_MAIN, [], {
    cwd: directory,
    env: { DATABASE_URL: `sqlite:${join(directory, 'service.sqlite')}`, AUTH_MODE: 'none', ...env },
  });
}

/** The one line a refused start wrote: exit code 1, a fatal JSON line on stderr and nothing else. */
function failureLine(result: CommandResult): FailureLine {
  expect(result.code).toBe(1);
  const lines = jsonLines<FailureLine>(result.stderr);
  expect(lines).toHaveLength(1);
  expect(lines[0].level).toBe('fatal');
  return lines[0];
}

/** Holds a port for the duration of `work`, as another process would. */
async function withPortTaken<T>(work: (port: number) => Promise<T>): Promise<T> {
  const taken: Server = createServer();
  const port = await freePort();
  await new Promise<void>((resolve) => taken.listen(port, resolve));
  try {
    return await work(port);
  } finally {
    await new Promise((resolve) => taken.close(resolve));
  }
}

describe('a start-up failure names its cause and its fix', () => {
  it('a bad variable: the configuration error, naming the variable', async () => {
    const line = failureLine(await refusedStart({ HTTP_MAX_CONNECTIONS: 'many' }));
    expect(line.variables).toEqual(['HTTP_MAX_CONNECTIONS']);
    expect(line.msg).toMatch(/^Invalid configuration: HTTP_MAX_CONNECTIONS .*\(got 'many'\)/);
  });

  it('a database that does not answer: DATABASE_URL', async () => {
    const line = failureLine(
      await refusedStart({ DATABASE_URL: `mysql://root@127.0.0.1:${await freePort()}/nothing` }),
    );
    expect(line).toMatchObject({ variables: ['DATABASE_URL'], err: { code: 'ECONNREFUSED' } });
    expect(line.msg).toMatch(/^The service could not start \(DATABASE_URL\): .*ECONNREFUSED/);
  });

  (testDatabaseKinds().includes('mariadb') ? it : it.skip)(
    'a schema behind the release: MIGRATIONS_RUN and npm run migration:run, not PORT',
    async () => {
      const database = await createTestDatabase('mariadb');
      databases.push(database);
      const line = failureLine(await refusedStart({ DATABASE_URL: database.url }));
      expect(line).toMatchObject({
        variables: ['MIGRATIONS_RUN'],
        command: 'npm run migration:run',
        err: { type: 'SchemaBehindError' },
      });
      expect(line.msg).toMatch(
        /^The service could not start \(MIGRATIONS_RUN\): The database schema is behind this release: (\d+) of \1 migrations are pending .*Run them first \(npm run migration:run\), or set MIGRATIONS_RUN=true on one instance\.$/,
      );
    },
  );

  it('a grant of a scope no route requires: the variable that holds it, not PORT', async () => {
    const line = failureLine(
      await refusedStart({
        AUTH_MODE: 'apikey',
        AUTH_API_KEYS: apiKeyEntry('purger', 'su-purger-5b1e9c0d7a2f4836', ['transactions:purge']),
      }),
    );
    expect(line.variables).toEqual(['AUTH_API_KEYS']);
    expect(line.msg).toMatch(
      /^The service could not start \(AUTH_API_KEYS\): AUTH_API_KEYS \(purger\) grants transactions:purge, which no route requires; the scopes are /,
    );
  });

  it.each(['PORT', 'HEALTH_PORT'])('a port already taken: %s, and only then', (variable) =>
    withPortTaken(async (port) => {
      const line = failureLine(
        await refusedStart({ PORT: String(await freePort()), [variable]: String(port) }),
      );
      expect(line).toMatchObject({ variables: [variable], err: { code: 'EADDRINUSE' } });
      expect(line.msg).toMatch(
        new RegExp(`^The service could not listen on port ${port} \\(${variable}\\): .*EADDRINUSE`),
      );
    }),
  );
});

// The built service has no such route, so this kind is told by the same function main.ts reports
// with, on an application built and initialised as main.ts builds and initialises it.
it('a route without a scope: the route and the decorators that fix it, no variable', async () => {
  const config = loadAppConfig({
    DATABASE_URL: 'sqlite::memory:',
    DEMO_DATA: 'false',
    AUTH_MODE: 'none',
    LOG_LEVEL: 'silent',
  });
  const app = await createApp(config, { logger: false, modules: [ForgottenScopeModule] });
  const failure = await app.init().then(
    () => undefined,
    (error: unknown) => startupFailureOf(error),
  );
  await app.close();
  expect(failure).toEqual({
    message:
      'The service could not start: Routes without a scope: ForgottenScopeController.forgotten. ' +
      "Declare each route's scope with @RequiresScope beside its @WireErrors (or @PublicRoute for " +
      'a probe).',
    variables: [],
    command: undefined,
  });
});

describe('the start on another Node.js', () => {
  const expected = (running: string) =>
    new RegExp(
      `^This service needs Node\\.js 24\\.11 or a later 24 release; this is Node\\.js ${running.replace(/\./g, '\\.')}\\. ` +
        'Install it with nvm \\(nvm install, which reads \\.nvmrc\\), fnm \\(fnm use\\) or Volta ' +
        '\\(volta install node@24\\)\\.\\n$',
    );

  /** `node args…` on the built service, with no database nor variables: it must stop first. */
  function run(node: string, args: readonly string[]): Promise<CommandResult> {
    return new Promise((resolve, reject) => {
      const child = spawn(node, [...args, SERVICE_MAIN], {
        env: childEnvironment({}),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    });
  }

  // Whatever Node.js the machine has: a preload makes this Node.js 24 report itself as 20.20.2 to the
  // check, which reads process.versions.node as it would on Node.js 20.
  it('stops at once, in one line naming Node.js 24 and how to get it', async () => {
    const directory = await directories.make();
    const preload = join(directory, 'node-20.js');
    await writeFile(
      preload,
      "Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '20.20.2' } });\n",
    );
    const result = await run(process.execPath, ['--require', preload]);
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toMatch(expected('20.20.2'));
  });

  // And on a real older Node.js, where the machine has one (its default node, often): nothing of
  // the service loads before the check, so nothing crashes before it speaks.
  const otherNode = ['/usr/bin/node', '/usr/local/bin/node'].find(
    (path) =>
      existsSync(path) &&
      !execFileSync(path, ['--version'], { encoding: 'utf8' }).startsWith('v24.'),
  );
  (otherNode ? it : it.skip)(`stops at once on ${otherNode ?? 'an older Node.js'}`, async () => {
    const running = execFileSync(otherNode!, ['--version'], { encoding: 'utf8' }).trim().slice(1);
    const result = await run(otherNode!, []);
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toMatch(expected(running));
  });
});

interface ListeningLine {
  readonly msg: string;
  readonly url?: string;
  readonly swaggerUrl?: string;
  readonly livenessUrl?: string;
  readonly readinessUrl?: string;
}

describe('the URLs the start-up log prints', () => {
  it.each([false, true])('each answers 200 (a health port of its own: %s)', async (ownPort) => {
    const healthPort = ownPort ? await freePort() : undefined;
    const service = await startOnNewSqlite(await directories.make(), {
      AUTH_MODE: 'none',
      ...(healthPort ? { HEALTH_PORT: String(healthPort) } : {}),
    });
    try {
      const listening = jsonLines<ListeningLine>(service.stdout).find((line) =>
        line.msg.startsWith('Listening'),
      );
      const probes = ['live', 'ready'].map(
        (probe) => `http://localhost:${healthPort ?? service.port}/health/${probe}`,
      );
      expect([listening?.livenessUrl, listening?.readinessUrl]).toEqual(probes);
      const printed = [listening?.url, listening?.swaggerUrl, ...probes].map(String);
      for (const url of printed) expect(listening?.msg).toContain(url);
      // The API's URL is its prefix, where the endpoints start: one of them answers.
      const [api, ...rest] = printed;
      for (const url of [`${api}/Requirement/GetRequirements`, ...rest])
        expect([url, (await fetch(url)).status]).toEqual([url, 200]);
    } finally {
      await service.stop();
    }
  });
});
