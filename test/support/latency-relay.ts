import { once } from 'node:events';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { type RelayTarget } from './latency-relay-thread';
import { REPO_ROOT } from './processes';

/** The built relay (test/support/latency-relay-thread.ts): a worker thread runs it. */
const RELAY_THREAD = join(REPO_ROOT, 'dist', 'test', 'support', 'latency-relay-thread.js');

/**
 * A TCP relay that holds every chunk `delayMs` each way: the server behind it answers as one a
 * network away does, rather than in the microseconds of loopback. It runs in a thread of its own.
 */
export class LatencyRelay {
  private constructor(
    private readonly thread: Worker,
    private readonly target: URL,
    private readonly port: number,
  ) {}

  /** Relays to the host and port of `targetUrl` (redis://…, http://…). */
  static async start(targetUrl: string, delayMs: number): Promise<LatencyRelay> {
    const target = new URL(targetUrl);
    const relayTarget: RelayTarget = {
      host: target.hostname,
      port: Number(target.port),
      delayMs,
    };
    const thread = new Worker(RELAY_THREAD, { workerData: relayTarget });
    const [port] = (await once(thread, 'message')) as [number];
    return new LatencyRelay(thread, target, port);
  }

  /** `targetUrl` with the relay's host and port in place of the target's. */
  get url(): string {
    const url = new URL(this.target);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }

  async close(): Promise<void> {
    const exited = once(this.thread, 'exit');
    this.thread.postMessage('close');
    await exited;
  }
}
