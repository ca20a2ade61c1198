/**
 * `Accept` and `Accept-Charset` as .NET's typed headers (System.Net.Http's HttpRuleParser) read them.
 * A header is read whole or not at all: one item .NET could not parse made the whole header count as
 * absent, which is what Web API then negotiated on (`Accept: application/xml, *; q=.2` from Java's
 * HttpURLConnection gets the answer of a request without Accept). Read by hand, in one pass.
 */

/** One media range of an Accept header, its type and subtype lower case. */
export interface MediaRange {
  readonly type: string;
  readonly subtype: string;
  readonly q: number;
}

/** One item of an Accept-Charset header, as written. */
export interface CharsetRange {
  readonly charset: string;
  readonly q: number;
}

const TOKEN_PUNCTUATION = "!#$%&'*+-.^_`|~";
const isTokenCharacter = (character: string) =>
  (character >= '0' && character <= '9') ||
  (character >= 'A' && character <= 'Z') ||
  (character >= 'a' && character <= 'z') ||
  TOKEN_PUNCTUATION.includes(character);
const isDigit = (character: string) => character >= '0' && character <= '9';

/** A cursor over one header value, with the pieces of RFC 7230's grammar .NET read. */
class HeaderScanner {
  private at = 0;

  constructor(private readonly text: string) {}

  get atEnd(): boolean {
    return this.at === this.text.length;
  }

  /** Takes the character when it is next. */
  take(character: string): boolean {
    if (this.text[this.at] !== character) return false;
    this.at++;
    return true;
  }

  /** Optional white space: spaces and tabs. */
  skipSpace(): void {
    while (this.text[this.at] === ' ' || this.text[this.at] === '\t') this.at++;
  }

  /** A token, or undefined when none starts here. */
  token(): string | undefined {
    const start = this.at;
    while (this.at < this.text.length && isTokenCharacter(this.text[this.at])) this.at++;
    return this.at > start ? this.text.slice(start, this.at) : undefined;
  }

  /** A quoted string with its quotes, or undefined when none starts here or it never ends. */
  quoted(): string | undefined {
    if (this.text[this.at] !== '"') return undefined;
    for (let at = this.at + 1; at < this.text.length; at++) {
      if (this.text[at] === '\\' && at + 2 < this.text.length) at++;
      else if (this.text[at] === '"') {
        const quoted = this.text.slice(this.at, at + 1);
        this.at = at + 1;
        return quoted;
      }
    }
    return undefined;
  }

  /** Digits with at most one decimal point, not starting with it (RFC 7231's qvalue, loosely). */
  number(): string | undefined {
    if (this.text[this.at] === '.') return undefined;
    const start = this.at;
    let point = false;
    for (; this.at < this.text.length; this.at++) {
      const character = this.text[this.at];
      if (character === '.' && !point) point = true;
      else if (!isDigit(character)) break;
    }
    return this.at > start ? this.text.slice(start, this.at) : undefined;
  }

  /** Skips white space and commas: empty items, which .NET skipped. */
  skipEmptyItems(): void {
    do this.skipSpace();
    while (this.take(','));
  }

  /** Skips to the next item; false when something else than a comma follows an item. */
  nextItem(): boolean {
    this.skipSpace();
    if (this.atEnd) return true;
    if (this.text[this.at] !== ',') return false;
    this.skipEmptyItems();
    return true;
  }
}

/**
 * A media range's q as MediaTypeWithQualityHeaderValue.Quality read it, with double.TryParse and only
 * a decimal point allowed: `.2` is 0.2 and 1.5 is 1.5; anything else (`abc`, `"0.5"`, `-1`, `1e-1`, a
 * q without value) is no q at all, which Web API read as 1.
 */
function mediaRangeQuality(value: string | undefined): number {
  if (value === undefined) return 1;
  let digits = 0;
  let points = 0;
  for (const character of value) {
    if (isDigit(character)) digits++;
    else if (character === '.') points++;
    else return 1;
  }
  return digits > 0 && points <= 1 ? Number(value) : 1;
}

/**
 * The ranges of an Accept header, in header order; undefined when an item is not `type/subtype` with
 * `;name` or `;name=token-or-quoted-string` parameters (a bare `*`, `foo/bar/baz`, a trailing `;`,
 * `q=` without a value): the header then counts as absent. The first `q` parameter is the range's.
 */
export function parseAccept(header: string): MediaRange[] | undefined {
  const scanner = new HeaderScanner(header);
  const ranges: MediaRange[] = [];
  scanner.skipEmptyItems();
  while (!scanner.atEnd) {
    const type = scanner.token();
    scanner.skipSpace();
    if (type === undefined || !scanner.take('/')) return undefined;
    scanner.skipSpace();
    const subtype = scanner.token();
    if (subtype === undefined) return undefined;
    scanner.skipSpace();
    let q: number | undefined;
    while (scanner.take(';')) {
      scanner.skipSpace();
      const name = scanner.token();
      if (name === undefined) return undefined;
      scanner.skipSpace();
      let value: string | undefined;
      if (scanner.take('=')) {
        scanner.skipSpace();
        value = scanner.quoted() ?? scanner.token();
        if (value === undefined) return undefined;
        scanner.skipSpace();
      }
      if (q === undefined && name.toLowerCase() === 'q') q = mediaRangeQuality(value);
    }
    ranges.push({ type: type.toLowerCase(), subtype: subtype.toLowerCase(), q: q ?? 1 });
    if (!scanner.nextItem()) return undefined;
  }
  return ranges;
}

/**
 * The items of an Accept-Charset header, in header order; undefined when an item is not a token with
 * at most a `;q=` between 0 and 1 written as digits (`.5`, `1.5`, `q=abc`, another parameter, a quoted
 * charset): the header then counts as absent.
 */
export function parseAcceptCharset(header: string): CharsetRange[] | undefined {
  const scanner = new HeaderScanner(header);
  const ranges: CharsetRange[] = [];
  scanner.skipEmptyItems();
  while (!scanner.atEnd) {
    const charset = scanner.token();
    if (charset === undefined) return undefined;
    scanner.skipSpace();
    let q = 1;
    if (scanner.take(';')) {
      scanner.skipSpace();
      if (!scanner.take('q') && !scanner.take('Q')) return undefined;
      scanner.skipSpace();
      if (!scanner.take('=')) return undefined;
      scanner.skipSpace();
      const value = scanner.number();
      if (value === undefined) return undefined;
      q = Number(value);
      if (q > 1) return undefined;
    }
    ranges.push({ charset, q });
    if (!scanner.nextItem()) return undefined;
  }
  return ranges;
}
