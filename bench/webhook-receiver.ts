import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';

/**
 * A partner's receiver on loopback, as light as one can be: it reads each delivery and answers 204 at
 * once, counting what it received, so that what the bench measures is the service's side.
 */
export class WebhookReceiver {
  private received = 0;

  private constructor(private readonly server: Server) {}

  static async start(): Promise<WebhookReceiver> {
    const server = createServer();
    const receiver = new WebhookReceiver(server);
    server.on('request', (request, response) => {
      request.resume();
      request.on('end', () => {
        receiver.received++;
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  /** The URL of a subscription's endpoint: each its own path. */
  url(path: string): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}/${path}`;
  }

  /** The deliveries received so far, every path. */
  get deliveries(): number {
    return this.received;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
