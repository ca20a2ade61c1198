import { type ChildProcess, spawn } from 'node:child_process';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { scripts } from '../package.json';

/** The built service, as `npm run start:prod` and the image run it. */
const SERVICE = join(__dirname, '..', 'src', 'main.js');
/** The built service with the reacting test module mounted (test/support/reacting-main.ts). */
export const REACTING_SERVICE = join(__dirname, '..', 'test', 'support', 'reacting-main.js');

/** Every process the bench started, killed at its end whatever happened. */
export const children: ChildProcess[] = [];

/** A port the OS says is free on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Polls `url` until it answers 200, often enough to time a start to about 10 ms. */
async function waitFor(url: string, deadlineMs = 60000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer`);
    await sleep(10);
  }
}

/** The Node.js flags of `npm run start:prod`, whose command the Dockerfile's CMD runs too. */
const PRODUCTION_NODE_FLAGS = scripts['start:prod']
  .split(' ')
  .filter((word) => word.startsWith('--'));

export interface Service {
  readonly url: string;
  readonly process: ChildProcess;
  /** From spawning the process to its first answered request (readiness), in ms. */
  readonly startMs: number;
}

/** The service as production runs it: JSON logs (to nowhere), request ids, helmet. */
export async function startService(
  databaseUrl: string,
  env: Record<string, string> = {},
  main = SERVICE,
): Promise<Service> {
  const port = await freePort();
  const spawned = performance.now();
  const child = spawn(process.execPath, [...PRODUCTION_NODE_FLAGS, main], {
    env: {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      AUTH_MODE: 'none',
      DEMO_DATA: 'false',
      MIGRATIONS_RUN: 'true',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/health/ready`);
  return { url, process: child, startMs: performance.now() - spawned };
}

/** Kills a service at once and waits for its exit, so that the next one has the database alone. */
export async function stopService(service: Service): Promise<void> {
  service.process.kill('SIGKILL');
  await new Promise((resolve) => service.process.once('exit', resolve));
}
