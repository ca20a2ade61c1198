import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { createConnection } from 'mysql2/promise';
import { freePort } from './processes';

const run = promisify(execFile);

/** Where Debian and the official images put them; PATH is tried first. */
const INSTALL_DB = [
  'mariadb-install-db',
  '/usr/bin/mariadb-install-db',
  '/usr/bin/mysql_install_db',
];
const SERVER = ['mariadbd', '/usr/sbin/mariadbd', '/usr/sbin/mysqld'];

/** Small InnoDB files and buffers: the server holds a few test rows, and starts in about a second. */
export const SERVER_OPTIONS = [
  '--skip-name-resolve',
  '--innodb-log-file-size=8M',
  '--innodb-buffer-pool-size=32M',
  '--skip-log-bin',
  '--character-set-server=utf8mb4',
  '--collation-server=utf8mb4_unicode_ci',
];

/** Every server this process started and has not seen exit: killed if the test process leaves early. */
const live = new Set<ChildProcess>();
let exitHookInstalled = false;
function killOnExit(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const server of live) server.kill('SIGKILL');
  });
}

async function firstWorking(candidates: readonly string[]): Promise<string> {
  for (const candidate of candidates) {
    try {
      await run(candidate, ['--version'], { timeout: 10000 });
      return candidate;
    } catch {
      // Not there, or not runnable: try the next one.
    }
  }
  throw new Error(`None of ${candidates.join(', ')} can be run: is MariaDB installed?`);
}

/**
 * A MariaDB server that one test file owns: its own data directory under the system temporary
 * directory and its own port on 127.0.0.1, root without a password. The test can crash it (SIGKILL)
 * and start it again on the same data, as an outage does. Starting fails loudly; it never skips.
 */
export class PrivateMariaDb {
  private child?: ChildProcess;
  private exited?: Promise<void>;

  private constructor(
    /** Holds the data directory, the socket, the pid file and the error log. */
    readonly directory: string,
    readonly port: number,
    private readonly serverBinary: string,
    private readonly options: readonly string[],
  ) {}

  /** Initialises a fresh data directory and starts the server on a free port. */
  static async create(options: { startTimeoutMs?: number } = {}): Promise<PrivateMariaDb> {
    const server = await PrivateMariaDb.prepare();
    try {
      await server.start(options.startTimeoutMs);
      return server;
    } catch (error) {
      await server.destroy();
      throw error;
    }
  }

  /**
   * A server not started yet, on a free port, with `options` (SERVER_OPTIONS unless told): its data
   * directory initialised, or with `install: false` left empty (a Galera node that receives its data
   * from another node). `serverOptions` come after `options` at every start, but are not given to the
   * installation: a replication primary's binary log (mariadb-install-db fails with one now and then).
   */
  static async prepare(
    setup: {
      options?: readonly string[];
      serverOptions?: readonly string[];
      install?: boolean;
    } = {},
  ): Promise<PrivateMariaDb> {
    const { options = SERVER_OPTIONS, serverOptions = [], install = true } = setup;
    const directory = await mkdtemp(join(tmpdir(), 'ps-mariadb-'));
    try {
      // Its own directory for temporary files: a server starting (an installation's too) deletes
      // every temporary table file it finds in its directory, another server's among them.
      await mkdir(join(directory, 'tmp'));
      const [installer, serverBinary] = await Promise.all([
        firstWorking(INSTALL_DB),
        firstWorking(SERVER),
      ]);
      if (install) {
        try {
          await run(
            installer,
            [
              // Must come first: no option file of the host changes this server.
              '--no-defaults',
              `--datadir=${join(directory, 'data')}`,
              '--auth-root-authentication-method=normal',
              '--skip-test-db',
              // The tests run as root; mariadbd refuses root unless told so.
              '--user=root',
              `--tmpdir=${join(directory, 'tmp')}`,
              ...options,
            ],
            { timeout: 60000, maxBuffer: 16 * 1024 * 1024 },
          );
        } catch (error) {
          const { stdout, stderr } = error as { stdout?: string; stderr?: string };
          throw new Error(
            `mariadb-install-db failed in ${directory}: ${(error as Error).message}\n${stdout ?? ''}${stderr ?? ''}`,
            { cause: error },
          );
        }
      } else {
        await mkdir(join(directory, 'data'));
      }
      return new PrivateMariaDb(directory, await freePort(), serverBinary, [
        ...options,
        ...serverOptions,
      ]);
    } catch (error) {
      await rm(directory, { recursive: true, force: true });
      throw error;
    }
  }

  /** mysql2's URL of the server, without a database. */
  get adminUrl(): string {
    return `mysql://root@127.0.0.1:${this.port}/`;
  }

  /** The service's DATABASE_URL for a database on this server. */
  urlFor(database: string): string {
    return `mariadb://root@127.0.0.1:${this.port}/${database}`;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The server's error log, for failure messages. */
  async log(): Promise<string> {
    return readFile(join(this.directory, 'error.log'), 'utf8').catch(() => '(no error log)');
  }

  /** Runs statements on a fresh admin connection. */
  async query(...statements: string[]): Promise<unknown[]> {
    const connection = await createConnection({ uri: this.adminUrl, connectTimeout: 2000 });
    try {
      const results: unknown[] = [];
      for (const statement of statements) results.push((await connection.query(statement))[0]);
      return results;
    } finally {
      await connection.end();
    }
  }

  async createDatabase(name: string): Promise<string> {
    await this.query(
      `CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
    );
    return this.urlFor(name);
  }

  /**
   * Starts the server on the data directory and port it had (after a crash, InnoDB recovers first),
   * with `once` among its options this time only, and resolves once it accepts connections; rejects
   * with its log when it exits or takes too long.
   */
  async start(timeoutMs = 30000, once: readonly string[] = []): Promise<void> {
    if (this.child) throw new Error('The private MariaDB is already running');
    const child = spawn(
      this.serverBinary,
      [
        '--no-defaults',
        `--datadir=${join(this.directory, 'data')}`,
        `--port=${this.port}`,
        '--bind-address=127.0.0.1',
        `--socket=${join(this.directory, 'mysqld.sock')}`,
        `--pid-file=${join(this.directory, 'mysqld.pid')}`,
        `--log-error=${join(this.directory, 'error.log')}`,
        `--tmpdir=${join(this.directory, 'tmp')}`,
        '--user=root',
        ...this.options,
        ...once,
      ],
      { stdio: 'ignore' },
    );
    killOnExit(child);
    this.child = child;
    let exitStatus: string | undefined;
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        exitStatus = `code ${code}, signal ${signal}`;
        resolve();
      }),
    );
    let failure: unknown;
    child.once('error', (error) => {
      // The binary could not be run at all: no 'exit' follows.
      exitStatus = `spawn failed: ${error.message}`;
      failure = error;
    });
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && exitStatus === undefined) {
      try {
        const connection = await createConnection({ uri: this.adminUrl, connectTimeout: 1000 });
        try {
          await connection.query('SELECT 1');
          return;
        } finally {
          connection.destroy();
        }
      } catch (error) {
        failure = error;
      }
      await sleep(100);
    }
    await this.kill();
    throw new Error(
      `The private MariaDB on port ${this.port} did not start (${exitStatus ?? `not ready within ${timeoutMs} ms`}; last: ${String(failure)}):\n${(await this.log()).slice(-4000)}`,
    );
  }

  /**
   * Freezes the server with SIGSTOP: connections stay open and new ones are accepted by the kernel,
   * but nothing answers, as with a hung host or a network partition.
   */
  async freeze(): Promise<void> {
    const pid = this.child?.pid;
    if (pid === undefined || !this.child?.kill('SIGSTOP'))
      throw new Error('The private MariaDB is not running');
    // A signal is delivered asynchronously: wait until the kernel reports the process stopped (state
    // T), so no query sent after this resolves can still be answered.
    const deadline = Date.now() + 5000;
    while (!/^\d+ \(.*\) T/.test(await readFile(`/proc/${pid}/stat`, 'utf8'))) {
      if (Date.now() > deadline) throw new Error(`The private MariaDB (pid ${pid}) did not stop`);
      await sleep(10);
    }
  }

  /** Lets a frozen server run again (SIGCONT). */
  thaw(): void {
    if (!this.child?.kill('SIGCONT')) throw new Error('The private MariaDB is not running');
  }

  /** Crashes the server with SIGKILL, as an outage does, and waits until the process is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await this.exited;
    }
    this.child = undefined;
    this.exited = undefined;
  }

  /** Kills the server and removes its data directory. */
  async destroy(): Promise<void> {
    try {
      await this.kill();
    } finally {
      await rm(this.directory, { recursive: true, force: true });
    }
  }
}
