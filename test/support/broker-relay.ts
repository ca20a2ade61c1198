import { type RelayDirection, TcpRelay } from '../../bench/tcp-relay';
import { TEST_BROKER_URL } from './event-collector';

/**
 * A TCP relay in front of the test broker, which a service reaches it through, so a test can take
 * the broker away without touching the shared one: it cuts it (open connections closed, new ones
 * refused), mutes it (the service's frames still reach the broker, the broker's answers, its confirms
 * among them, are dropped) or stalls it (nothing moves either way, as through a network that went
 * silent, until `resume` delivers what was held, in order).
 */
export class BrokerRelay {
  private muted = false;
  private stalled = false;
  /** What a stall held, each chunk's forwarding in the order it came. */
  private readonly held: (() => void)[] = [];

  private constructor(private readonly relay: TcpRelay) {}

  static async start(): Promise<BrokerRelay> {
    const broker = new URL(TEST_BROKER_URL);
    const owner: { relay?: BrokerRelay } = {};
    const relay = await TcpRelay.start(
      broker.hostname,
      Number(broker.port || 5672),
      (direction, chunk, forward) => owner.relay?.pass(direction, () => forward(chunk)),
    );
    owner.relay = new BrokerRelay(relay);
    return owner.relay;
  }

  /** The broker's URL, through the relay. */
  get url(): string {
    const url = new URL(TEST_BROKER_URL);
    url.host = `127.0.0.1:${this.relay.port}`;
    return url.toString();
  }

  private pass(direction: RelayDirection, forward: () => void): void {
    if (this.muted && direction === 'toClient') return;
    if (this.stalled) this.held.push(forward);
    else forward();
  }

  /** Open connections closed, new ones refused. */
  cut(): Promise<void> {
    return this.relay.cut();
  }

  /** Accepting connections again, on the same port. */
  restore(): Promise<void> {
    return this.relay.restore();
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
    for (const forward of this.held.splice(0)) forward();
  }

  async close(): Promise<void> {
    this.held.length = 0;
    this.stalled = false;
    await this.relay.close();
  }
}
