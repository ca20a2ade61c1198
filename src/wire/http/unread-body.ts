import { type IncomingMessage, type ServerResponse } from 'node:http';

/**
 * How long a connection closed under an unread body keeps reading (and discarding) what the client
 * still sends after the answer: closing at once, with bytes unread, resets the connection, and a
 * reset can reach the client before the answer does.
 */
export const LINGER_MS = 2_000;

/** What bounds the reading of a body the answer did not need. */
export interface DrainLimits {
  /** The longest rest read and discarded; a longer one closes the connection. */
  readonly drainLimitBytes: number;
  /** How long the rest may take to arrive before the connection is closed anyway. */
  readonly requestTimeoutMs: number;
}

/**
 * Settles the connection of an error answer. One that `closes` says `Connection: close`, and its
 * connection ends after it. Otherwise an answer sent before its request's body was read whole (415, a
 * 400 on the headers) leaves its connection fit for the next request, and says so in its headers: a
 * rest of known length up to `drainLimitBytes` is read and discarded after the answer (`Connection:
 * keep-alive`), within `requestTimeoutMs` or else the connection is closed; a longer rest, or one of
 * unknown length (chunked), closes the connection. A connection closed under an unread rest ends
 * after a linger. Call it before the answer is sent.
 */
export function settleUnreadBody(
  request: IncomingMessage,
  response: ServerResponse,
  { drainLimitBytes, requestTimeoutMs }: DrainLimits,
  closes: boolean,
): void {
  // Node ends the connection once an answer saying so is out.
  if (closes) response.setHeader('Connection', 'close');
  // Read whole, or its connection gone (the client left mid-body): nothing left to read or to wait for.
  if (request.complete || request.readableEnded || request.destroyed) return;
  const length = request.headers['content-length'];
  const rest = length === undefined ? undefined : Number(length);
  // What was read of it (a limit crossed midway) only shortens the rest.
  const drains = !closes && rest !== undefined && rest <= drainLimitBytes;
  const { socket } = request;
  if (drains) {
    response.setHeader('Connection', 'keep-alive');
    const deadline = setTimeout(() => socket.destroy(), requestTimeoutMs);
    request.once('end', () => clearTimeout(deadline));
    request.once('close', () => clearTimeout(deadline));
  } else {
    response.setHeader('Connection', 'close');
    // Node closes a connection answered with Connection: close at once: instead, end it (the client
    // reads the answer, then the end) and keep discarding what arrives until the client closes too.
    socket.destroySoon = () => {
      socket.end();
      setTimeout(() => socket.destroy(), LINGER_MS).unref();
    };
  }
  // Discards what arrives: nothing listens for the body any more.
  request.removeAllListeners('data');
  request.resume();
}
