import { connect, createServer, type Server, type Socket } from 'node:net';

/** Which way a chunk goes: from the client to the target, or back. */
export type RelayDirection = 'toTarget' | 'toClient';

/**
 * Decides what becomes of each chunk: `forward` sends it on (now, or later, in order); not calling it
 * drops it. Without one, every chunk is forwarded at once.
 */
export type ChunkHandler = (
  direction: RelayDirection,
  chunk: Buffer,
  forward: (chunk: Buffer) => void,
) => void;

/**
 * A TCP relay on 127.0.0.1 in front of a server (a broker, a database), for taking it away without
 * touching it: `cut` closes the open connections and refuses new ones, `restore` accepts them again
 * on the same port. The bench cuts the broker under load; the fault tests also mute and stall it.
 */
export class TcpRelay {
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** Relays to `host`:`targetPort` from a port of its own, listening once this resolves. */
  static async start(
    host: string,
    targetPort: number,
    onChunk: ChunkHandler = (_, chunk, forward) => forward(chunk),
  ): Promise<TcpRelay> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const relay = new TcpRelay(server, (server.address() as { port: number }).port);
    server.on('connection', (client) => {
      const target = connect({ host, port: targetPort });
      for (const socket of [client, target]) {
        relay.sockets.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => {
          relay.sockets.delete(socket);
          client.destroy();
          target.destroy();
        });
      }
      client.on('data', (chunk: Buffer) =>
        onChunk('toTarget', chunk, (forwarded) => target.write(forwarded)),
      );
      target.on('data', (chunk: Buffer) =>
        onChunk('toClient', chunk, (forwarded) => client.write(forwarded)),
      );
    });
    return relay;
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

  async close(): Promise<void> {
    if (this.server.listening) await this.cut();
    else for (const socket of this.sockets) socket.destroy();
  }
}
