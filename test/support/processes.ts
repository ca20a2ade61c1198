import { type ChildProcess, spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';

/** The repository root; the built service and import command live under dist/ (the test command builds it). */
export const REPO_ROOT = join(__dirname, '..', '..');
export const SERVICE_MAIN = join(REPO_ROOT, 'dist', 'src', 'main.js');
/** The built service with the reacting test module mounted (test/support/reacting-main.ts). */
export const REACTING_MAIN = join(REPO_ROOT, 'dist', 'test', 'support', 'reacting-main.js');
export const IMPORT_MAIN = join(REPO_ROOT, 'dist', 'src', 'data-import', 'main.js');

/** Variables of this service that a child must not inherit from the test run by accident. */
const SERVICE_VARIABLES = [
  'PORT',
  'API_PREFIX',
  'APP_TIMEZONE',
  'XML_NAMESPACE',
  'BODY_LIMIT',
  'DATABASE_URL',
  'DATABASE_READ_URLS',
  'DATABASE_REPLICA_RETRY_MS',
  'DATABASE_TIMEOUT_MS',
  'DEMO_DATA',
  'MIGRATIONS_RUN',
  'LOG_LEVEL',
  'LOG_FORMAT',
  'TRUST_PROXY',
  'CORS_ORIGINS',
  'SHUTDOWN_TIMEOUT_MS',
  'SHUTDOWN_DRAIN_MS',
  'HTTP_HEADERS_TIMEOUT_MS',
  'HTTP_REQUEST_TIMEOUT_MS',
  'HTTP_KEEP_ALIVE_TIMEOUT_MS',
  'HTTP_MAX_CONNECTIONS',
  'HTTP_MAX_CONNECTIONS_PER_CLIENT',
  'HEALTH_PORT',
  'BODY_MIN_BYTES_PER_SECOND',
  'BODY_RATE_GRACE_MS',
  'AUTH_MODE',
  'AUTH_API_KEYS',
  'AUTH_JWKS_URL',
  'AUTH_JWT_PUBLIC_KEY',
  'AUTH_JWT_ISSUER',
  'AUTH_JWT_AUDIENCE',
  'AUTH_JWT_ALGORITHMS',
  'AUTH_JWT_CLOCK_SKEW_SECONDS',
  'SWAGGER',
  'RATE_LIMIT',
  'RATE_LIMIT_WINDOW_SECONDS',
  'RATE_LIMIT_KEY_PREFIX',
  'REDIS_URL',
];

/**
 * The test run's environment without the service's own variables, nor OpenTelemetry's (which would
 * turn tracing on), plus the ones given. A service stops without a drain delay unless told: no gateway
 * is watching its readiness.
 */
export function childEnvironment(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SERVICE_VARIABLES) delete base[name];
  for (const name of Object.keys(base))
    if (name.startsWith('OTEL_') || name.startsWith('EVENTS_')) delete base[name];
  return { ...base, SHUTDOWN_DRAIN_MS: '0', ...env };
}

export interface CommandResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node script args…` to completion; kills it when it outlives the timeout. */
export function runNode(
  script: string,
  args: readonly string[],
  options: { env: Record<string, string>; cwd?: string; timeoutMs?: number },
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd: options.cwd ?? REPO_ROOT,
      env: childEnvironment(options.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/**
 * A port nothing listens on right now, on any address: probed as the service binds (no host, so the
 * IPv6 wildcard that takes IPv4 too). A port free on 127.0.0.1 alone may still be held on `::`.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Answers whether anything gives an HTTP response on the port. */
/** Whether a GET on a fresh connection gets any answer within the time. */
export function responds(port: number, path = '/', timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = httpRequest(
      { host: '127.0.0.1', port, path, method: 'GET', agent: false, timeout: timeoutMs },
      (response) => {
        response.resume();
        resolve(true);
      },
    );
    probe.on('error', () => resolve(false));
    probe.on('timeout', () => {
      probe.destroy();
      resolve(false);
    });
    probe.end();
  });
}

/** The service started as operators start it: `node dist/src/main.js`, in a working directory. */
export class ServiceProcess {
  private stdoutText = '';
  private stderrText = '';
  private readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(
    readonly child: ChildProcess,
    readonly port: number,
  ) {
    child.stdout?.on('data', (chunk: Buffer) => (this.stdoutText += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (this.stderrText += chunk.toString()));
    this.exited = new Promise((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
  }

  /**
   * Starts the built service; `main` is the reacting test module's entry unless a suite's subject is
   * src/main.ts itself.
   */
  static start(options: {
    cwd: string;
    env: Record<string, string>;
    main?: string;
  }): Promise<ServiceProcess> {
    return freePort().then((port) => {
      const child = spawn(process.execPath, [options.main ?? REACTING_MAIN], {
        cwd: options.cwd,
        env: childEnvironment({ PORT: String(port), ...options.env }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      return new ServiceProcess(child, port);
    });
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get output(): string {
    return `${this.stdoutText}${this.stderrText}`;
  }

  /** What the service wrote to stdout alone: its log lines. */
  get stdout(): string {
    return this.stdoutText;
  }

  get stderr(): string {
    return this.stderrText;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Polls the port until the service answers; fails with its output when it exits or takes too long. */
  async ready(timeoutMs = 20000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.running) throw new Error(`The service exited before it was ready:\n${this.output}`);
      if (await responds(this.port)) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`The service was not ready within ${timeoutMs} ms:\n${this.output}`);
  }

  /** Resolves when the process has exited, or rejects after the timeout. */
  async exit(timeoutMs = 15000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`The service did not exit within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops the service with SIGTERM, as an orchestrator does, and waits; SIGKILL if it hangs. */
  async stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (!this.running) return this.exited;
    this.child.kill('SIGTERM');
    try {
      return await this.exit(10000);
    } catch (error) {
      this.child.kill('SIGKILL');
      await this.exited;
      throw error;
    }
  }
}

/** Every non-empty line of a process's output, parsed: throws when one is not JSON. */
export function jsonLines<Line>(text: string): Line[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Line;
      } catch {
        throw new Error(`A log line is not JSON: ${line}`);
      }
    });
}

/**
 * `node dist/src/main.js` in `directory`, on a new SQLite file there (demo data loaded), logging at
 * info unless told; resolves once it serves.
 */
export async function startOnNewSqlite(
  directory: string,
  env: Record<string, string> = {},
): Promise<ServiceProcess> {
  const service = await ServiceProcess.start({
    cwd: directory,
    env: { DATABASE_URL: `sqlite:${join(directory, 'service.sqlite')}`, LOG_LEVEL: 'info', ...env },
  });
  try {
    await service.ready();
  } catch (error) {
    await service.stop();
    throw error;
  }
  return service;
}

/** A suite's temporary directories: `make` one when needed, `removeAll` in its afterAll. */
export class TemporaryDirectories {
  private readonly made: string[] = [];

  /** @param suite Part of each directory's name, to tell whose a leftover one is. */
  constructor(private readonly suite: string) {}

  async make(): Promise<string> {
    const directory = await mkdtemp(join(tmpdir(), `property-sales-${this.suite}-`));
    this.made.push(directory);
    return directory;
  }

  async removeAll(): Promise<void> {
    await Promise.all(
      this.made.splice(0).map((directory) => rm(directory, { recursive: true, force: true })),
    );
  }
}

/**
 * What a describe's tests each use once, a process started or run to its end, started before its
 * first test as many at a time as the machine has cores: a service spends about two seconds loading
 * its code, most of it on one core. The tests run once every one has started (or failed to), on a
 * quiet machine; `started(name)` gives a test its own, and a failure to start fails that test alone.
 */
export function startedTogether<Starts extends Record<string, () => Promise<unknown>>>(
  starts: Starts,
): <Name extends keyof Starts & string>(name: Name) => ReturnType<Starts[Name]> {
  const started = new Map<string, Promise<unknown>>();
  beforeAll(async () => {
    const waiting = Object.entries(starts);
    const startNext = async (): Promise<void> => {
      const next = waiting.shift();
      if (!next) return;
      const [name, start] = next;
      const starting = start();
      started.set(name, starting);
      // Reported by the test that takes it, not as a rejection nobody handled.
      await starting.catch(() => undefined);
      return startNext();
    };
    await Promise.all(Array.from({ length: availableParallelism() }, startNext));
  });
  return <Name extends keyof Starts & string>(name: Name) => {
    const starting = started.get(name);
    if (!starting) throw new Error(`Nothing named ${name} was started`);
    return starting as ReturnType<Starts[Name]>;
  };
}
