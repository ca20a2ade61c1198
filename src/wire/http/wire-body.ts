import { type IncomingMessage } from 'node:http';
import { TextDecoder } from 'node:util';
import getRawBody from 'raw-body';
import { DomainError } from '../../common/domain-error';
import { type WireReader } from '../codecs/wire-codec';
import {
  MalformedBodyError,
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
} from '../model/wire-errors';
import { type WireFormats } from './wire-negotiation';
import { decodeUtf8AsDotNet } from '../values/dotnet-utf8';

/** A body's text and the encoding its bytes were read in. */
export interface BodyText {
  readonly text: string;
  readonly encoding: string;
}

/** A request body's bytes, with the reader that will parse them once the pipe knows the model. */
export class RawWireBody {
  constructor(
    readonly reader: WireReader,
    private readonly bytes: Buffer,
    private readonly charset: string | undefined,
  ) {}

  get byteLength(): number {
    return this.bytes.length;
  }

  /** The body as text, decoded as Web API did; throws MalformedBodyError when the bytes are not. */
  decode(): BodyText {
    return decodeBody(this.bytes, this.charset, this.reader);
  }
}

// RFC 7230's token and quoted-string, and the optional white space .NET's header parser skipped.
const TOKEN = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]+";
const QUOTED = '"(?:[^"\\\\]|\\\\.)*"';
const WS = '[ \\t]*';
const PARAMETER = `;${WS}(${TOKEN})(?:${WS}=${WS}(${TOKEN}|${QUOTED}))?${WS}`;
const PARAMETERS = new RegExp(PARAMETER, 'g');
const MEDIA_TYPE = new RegExp(`^${WS}(${TOKEN})${WS}/${WS}(${TOKEN})${WS}((?:${PARAMETER})*)$`);

export interface RequestMediaType {
  /** Lower case, without parameters. */
  readonly type: string;
  /** The charset parameter's value, unquoted: what the body is decoded by. */
  readonly charset?: string;
  /** The same as written, quotes included, as .NET's MediaTypeHeaderValue.CharSet gave it. */
  readonly declaredCharset?: string;
}

/**
 * The request's Content-Type as .NET's MediaTypeHeaderValue read it, more leniently than RFC 7231:
 * white space around the slash, and parameters without a value (`application/json; charset`) were
 * fine. The charset is the first `charset` parameter's value, unquoted. `undefined` when absent or
 * unreadable.
 */
export function requestContentType(request: IncomingMessage): RequestMediaType | undefined {
  const header = request.headers['content-type'];
  const match = header === undefined ? null : MEDIA_TYPE.exec(header);
  if (!match) return undefined;
  const charset = [...match[3].matchAll(PARAMETERS)].find(
    ([, name]) => name.toLowerCase() === 'charset',
  )?.[2];
  return {
    type: `${match[1]}/${match[2]}`.toLowerCase(),
    charset: charset?.startsWith('"') ? charset.slice(1, -1).replace(/\\(.)/g, '$1') : charset,
    declaredCharset: charset,
  };
}

/** The request's media type, lower case and without parameters; `undefined` when absent or unreadable. */
export function requestMediaType(request: IncomingMessage): string | undefined {
  return requestContentType(request)?.type;
}

function hasBody(request: IncomingMessage): boolean {
  return (
    request.headers['transfer-encoding'] !== undefined ||
    Number(request.headers['content-length'] ?? 0) > 0
  );
}

function isReadError(error: unknown): error is { type: string } {
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { type?: unknown }).type === 'string'
  );
}

/** The slowest a body may arrive: on average since it started, checked once the grace period is over. */
export interface BodyRate {
  /** 0 sets no minimum. */
  readonly minBodyBytesPerSecond: number;
  readonly bodyRateGraceMs: number;
}

export class BodyTooSlowError extends DomainError {
  static readonly status = 408;
  static readonly description = 'The request body arrived too slowly; the connection is closed.';
  readonly code = 'request_timeout';
  readonly title = 'Request timeout';
  constructor(minBytesPerSecond: number) {
    // The rest of the body is never read: the connection cannot carry another request.
    super(`The request body arrived slower than ${minBytesPerSecond} bytes per second.`, {
      Connection: 'close',
    });
  }
}

/**
 * The body's bytes, refused with BodyTooSlowError when they arrive slower than the rate: a client
 * trickling a body would otherwise hold its connection and its request for the whole request timeout.
 */
async function readAtRate(
  request: IncomingMessage,
  limitBytes: number,
  rate: BodyRate,
): Promise<Buffer> {
  const reading = getRawBody(request, {
    length: request.headers['content-length'],
    limit: limitBytes,
  });
  const { minBodyBytesPerSecond: minimum, bodyRateGraceMs: graceMs } = rate;
  if (minimum === 0) return reading;
  // Once the body is refused, the read ends in an error when the connection closes: nobody waits for it.
  reading.catch(() => undefined);
  const started = Date.now();
  let received = 0;
  const count = (chunk: Buffer) => (received += chunk.length);
  request.on('data', count);
  let timer: NodeJS.Timeout | undefined;
  const tooSlow = new Promise<never>((_, reject) => {
    const check = () => {
      const expected = (minimum * (Date.now() - started)) / 1000;
      if (received < expected) reject(new BodyTooSlowError(minimum));
      else timer = setTimeout(check, 1000);
    };
    timer = setTimeout(check, graceMs);
  });
  try {
    return await Promise.race([reading, tooSlow]);
  } finally {
    clearTimeout(timer);
    request.off('data', count);
  }
}

/**
 * Reads the body of a request, of the Content-Type read by `requestContentType`, with the limit and
 * the minimum rate in force. The media type is checked first, so an unsupported body is refused (415)
 * without being read; `undefined` means the request has no body.
 */
export async function readWireBody(
  request: IncomingMessage,
  contentType: RequestMediaType | undefined,
  formats: WireFormats,
  limitBytes: number,
  rate: BodyRate,
): Promise<RawWireBody | undefined> {
  // Absent, empty or unreadable: Web API inferred application/octet-stream.
  const { type: mediaType, charset } = contentType ?? {};
  const reader = mediaType === undefined ? undefined : formats.readerFor(mediaType);
  if (!hasBody(request)) {
    if (mediaType !== undefined && !reader) throw new UnsupportedMediaTypeError(mediaType);
    return undefined;
  }
  if (!reader) throw new UnsupportedMediaTypeError(mediaType);
  try {
    const bytes = await readAtRate(request, limitBytes, rate);
    return new RawWireBody(reader, bytes, charset);
  } catch (error) {
    if (isReadError(error) && error.type === 'entity.too.large')
      throw new PayloadTooLargeError(limitBytes);
    throw error;
  }
}

function byteOrderMark(bytes: Buffer): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return undefined;
}

/** The encodings a strict reader knows, decoders reused (a decode without `stream` starts afresh). */
const STRICT_DECODERS = new Map(
  ['utf-8', 'utf-16le', 'utf-16be'].map((label) => [
    label,
    new TextDecoder(label, { fatal: true }),
  ]),
);

/** UTF-16 decoders that replace a lone surrogate, as .NET's replacing decoders did. */
const REPLACING_DECODERS = new Map(
  ['utf-16le', 'utf-16be'].map((label) => [label, new TextDecoder(label)]),
);

/**
 * A body's text as Web API decoded it. Web API's form parser read every body as UTF-8, whatever its
 * charset or byte order mark said, replacing what does not decode as .NET did. A strict reader, as the
 * JSON and XML formatters were, knows UTF-8 and UTF-16 only: it reads the body by its byte order mark
 * (which is not part of the text), else as UTF-16 for `charset=utf-16`, else as UTF-8, and bytes that
 * are not text in the encoding refuse the body, unless the reader replaces them after a byte order
 * mark.
 */
function decodeBody(
  bytes: Buffer,
  charset: string | undefined,
  { strictEncodings: strict = false, replacesAfterByteOrderMark = false }: WireReader,
): BodyText {
  if (!strict) return { text: decodeUtf8AsDotNet(bytes), encoding: 'utf-8' };
  const named = charset?.toLowerCase();
  const marked = byteOrderMark(bytes);
  // The StreamReader kept the formatter's own encoding when the mark was that encoding's preamble,
  // which only its UTF-16 (little-endian, with a preamble) has.
  const ownPreamble = named === 'utf-16' && marked === 'utf-16le';
  if (marked && replacesAfterByteOrderMark && !ownPreamble) {
    if (marked !== 'utf-8')
      return { text: REPLACING_DECODERS.get(marked)!.decode(bytes), encoding: marked };
    return { text: decodeUtf8AsDotNet(bytes.subarray(3)), encoding: marked };
  }
  const encoding = marked ?? (named === 'utf-16' ? 'utf-16le' : 'utf-8');
  const decoder = STRICT_DECODERS.get(encoding)!;
  try {
    return { text: decoder.decode(bytes), encoding: decoder.encoding };
  } catch {
    throw new MalformedBodyError(`The request body is not ${decoder.encoding.toUpperCase()} text.`);
  }
}
