import { once } from 'node:events';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP relay that holds every chunk `delayMs` each way: the server behind it answers as one a
 * network away does, rather than in the microseconds of loopback.
 */
export class LatencyRelay {
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    private readonly target: URL,
  ) {}

  /** Relays to the host and port of `targetUrl` (redis://…, http://…). */
  static async start(targetUrl: string, delayMs: number): Promise<LatencyRelay> {
    const target = new URL(targetUrl);
    const server = createServer();
    const relay = new LatencyRelay(server, target);
    server.on('connection', (client) => {
      const upstream = connect(Number(target.port), target.hostname);
      for (const [from, to] of [
        [client, upstream],
        [upstream, client],
      ]) {
        relay.sockets.add(from);
        // Timers of one delay fire in the order they were set: the stream keeps its order.
        from.on('data', (chunk: Buffer) => setTimeout(() => to.write(chunk), delayMs));
        from.on('close', () => {
          relay.sockets.delete(from);
          setTimeout(() => to.destroy(), delayMs);
        });
        from.on('error', () => from.destroy());
      }
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return relay;
  }

  /** `targetUrl` with the relay's host and port in place of the target's. */
  get url(): string {
    const url = new URL(this.target);
    url.hostname = '127.0.0.1';
    url.port = String((this.server.address() as AddressInfo).port);
    return url.toString();
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.server.close();
    await once(this.server, 'close');
  }
}
