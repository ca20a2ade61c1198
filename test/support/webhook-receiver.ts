import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One POST a receiver took: its headers and body as sent, and the status it answered. */
export interface ReceivedDelivery {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly status: number;
}

/** The CloudEvent a delivery carries, as a subscriber reads it. */
export interface DeliveredEvent {
  readonly id: string;
  readonly type: string;
  readonly subject?: string;
  readonly data: Record<string, unknown>;
}

/**
 * A subscriber's endpoint on a loopback port, as a partner would run one: it records every POST and
 * answers with what `answer` says (204 unless told; 'hang' never answers).
 */
export class WebhookReceiver {
  readonly deliveries: ReceivedDelivery[] = [];
  answer: () => number | 'hang' = () => 204;
  /** Headers sent with every answer (a Location with a 3xx). */
  headers: Record<string, string> = {};
  private readonly hanging = new Set<() => void>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<WebhookReceiver> {
    const receiver: WebhookReceiver = new WebhookReceiver(
      createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
          const answer = receiver.answer();
          const body = Buffer.concat(chunks).toString('utf8');
          if (answer === 'hang') {
            receiver.deliveries.push({ headers: request.headers, body, status: 0 });
            receiver.hanging.add(() => response.destroy());
            return;
          }
          receiver.deliveries.push({ headers: request.headers, body, status: answer });
          response.writeHead(answer, { 'content-type': 'text/plain', ...receiver.headers });
          response.end(answer >= 300 ? 'x'.repeat(10_000) : '');
        });
      }),
    );
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  /** The deliveries it acknowledged (2xx), in the order they came. */
  get acknowledged(): ReceivedDelivery[] {
    return this.deliveries.filter(({ status }) => status >= 200 && status < 300);
  }

  /** The events it acknowledged, each verified with `secret` as the standardwebhooks package does. */
  verified(secret: string): DeliveredEvent[] {
    const webhook = new Webhook(secret);
    return this.acknowledged.map(
      ({ headers, body }) =>
        webhook.verify(body, headers as Record<string, string>) as DeliveredEvent,
    );
  }

  async close(): Promise<void> {
    for (const end of this.hanging) end();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Resolves once `done` holds, checking every 25 ms; fails with `what` after `ms`. */
export async function until(
  done: () => boolean | Promise<boolean>,
  what: string,
  ms = 20_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
