import { parse as parseContentType } from 'content-type';
import { type IncomingMessage } from 'node:http';
import getRawBody from 'raw-body';
import { type WireReader } from './wire-codec';
import { PayloadTooLargeError, UnsupportedMediaTypeError } from './wire-errors';
import { type WireFormats } from './wire-negotiation';

/** A request body read as text, with the reader that will parse it once the pipe knows the model. */
export class RawWireBody {
  constructor(
    readonly reader: WireReader,
    readonly text: string,
  ) {}
}

/** The request's media type, lower case and without parameters; `undefined` when absent or unreadable. */
export function requestMediaType(request: IncomingMessage): string | undefined {
  const header = request.headers['content-type'];
  if (!header) return undefined;
  try {
    return parseContentType(header).type;
  } catch {
    return undefined;
  }
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

/**
 * Reads the body of a request with the limit in force. The media type is checked first, so an
 * unsupported body is refused (415) without being read; `undefined` means the request has no body.
 */
export async function readWireBody(
  request: IncomingMessage,
  formats: WireFormats,
  limitBytes: number,
): Promise<RawWireBody | undefined> {
  const header = request.headers['content-type'];
  let mediaType: string | undefined;
  let charset: string | undefined;
  if (header) {
    try {
      const parsed = parseContentType(header);
      mediaType = parsed.type;
      charset = parsed.parameters.charset;
    } catch {
      throw new UnsupportedMediaTypeError(header.split(';')[0].trim().toLowerCase());
    }
  }
  const reader = mediaType === undefined ? undefined : formats.readerFor(mediaType);
  if (!hasBody(request)) {
    if (mediaType !== undefined && !reader) throw new UnsupportedMediaTypeError(mediaType);
    return undefined;
  }
  if (!reader) throw new UnsupportedMediaTypeError(mediaType ?? 'application/octet-stream');
  try {
    const text = await getRawBody(request, {
      length: request.headers['content-length'],
      limit: limitBytes,
      encoding: charset ?? 'utf-8',
    });
    return new RawWireBody(reader, text);
  } catch (error) {
    if (isReadError(error) && error.type === 'entity.too.large')
      throw new PayloadTooLargeError(limitBytes);
    if (isReadError(error) && error.type === 'encoding.unsupported') {
      throw new UnsupportedMediaTypeError(`${mediaType}; charset=${charset}`);
    }
    throw error;
  }
}
