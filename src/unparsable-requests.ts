import { type Server, STATUS_CODES } from 'node:http';
import { type Socket } from 'node:net';
import { JsonCodec } from './wire';

/** What Node's HTTP parser raises for a request it cannot read: its llhttp code, if any. */
interface ParseError extends Error {
  readonly code?: string;
}

interface Refusal {
  readonly status: number;
  readonly message: string;
}

const BAD_REQUEST = 400;

const REFUSALS: Readonly<Record<string, Refusal>> = {
  HPE_INVALID_METHOD: {
    status: BAD_REQUEST,
    message:
      'The request method is not one HTTP defines: methods are case-sensitive, so send POST or GET in upper case.',
  },
  // Both framing headers at once is how a request is smuggled past a gateway: never read.
  HPE_UNEXPECTED_CONTENT_LENGTH: {
    status: BAD_REQUEST,
    message: 'The request carries both Content-Length and Transfer-Encoding: send one of them.',
  },
  HPE_INVALID_CONTENT_LENGTH: {
    status: BAD_REQUEST,
    message:
      'The request Content-Length must be one number, and must not come with Transfer-Encoding.',
  },
  HPE_INVALID_TRANSFER_ENCODING: {
    status: BAD_REQUEST,
    message:
      'The request Transfer-Encoding must end in chunked, and must not come with Content-Length.',
  },
  HPE_HEADER_OVERFLOW: {
    status: 431,
    message: 'The request head is larger than this service reads.',
  },
  HPE_CHUNK_EXTENSIONS_OVERFLOW: {
    status: 413,
    message: 'The request body carries more chunk extensions than this service reads.',
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    message: 'The request did not arrive within the time this service waits for it.',
  },
};

const MALFORMED: Refusal = { status: BAD_REQUEST, message: 'The request is not well-formed HTTP.' };

const json = new JsonCodec();

/** The whole answer to a refused request, head and body, ready to write to the socket. */
function answerTo({ status, message }: Refusal): string {
  const title = STATUS_CODES[status] ?? 'Error';
  const body = json.encodeError({ status, code: `http_${status}`, title, message });
  return (
    `HTTP/1.1 ${status} ${title}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}

const ANSWERS: ReadonlyMap<string | undefined, string> = new Map(
  Object.entries(REFUSALS).map(([code, refusal]) => [code, answerTo(refusal)]),
);
const MALFORMED_ANSWER = answerTo(MALFORMED);

/**
 * A request Node's parser cannot read is answered as Node answers it (the same status, the
 * connection closed, since what follows on it cannot be framed), with a body saying why. The parser
 * stays strict: a request with both Content-Length and Transfer-Encoding is refused, so no gateway in
 * front can be made to frame a request differently from this service (request smuggling).
 */
export function answerUnparsableRequests(server: Server): void {
  server.on('clientError', (error: ParseError, socket: Socket) => {
    // A connection reset, or one already answering, has no one left to tell. The answer is small
    // enough for the socket's send buffer, so the connection is closed as soon as it is handed over,
    // whether or not the client reads it.
    if (socket.writable && socket.bytesWritten === 0)
      socket.end(ANSWERS.get(error.code) ?? MALFORMED_ANSWER, () => socket.destroy());
    else socket.destroy();
  });
}
