/**
 * What a credential's value becomes: a valid query value, as OpenTelemetry's semantic conventions
 * write a redacted one.
 */
export const REDACTED = 'REDACTED';

/**
 * Query parameters that carry credentials: API keys, OAuth 2.0 and OpenID Connect tokens, codes and
 * client secrets, passwords, session ids, and the signatures of signed URLs (AWS, Google Cloud,
 * Azure). Compared as comparableName reads them, so `api_key` also stands for `apiKey` and `API-KEY`.
 */
export const CREDENTIAL_PARAMETERS: readonly string[] = [
  'access_token',
  'api_key',
  'auth',
  'auth_token',
  'authorization',
  'client_assertion',
  'client_secret',
  'code',
  'id_token',
  'jwt',
  'key',
  'passwd',
  'password',
  'pwd',
  'refresh_token',
  'secret',
  'session_id',
  'sig',
  'signature',
  'token',
  'x-api-key',
  'X-Amz-Credential',
  'X-Amz-Security-Token',
  'X-Amz-Signature',
  'X-Goog-Credential',
  'X-Goog-Signature',
];

/**
 * A parameter's name as names are compared: percent-decoded, before any `[` (`key[]`, as qs reads
 * arrays), in lower case, without `-`, `_` and `.`.
 */
function comparableName(name: string): string {
  let decoded = name;
  if (name.includes('%')) {
    try {
      decoded = decodeURIComponent(name);
    } catch {
      // A malformed escape: the name as sent, which is what the client would have meant by it.
    }
  }
  const bracket = decoded.indexOf('[');
  return (bracket < 0 ? decoded : decoded.slice(0, bracket)).toLowerCase().replace(/[-_.]/g, '');
}

/**
 * Replaces the values of credential parameters in URLs, for the request log and the trace spans. A
 * client may send a key or a token in the query string (`?api_key=`, `?access_token=`): the service
 * never reads it there and refuses the request, but the URL would still be recorded. The name stays,
 * so that an operator sees a credential was sent; the rest of the URL is kept byte for byte. Linear in
 * the URL's length: one pass over it, each name read once.
 */
export class QueryRedaction {
  private readonly names: ReadonlySet<string>;

  /** @param configured Names to redact besides CREDENTIAL_PARAMETERS (LOG_REDACT_QUERY_PARAMETERS). */
  constructor(configured: readonly string[]) {
    this.names = new Set(
      [...CREDENTIAL_PARAMETERS, ...configured]
        .map((name) => comparableName(name.trim()))
        .filter(Boolean),
    );
  }

  /** A request target (`/path?query`) with its query redacted. */
  url(url: string): string {
    const start = url.indexOf('?');
    return start < 0 ? url : url.slice(0, start + 1) + this.query(url.slice(start + 1));
  }

  /** A query string, without its `?`, with the value of each credential parameter redacted. */
  query(query: string): string {
    let redacted = '';
    // The first `=` at or after the current pair, sought again only once a pair is past it: a search
    // for each pair would read `a&a&…&a=` to its end each time.
    let equals = -1;
    for (let start = 0; start <= query.length;) {
      const ampersand = query.indexOf('&', start);
      const end = ampersand < 0 ? query.length : ampersand;
      if (equals < start) {
        const next = query.indexOf('=', start);
        equals = next < 0 ? Infinity : next;
      }
      redacted +=
        equals < end && this.names.has(comparableName(query.slice(start, equals)))
          ? `${query.slice(start, equals + 1)}${REDACTED}`
          : query.slice(start, end);
      if (ampersand >= 0) redacted += '&';
      start = end + 1;
    }
    return redacted;
  }
}
