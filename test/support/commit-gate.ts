import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** The MySQL protocol's command byte for a text statement. */
const COM_QUERY = 0x03;
/**
 * A statement text that commits: COMMIT alone, or a batch of statements holding it (a unit's writes
 * and COMMIT, perhaps with the read after it that proves the commit).
 */
const COMMITS = /(^|;\s*)COMMIT(;|$)/;
/** A packet's header: its payload length (3 bytes, little-endian) and sequence number. */
const HEADER_BYTES = 4;

type Action = { readonly kind: 'hold'; readonly ms: number } | { readonly kind: 'cut' };

interface Armed {
  readonly action: Action;
  readonly done: () => void;
}

/** Whether a packet is a text statement that commits. */
function isCommit(packet: Buffer): boolean {
  return (
    packet[HEADER_BYTES] === COM_QUERY &&
    COMMITS.test(packet.subarray(HEADER_BYTES + 1).toString('latin1'))
  );
}

/**
 * A TCP relay in front of a MySQL server that stands in the way of the next COMMIT a client sends,
 * alone or at the end of a batch of statements:
 * it holds the COMMIT back for a while and then passes it on (the server commits late, as when it
 * hangs), or breaks the connection instead (the server rolls back). Everything else passes untouched.
 */
export class CommitGate {
  /** Text statements clients have sent through the relay: each is one round trip to the server. */
  queries = 0;
  private armed?: Armed;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** Relays 127.0.0.1:<port> to the server of `databaseUrl`. */
  static async start(databaseUrl: string): Promise<CommitGate> {
    const target = new URL(databaseUrl);
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const gate = new CommitGate(server, (server.address() as AddressInfo).port);
    server.on('connection', (client: Socket) =>
      gate.relay(client, target.hostname, Number(target.port || 3306)),
    );
    return gate;
  }

  /** `databaseUrl` with its server replaced by this relay. */
  urlFor(databaseUrl: string): string {
    const url = new URL(databaseUrl);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }

  /** Holds the next COMMIT back for `ms`; resolves once it has been passed on. */
  holdNextCommit(ms: number): Promise<void> {
    return this.arm({ kind: 'hold', ms });
  }

  /** Breaks the connection that sends the next COMMIT, which never reaches the server. */
  cutNextCommit(): Promise<void> {
    return this.arm({ kind: 'cut' });
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private arm(action: Action): Promise<void> {
    if (this.armed) throw new Error('The gate already waits for a COMMIT');
    return new Promise((resolve) => {
      this.armed = { action, done: resolve };
    });
  }

  private relay(client: Socket, host: string, port: number): void {
    const upstream = connect(port, host);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    upstream.pipe(client);
    // The client's packets go on one at a time, in order, so a held COMMIT holds what follows it.
    let pending = Buffer.alloc(0);
    let forwarding = Promise.resolve();
    client.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      const packets: Buffer[] = [];
      while (pending.length >= HEADER_BYTES) {
        const length = HEADER_BYTES + pending.readUIntLE(0, 3);
        if (pending.length < length) break;
        packets.push(pending.subarray(0, length));
        pending = pending.subarray(length);
      }
      forwarding = forwarding.then(async () => {
        for (const packet of packets) await this.forward(packet, client, upstream);
      });
    });
    client.once('end', () => void forwarding.then(() => upstream.end()));
  }

  private async forward(packet: Buffer, client: Socket, upstream: Socket): Promise<void> {
    // A command starts its exchange: sequence number 0.
    if (packet[HEADER_BYTES - 1] === 0 && packet[HEADER_BYTES] === COM_QUERY) this.queries++;
    const armed = this.armed;
    if (!armed || !isCommit(packet)) {
      if (!upstream.destroyed) upstream.write(packet);
      return;
    }
    this.armed = undefined;
    if (armed.action.kind === 'cut') {
      client.destroy();
      upstream.destroy();
    } else {
      await sleep(armed.action.ms);
      upstream.write(packet);
    }
    armed.done();
  }
}
