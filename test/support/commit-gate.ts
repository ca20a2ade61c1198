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
  /** What the committing batch holds: the request's own writes, not another unit's COMMIT. */
  readonly matching: RegExp;
  readonly done: () => void;
}

/** One text statement a client sent, and the client connection it came on. */
interface Query {
  readonly connection: number;
  readonly text: string;
}

/** The text of a packet that starts a text statement; undefined for any other packet. */
function statementOf(packet: Buffer): string | undefined {
  // A command starts its exchange: sequence number 0.
  return packet[HEADER_BYTES - 1] === 0 && packet[HEADER_BYTES] === COM_QUERY
    ? packet.subarray(HEADER_BYTES + 1).toString('latin1')
    : undefined;
}

/**
 * A TCP relay in front of a MySQL server that stands in the way of the next COMMIT a client sends,
 * alone or at the end of a batch of statements (the next whose batch matches, when told):
 * it holds the COMMIT back for a while and then passes it on (the server commits late, as when it
 * hangs), or breaks the connection instead (the server rolls back). Everything else passes untouched.
 * It also counts the round trips of one request, on the connection that carried it, apart from what
 * the service does meanwhile in the background (its event handlers' steps).
 */
export class CommitGate {
  /** The text statements clients send while a request's round trips are counted: one round trip each. */
  private recording?: Query[];
  private connections = 0;
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

  /** Holds the next COMMIT whose batch matches back for `ms`; resolves once it has been passed on. */
  holdNextCommit(ms: number, matching = /./): Promise<void> {
    return this.arm({ kind: 'hold', ms }, matching);
  }

  /** Breaks the connection that sends the next COMMIT whose batch matches; it never reaches the server. */
  cutNextCommit(matching = /./): Promise<void> {
    return this.arm({ kind: 'cut' }, matching);
  }

  /**
   * The round trips `send` made on the connections that carried a statement holding `marker` (a value
   * only its request sends): what the request waited on, whatever else the service sent meanwhile.
   */
  async roundTripsOf(send: () => Promise<unknown>, marker: string | RegExp): Promise<number> {
    if (this.recording) throw new Error('The gate already counts a request');
    const sent: Query[] = [];
    this.recording = sent;
    try {
      await send();
    } finally {
      this.recording = undefined;
    }
    const carriers = new Set(
      sent
        .filter((query) =>
          typeof marker === 'string' ? query.text.includes(marker) : marker.test(query.text),
        )
        .map((query) => query.connection),
    );
    return sent.filter((query) => carriers.has(query.connection)).length;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private arm(action: Action, matching: RegExp): Promise<void> {
    if (this.armed) throw new Error('The gate already waits for a COMMIT');
    return new Promise((resolve) => {
      this.armed = { action, matching, done: resolve };
    });
  }

  private relay(client: Socket, host: string, port: number): void {
    const connection = ++this.connections;
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
        for (const packet of packets) await this.forward(connection, packet, client, upstream);
      });
    });
    client.once('end', () => void forwarding.then(() => upstream.end()));
  }

  private async forward(
    connection: number,
    packet: Buffer,
    client: Socket,
    upstream: Socket,
  ): Promise<void> {
    const text = statementOf(packet);
    if (text !== undefined) this.recording?.push({ connection, text });
    const armed = this.armed;
    if (!armed || text === undefined || !COMMITS.test(text) || !armed.matching.test(text)) {
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
