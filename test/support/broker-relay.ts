import { connect, createServer, type Server, type Socket } from 'node:net';
import { TEST_BROKER_URL } from './event-collector';
import { freePort } from './processes';

/** The bytes one direction of a relayed connection holds while the relay is stalled. */
interface Direction {
  readonly to: Socket;
  readonly held: Buffer[];
}

/**
 * A TCP relay in front of the test broker, which a service reaches it through, so a test can take
 * the broker away without touching the shared one: it cuts it (open connections closed, new ones
 * refused), mutes it (the service's frames still reach the broker, the broker's answers, its confirms
 * among them, are dropped) or stalls it (nothing moves either way, as through a network that went
 * silent, until `resume` delivers what was held, in order).
 */
export class BrokerRelay {
  private readonly sockets = new Set<Socket>();
  private readonly directions = new Set<Direction>();
  private muted = false;
  private stalled = false;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {
    server.on('connection', (client) => this.relay(client));
  }

  static async start(): Promise<BrokerRelay> {
    const relay = new BrokerRelay(createServer(), await freePort());
    await relay.restore();
    return relay;
  }

  /** The broker's URL, through the relay. */
  get url(): string {
    const url = new URL(TEST_BROKER_URL);
    url.host = `127.0.0.1:${this.port}`;
    return url.toString();
  }

  private relay(client: Socket): void {
    const broker = new URL(TEST_BROKER_URL);
    const upstream = connect({ host: broker.hostname, port: Number(broker.port || 5672) });
    const toBroker: Direction = { to: upstream, held: [] };
    const toClient: Direction = { to: client, held: [] };
    this.directions.add(toBroker).add(toClient);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        this.sockets.delete(socket);
        this.directions.delete(toBroker);
        this.directions.delete(toClient);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => this.pass(toBroker, chunk));
    upstream.on('data', (chunk: Buffer) => {
      if (!this.muted) this.pass(toClient, chunk);
    });
  }

  private pass(direction: Direction, chunk: Buffer): void {
    if (this.stalled) direction.held.push(chunk);
    else direction.to.write(chunk);
  }

  /** Open connections closed, new ones refused. */
  async cut(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  /** Accepting connections again, on the same port. */
  restore(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  /** Drops whatever the broker sends, on every connection, until `unmute`. */
  mute(): void {
    this.muted = true;
  }

  unmute(): void {
    this.muted = false;
  }

  /** Holds whatever either side sends, on every connection, until `resume`. */
  stall(): void {
    this.stalled = true;
  }

  /** Delivers what was held, in order, and relays again. */
  resume(): void {
    this.stalled = false;
    for (const { to, held } of this.directions) for (const chunk of held.splice(0)) to.write(chunk);
  }

  async close(): Promise<void> {
    this.resume();
    if (this.server.listening) await this.cut();
    else for (const socket of this.sockets) socket.destroy();
  }
}
