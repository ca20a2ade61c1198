import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import { children } from './service';

/** The next message `child` sends. */
function nextMessage<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    const exited = (code: number | null) =>
      reject(new Error(`The webhook receiver exited ${code}`));
    child.once('exit', exited);
    child.once('message', (message) => {
      child.off('exit', exited);
      resolve(message as T);
    });
  });
}

/**
 * The receiver of the partners' deliveries on loopback, in a process of its own
 * (webhook-receiver-process): each subscription's endpoint is a path of it.
 */
export class WebhookReceiver {
  private constructor(
    private readonly child: ChildProcess,
    private readonly port: number,
  ) {}

  static async start(): Promise<WebhookReceiver> {
    const child = fork(join(__dirname, 'webhook-receiver-process.js'), [], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    children.push(child);
    return new WebhookReceiver(child, await nextMessage<number>(child));
  }

  /** The URL of a subscription's endpoint: each its own path. */
  url(path: string): string {
    return `http://127.0.0.1:${this.port}/${path}`;
  }

  /** The deliveries received so far, every path. */
  deliveries(): Promise<number> {
    const counted = nextMessage<number>(this.child);
    this.child.send('count');
    return counted;
  }

  async close(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.send('stop');
    await exited;
  }
}
