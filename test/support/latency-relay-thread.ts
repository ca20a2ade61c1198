// A LatencyRelay's own thread: its delays run on an event loop of their own, as a network's do, so
// that a burst keeping the test's event loop busy does not also hold the answers on their way.
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';

/** Where the relay forwards to, and how long it holds each chunk each way. */
export interface RelayTarget {
  readonly host: string;
  readonly port: number;
  readonly delayMs: number;
}

const { host, port, delayMs } = workerData as RelayTarget;
const sockets = new Set<Socket>();
const server = createServer((client) => {
  const upstream = connect(port, host);
  for (const [from, to] of [
    [client, upstream],
    [upstream, client],
  ]) {
    sockets.add(from);
    // Timers of one delay fire in the order they were set: the stream keeps its order.
    from.on('data', (chunk: Buffer) => setTimeout(() => to.write(chunk), delayMs));
    from.on('close', () => {
      sockets.delete(from);
      setTimeout(() => to.destroy(), delayMs);
    });
    from.on('error', () => from.destroy());
  }
});
// The port it listens on is its first message; any message after closes it.
server.listen(0, '127.0.0.1', () =>
  parentPort?.postMessage((server.address() as AddressInfo).port),
);
parentPort?.once('message', () => {
  for (const socket of sockets) socket.destroy();
  server.close(() => parentPort?.close());
});
