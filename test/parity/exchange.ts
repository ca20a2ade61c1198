import { request as httpRequest } from 'node:http';

/**
 * A request exactly as sent: the path as written, no header added but Host and Content-Length (or
 * chunked transfer coding, as .NET's HttpClient sends an object it serializes as it goes).
 */
export interface ParityRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  /** The body's bytes in this encoding rather than UTF-8. */
  readonly encoding?: 'latin1' | 'utf16le';
  readonly chunked?: boolean;
}

/** What a service answered, as the parity suite compares it. */
export interface ParityAnswer {
  readonly status: number;
  /** The Content-Type header, as sent; `null` when there is none. */
  readonly contentType: string | null;
  /** The Allow header of a 405. */
  readonly allow?: string;
  /** A success body, as text, without its byte order mark. */
  readonly body?: string;
  /** The body began with a byte order mark (a UTF-16 answer). */
  readonly byteOrderMark?: true;
  /** An error's legacy `Message`, with the service's own base URL taken out. */
  readonly message?: string;
  /** An error's ModelState keys, sorted. */
  readonly modelStateKeys?: readonly string[];
}

interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly bytes: Buffer;
}

/** Sends the request byte for byte as described; the answer's body as it came. */
function send(baseUrl: string, request: ParityRequest): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  const body =
    request.body === undefined ? undefined : Buffer.from(request.body, request.encoding ?? 'utf8');
  const headers: Record<string, string> = { ...request.headers };
  if (body && !request.chunked) headers['Content-Length'] = String(body.length);
  return new Promise((resolve, reject) => {
    let answered: (() => void) | undefined;
    const outgoing = httpRequest(
      { hostname, port, method: request.method, path: request.path, headers },
      (response) => {
        const chunks: Buffer[] = [];
        answered = () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            bytes: Buffer.concat(chunks),
          });
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', answered);
      },
    );
    // The twin's HttpListener follows a 204 to a chunked request with a stray last-chunk, which
    // Node's parser rejects after the answer is complete.
    outgoing.on('error', (error) => (answered ? answered() : reject(error)));
    if (body && request.chunked) {
      // In pieces, so that the reader really meets several chunks.
      for (let start = 0; start < body.length; start += 256)
        outgoing.write(body.subarray(start, start + 256));
    } else if (body) {
      outgoing.write(body);
    }
    outgoing.end();
  });
}

const XML_ENTITIES: Readonly<Record<string, string>> = {
  lt: '<',
  gt: '>',
  amp: '&',
  quot: '"',
  apos: "'",
};

const xmlText = (text: string) =>
  text.replace(/&(\w+);/g, (entity, name: string) => XML_ENTITIES[name] ?? entity);

/** XmlConvert.DecodeName: `transaction.requirements_x005B_0_x005D_.x` back to its ModelState key. */
const decodeLocalName = (name: string) =>
  name.replace(/_x([0-9A-F]{4,8})_/g, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16)));

/** The legacy members of an error body, JSON or XML; any other body is its own message. */
function legacyError(text: string): { message?: string; keys: string[] } {
  if (text.startsWith('<Error>')) {
    const message = /<Message>([^<]*)<\/Message>/.exec(text)?.[1];
    const modelState = /<ModelState>(.*)<\/ModelState>/s.exec(text)?.[1] ?? '';
    const keys = [...modelState.matchAll(/<([^/>\s]+)>/g)].map((match) =>
      decodeLocalName(match[1]),
    );
    return { message: message === undefined ? undefined : xmlText(message), keys };
  }
  try {
    const body = JSON.parse(text) as { Message?: string; ModelState?: Record<string, unknown> };
    return { message: body.Message, keys: Object.keys(body.ModelState ?? {}) };
  } catch {
    return { message: text, keys: [] };
  }
}

/** A body's text in the charset its Content-Type declares (UTF-16 or UTF-8), and its byte order mark. */
function bodyText(bytes: Buffer, contentType: string | null): { text: string; bom: boolean } {
  const decoded = bytes.toString(/charset=utf-16/i.test(contentType ?? '') ? 'utf16le' : 'utf8');
  const bom = decoded.startsWith('\uFEFF');
  return { text: bom ? decoded.slice(1) : decoded, bom };
}

/** Sends a request and reduces the answer to what the suite compares. */
export async function exchange(baseUrl: string, request: ParityRequest): Promise<ParityAnswer> {
  const { status, headers, bytes } = await send(baseUrl, request);
  const contentType = typeof headers['content-type'] === 'string' ? headers['content-type'] : null;
  const allow = typeof headers.allow === 'string' ? headers.allow : undefined;
  const { text, bom } = bodyText(bytes, contentType);
  const byteOrderMark = bom && { byteOrderMark: true as const };
  if (status < 400)
    return { status, contentType, ...(allow && { allow }), ...byteOrderMark, body: text };
  const { message, keys } = legacyError(text);
  return {
    status,
    contentType,
    ...(allow && { allow }),
    ...byteOrderMark,
    message: message?.replaceAll(baseUrl, ''),
    modelStateKeys: [...new Set(keys)].sort(),
  };
}

/**
 * The members this service adds to the legacy's records, as its writers write them: a Transaction's
 * read-only `row_version`, last in JSON and between `reservationdate` and `salesagentid` in XML. A
 * legacy reader ignores an added member; the suite compares the rest of each body byte for byte.
 */
const ADDED_MEMBERS: readonly RegExp[] = [
  /,"row_version":(?:\d+|null)(?=\})/g,
  /<row_version>\d+<\/row_version>|<row_version i:nil="true" \/>/g,
];

/** This service's answer without the members it adds to the legacy's records. */
export function withoutAddedMembers(answer: ParityAnswer): ParityAnswer {
  if (answer.body === undefined) return answer;
  const body = ADDED_MEMBERS.reduce((text, member) => text.replace(member, ''), answer.body);
  return { ...answer, body };
}

/**
 * A GetTransaction answer as member values written back as JSON text, so that `25000.0` and `25000`
 * compare equal; for a record UpdateAgents `changed`, without its own `stamp` (the time of the
 * change, which differs between runs). Any other answer as it is.
 */
export function recordValues(answer: ParityAnswer, record: 'as stored' | 'changed'): ParityAnswer {
  if (answer.body === undefined || answer.status !== 200) return answer;
  const values = JSON.parse(answer.body) as Record<string, unknown>;
  if (record === 'changed') delete values.stamp;
  return { ...answer, body: JSON.stringify(values) };
}
