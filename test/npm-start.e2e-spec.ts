import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { childEnvironment, freePort, REPO_ROOT, responds } from './support/processes';

/**
 * `npm start` in a developer's terminal: the service must stop with it, whether npm is sent SIGTERM
 * (`kill`, a process manager) or the terminal's Ctrl-C reaches npm and the service together, and so
 * must `npm run start:prod`'s. npm runs the script through a shell; a service left behind keeps the port. `--ignore-scripts` skips the
 * build of `prestart` (the test command has built dist/ already) and runs `start` itself.
 */

interface NpmStart {
  readonly npm: ChildProcess;
  readonly port: number;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The service's process id, from its log lines. */
  servicePid(): number | undefined;
}

const directories: string[] = [];
const started: ChildProcess[] = [];

afterAll(async () => {
  for (const child of started) if (child.exitCode === null) child.kill('SIGKILL');
  await Promise.all(directories.map((path) => rm(path, { recursive: true, force: true })));
});

async function npmStart(script: string): Promise<NpmStart> {
  const directory = await mkdtemp(join(tmpdir(), 'property-sales-npm-start-'));
  directories.push(directory);
  const port = await freePort();
  const npm = spawn('npm', ['run', script, '--ignore-scripts'], {
    cwd: REPO_ROOT,
    env: childEnvironment({
      PORT: String(port),
      DATABASE_URL: `sqlite:${join(directory, 'service.sqlite')}`,
      LOG_LEVEL: 'info',
    }),
    // A process group of its own, as a terminal gives the command it runs.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(npm);
  let output = '';
  npm.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  npm.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    npm.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const deadline = Date.now() + 30000;
  while (!(await responds(port, '/health/live'))) {
    if (npm.exitCode !== null || Date.now() > deadline) {
      throw new Error(`npm run ${script} did not serve on port ${port}:\n${output}`);
    }
    await delay(100);
  }
  const servicePid = () => {
    const pids = output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => (JSON.parse(line) as { pid?: number }).pid);
    return pids.find((pid) => pid !== undefined);
  };
  return { npm, port, exited, servicePid };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function gone(pid: number, timeoutMs = 10000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (alive(pid)) {
    if (Date.now() > deadline) return false;
    await delay(50);
  }
  return true;
}

describe('npm start', () => {
  it.each(['start', 'start:prod'])(
    'npm run %s stops the service when npm is sent SIGTERM: nothing is left holding the port',
    async (script) => {
      const started = await npmStart(script);
      const pid = started.servicePid();
      expect(pid).toEqual(expect.any(Number));
      expect(pid).not.toBe(started.npm.pid);

      started.npm.kill('SIGTERM');
      await started.exited;
      const serviceGone = await gone(pid!);
      if (!serviceGone) process.kill(pid!, 'SIGKILL');
      expect(serviceGone).toBe(true);
      expect(await responds(started.port, '/health/live')).toBe(false);
    },
  );

  it('shuts the service down gracefully on Ctrl-C, which reaches npm and the service: exit code 0', async () => {
    const started = await npmStart('start');
    const pid = started.servicePid()!;

    // The terminal sends SIGINT to the whole foreground process group; npm forwards it once more.
    process.kill(-started.npm.pid!, 'SIGINT');
    expect(await started.exited).toEqual({ code: 0, signal: null });
    expect(await gone(pid)).toBe(true);
  });
});
