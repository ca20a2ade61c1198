import { type DocumentQuotas, REQUEST_QUOTAS } from './wire-codec';
import { MalformedBodyError } from '../model/wire-errors';

/** A JSON number exactly as written (`0.50000000000000001`, `0x1A`, `012`, `.5`), for the binder to read. */
export class JsonNumeral {
  constructor(readonly text: string) {}
}

// Json.NET's reader writes numbers in full; a double carries 15 significant digits safely.
const LONG_NUMERAL = /\d(?:\.?\d){15}/;

/**
 * Reads a JSON document the way Json.NET 6's reader did, within the quotas. Valid JSON takes the fast
 * path through `JSON.parse`; only text it refuses, or whose numerals a double cannot carry exactly,
 * goes through the lenient reader below. Either way the first value is the document; content after it
 * is ignored.
 */
export function readJsonDocument(text: string, quotas = REQUEST_QUOTAS): unknown {
  checkQuotas(text, quotas);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return new LenientJsonReader(text, quotas.maxDepth).readDocument();
  }
  if (LONG_NUMERAL.test(text)) return new LenientJsonReader(text, quotas.maxDepth).readDocument();
  return parsed;
}

/**
 * Reads standard JSON only, as NestJS's body parser does (numbers as doubles), within the quotas: for
 * plain DTOs, which keep the framework's reading rather than Json.NET's.
 */
export function readStandardJsonDocument(text: string, quotas = REQUEST_QUOTAS): unknown {
  checkQuotas(text, quotas);
  try {
    return JSON.parse(text);
  } catch {
    // The parser's own message quotes the body; the client has it already.
    throw new MalformedBodyError('The request body is not valid JSON.');
  }
}

const tooDeep = (maxDepth: number) =>
  new MalformedBodyError(`The request body is nested deeper than ${maxDepth} levels.`);

const QUOTE = 0x22;
const APOSTROPHE = 0x27;
const SLASH = 0x2f;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const BACKSLASH = 0x5c;

/**
 * Counts nesting, and members and array items (each an element to .NET's JSON reader), in one pass
 * over the text before any parser builds an object from it, and refuses the document past the quotas.
 * It reads the lenient syntax too (strings in either quote, comments), which valid JSON is a part of,
 * and stops where the first value ends, as the readers do.
 */
function checkQuotas(text: string, { maxDepth, maxElements }: DocumentQuotas): void {
  // Whether each open container is an array, innermost last.
  const inArray: boolean[] = [];
  let elements = 0;
  const count = () => {
    if (++elements > maxElements)
      throw new MalformedBodyError(
        `The request body holds more than ${maxElements} members and items.`,
      );
  };
  for (let at = 0; at < text.length; at++) {
    switch (text.charCodeAt(at)) {
      case QUOTE:
      case APOSTROPHE:
        at = stringEnd(text, at);
        break;
      case SLASH:
        at = commentEnd(text, at);
        break;
      case COLON:
        count();
        break;
      case COMMA:
        if (inArray[inArray.length - 1]) count();
        break;
      case OPEN_BRACE:
        if (inArray.length === maxDepth) throw tooDeep(maxDepth);
        inArray.push(false);
        break;
      case OPEN_BRACKET:
        if (inArray.length === maxDepth) throw tooDeep(maxDepth);
        inArray.push(true);
        // An array's first item, or the empty array itself.
        count();
        break;
      case CLOSE_BRACE:
      case CLOSE_BRACKET:
        inArray.pop();
        if (inArray.length === 0) return;
        break;
    }
  }
}

/**
 * The first `quote` from `from` on that no backslash escapes (an odd run of backslashes right before
 * it does), or -1 when the text holds none: where a string of either quote ends.
 */
export function closingQuote(text: string, quote: '"' | "'", from: number): number {
  for (let at = from; ;) {
    const end = text.indexOf(quote, at);
    if (end < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return end;
    at = end + 1;
  }
}

/** Where the string opened by the quote at `start` ends (its closing quote), or the text's end. */
function stringEnd(text: string, start: number): number {
  const end = closingQuote(text, text[start] as '"' | "'", start + 1);
  return end < 0 ? text.length : end;
}

/** Where the comment starting at `start`, if one does, ends (its last character). */
function commentEnd(text: string, start: number): number {
  const next = text[start + 1];
  if (next === '/') {
    const end = text.indexOf('\n', start);
    return end < 0 ? text.length : end;
  }
  if (next === '*') {
    const end = text.indexOf('*/', start + 2);
    return end < 0 ? text.length : end + 1;
  }
  return start;
}

const ESCAPES: Record<string, string> = {
  '"': '"',
  "'": "'",
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

// What Json.NET reads as a bare word: a number's characters, a literal, or an unquoted member name.
const WORD = /[A-Za-z0-9_$.+-]*/y;
const WHITESPACE = /\s*/y;

/**
 * Json.NET's lenient syntax: `//` and `/* *\/` comments, trailing commas, single-quoted strings,
 * unquoted member names, and numerals kept as their text (hexadecimal, octal, `.5`, `5.`).
 */
class LenientJsonReader {
  private at = 0;
  // Where the next backslash is, kept between searches so that the text is searched once, in linear
  // time, however many escapes and strings it holds.
  private nextEscape = -1;

  constructor(
    private readonly text: string,
    private readonly maxDepth: number,
  ) {}

  readDocument(): unknown {
    return this.readValue(0);
  }

  private fail(reason: string): never {
    throw new MalformedBodyError(`The request body is not valid JSON: ${reason} at ${this.at}.`);
  }

  /** Skips white space and comments; the next character, or '' at the end. */
  private peek(): string {
    for (;;) {
      this.at = this.skip(WHITESPACE);
      const character = this.text[this.at] ?? '';
      if (character === '/' && this.text[this.at + 1] === '/') {
        const end = this.text.indexOf('\n', this.at);
        this.at = end < 0 ? this.text.length : end + 1;
      } else if (character === '/' && this.text[this.at + 1] === '*') {
        const end = this.text.indexOf('*/', this.at + 2);
        if (end < 0) this.fail('unterminated comment');
        this.at = end + 2;
      } else return character;
    }
  }

  private readValue(depth: number): unknown {
    const character = this.peek();
    if (character === '{' || character === '[') {
      if (depth >= this.maxDepth) throw tooDeep(this.maxDepth);
      return character === '{' ? this.readObject(depth + 1) : this.readArray(depth + 1);
    }
    if (character === '"' || character === "'") return this.readString(character);
    const word = this.readWord();
    switch (word) {
      case 'true':
        return true;
      case 'false':
        return false;
      case 'null':
      case 'undefined':
        return null;
      case '':
        return this.fail(character === '' ? 'unexpected end' : `unexpected '${character}'`);
      default:
        if (/^-?(?:\d|\.\d|Infinity$|NaN$)/.test(word)) return new JsonNumeral(word);
        return this.fail(`unexpected '${word.slice(0, 20)}'`);
    }
  }

  /** Where a run of the sticky pattern starting here ends. */
  private skip(pattern: RegExp): number {
    pattern.lastIndex = this.at;
    pattern.test(this.text);
    return pattern.lastIndex;
  }

  private readWord(): string {
    const start = this.at;
    this.at = this.skip(WORD);
    return this.text.slice(start, this.at);
  }

  private readString(quote: string): string {
    this.at++;
    const parts: string[] = [];
    let end = this.text.indexOf(quote, this.at);
    for (;;) {
      if (end < 0) this.fail('unterminated string');
      if (this.nextEscape < this.at) {
        const found = this.text.indexOf('\\', this.at);
        this.nextEscape = found < 0 ? this.text.length : found;
      }
      if (this.nextEscape > end) {
        parts.push(this.text.slice(this.at, end));
        this.at = end + 1;
        return parts.join('');
      }
      const escape = this.nextEscape;
      if (escape > this.at) parts.push(this.text.slice(this.at, escape));
      const code = this.text[escape + 1];
      if (code === 'u') {
        const hex = this.text.slice(escape + 2, escape + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail('bad unicode escape');
        parts.push(String.fromCharCode(parseInt(hex, 16)));
        this.at = escape + 6;
      } else {
        const escaped = ESCAPES[code];
        if (escaped === undefined) this.fail('bad escape');
        parts.push(escaped);
        this.at = escape + 2;
      }
      // The quote found was escaped.
      if (end < this.at) end = this.text.indexOf(quote, this.at);
    }
  }

  private readObject(depth: number): Record<string, unknown> {
    this.at++;
    const members: Record<string, unknown> = {};
    for (;;) {
      const character = this.peek();
      if (character === '}') {
        this.at++;
        return members;
      }
      const name =
        character === '"' || character === "'" ? this.readString(character) : this.readWord();
      if (name === '' && character !== '"' && character !== "'")
        this.fail('a member name was expected');
      if (this.peek() !== ':') this.fail("':' was expected");
      this.at++;
      // Defined, not assigned: a member named `__proto__` stays a member.
      Object.defineProperty(members, name, {
        value: this.readValue(depth),
        enumerable: true,
        writable: true,
        configurable: true,
      });
      this.afterItem('}');
    }
  }

  private readArray(depth: number): unknown[] {
    this.at++;
    const items: unknown[] = [];
    for (;;) {
      const next = this.peek();
      if (next === ']') {
        this.at++;
        return items;
      }
      // Json.NET skipped an empty element (`[1,,2]`, `[,]`).
      if (next === ',') {
        this.at++;
        continue;
      }
      items.push(this.readValue(depth));
      this.afterItem(']');
    }
  }

  /** After a member or item: a comma (a trailing one is allowed), or the closing bracket. */
  private afterItem(close: string): void {
    const character = this.peek();
    if (character === ',') this.at++;
    else if (character !== close) this.fail(`',' or '${close}' was expected`);
  }
}
