import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { type HttpResult } from './http-assertions';

/** One GET of a burst: where it goes, and its headers (a credential). */
export interface BurstRequest {
  readonly baseUrl: string;
  readonly path: string;
  readonly headers: Record<string, string>;
}

/** Everything a connection received until the server ended it, as an answer. */
function answerOf(received: Buffer): HttpResult {
  const end = received.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`The connection ended before a whole head: ${received.toString()}`);
  const [statusLine, ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
    }),
  );
  // The body is read to the connection's end, so it must not be chunked.
  if (headers['transfer-encoding']) throw new Error(`A chunked answer: ${statusLine}`);
  return {
    status: Number(statusLine.split(' ')[1]),
    headers,
    text: received.subarray(end + 4).toString('utf8'),
  };
}

/** A connection to the service, once connected, and its answer once the service ends it. */
async function open(baseUrl: string): Promise<{ socket: Socket; answer: Promise<HttpResult> }> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  const answer = once(socket, 'end').then(() => answerOf(Buffer.concat(chunks)));
  // A connection that fails before it connects rejects the connect below, which reports it.
  answer.catch(() => undefined);
  await once(socket, 'connect');
  return { socket, answer };
}

/**
 * Sends the requests truly at once, as a guesser with open connections does: a connection per request
 * is opened first, and only once every one is connected is each request written, whole and in order,
 * so that they reach the service together rather than as fast as connections open. Each says
 * `Connection: close`, so its answer ends with its connection. The answers come in the requests' order.
 */
export async function sendAtOnce(requests: readonly BurstRequest[]): Promise<HttpResult[]> {
  const connections = await Promise.all(requests.map(({ baseUrl }) => open(baseUrl)));
  requests.forEach(({ path, headers }, index) => {
    const lines = Object.entries({ Host: 'service', ...headers, Connection: 'close' }).map(
      ([name, value]) => `${name}: ${value}`,
    );
    connections[index].socket.write([`GET ${path} HTTP/1.1`, ...lines, '', ''].join('\r\n'));
  });
  try {
    return await Promise.all(connections.map(({ answer }) => answer));
  } finally {
    for (const { socket } of connections) socket.destroy();
  }
}
