/** A document that is not a JSON array of records; the message says why. */
export class NotAJsonArrayError extends Error {}

/** The character codes that decide where an item ends. */
const Char = {
  Tab: 9,
  LineFeed: 10,
  CarriageReturn: 13,
  Space: 32,
  DoubleQuote: 34,
  SingleQuote: 39,
  Asterisk: 42,
  Comma: 44,
  Slash: 47,
  OpenBracket: 91,
  Backslash: 92,
  CloseBracket: 93,
  OpenBrace: 123,
  CloseBrace: 125,
  ByteOrderMark: 0xfeff,
} as const;

const isSpace = (code: number) =>
  code === Char.Space ||
  code === Char.LineFeed ||
  code === Char.CarriageReturn ||
  code === Char.Tab ||
  code === Char.ByteOrderMark ||
  // The rest of what JavaScript's \s and Json.NET's reader take as white space.
  (code > 127 && /\s/.test(String.fromCharCode(code)));

/**
 * Cuts a JSON array read in pieces into the text of its items, without building any of them: each
 * item is then read alone by the service's own JSON rules, so an import file reads exactly as a
 * request body does (Json.NET's lenient syntax and exact numerals included), in memory bounded by a
 * piece and an item. It follows only what decides where an item ends: strings in either quote with
 * their escapes, comments, and nesting. Empty items (`[1,,2]`) are skipped, as Json.NET skipped them;
 * what follows the array is ignored, as after a request body.
 */
export async function* jsonArrayItems(pieces: AsyncIterable<string>): AsyncGenerator<string> {
  let text = '';
  let at = 0;
  // Where the current item began (-1 between items), and the nesting inside it.
  let itemStart = -1;
  let depth = 0;
  let opened = false;
  let closed = false;
  let quote: number = 0;
  let comment: '//' | '/*' | undefined;
  const items: string[] = [];

  /** Scans `text` from `at` as far as it can be read; `ended` when no more text will come. */
  const scan = (ended: boolean): void => {
    const length = text.length;
    while (at < length && !closed) {
      if (comment) {
        const end = text.indexOf(comment === '//' ? '\n' : '*/', at);
        if (end < 0) {
          // A '*' at the end may start the comment's end.
          at = Math.max(at, length - 1);
          return;
        }
        // Past the line's end, or past the '*/'.
        at = comment === '//' ? end + 1 : end + 2;
        comment = undefined;
        continue;
      }
      const code = text.charCodeAt(at);
      if (quote !== 0) {
        // The next quote that no backslash escapes: a backslash escapes it when an odd run of them
        // stands right before it.
        const end = text.indexOf(quote === Char.DoubleQuote ? '"' : "'", at);
        if (end < 0) {
          at = length;
          return;
        }
        let backslashes = 0;
        while (text.charCodeAt(end - 1 - backslashes) === Char.Backslash) backslashes++;
        at = end + 1;
        if (backslashes % 2 === 0) quote = 0;
        continue;
      }
      if (code === Char.Slash) {
        if (at + 1 >= length && !ended) return;
        const next = text.charCodeAt(at + 1);
        if (next === Char.Slash || next === Char.Asterisk) {
          comment = next === Char.Slash ? '//' : '/*';
          at += 2;
          continue;
        }
        if (itemStart < 0) throw new NotAJsonArrayError(`unexpected '/' at character ${at}`);
        at++;
        continue;
      }
      if (itemStart < 0) {
        if (isSpace(code) || (opened && code === Char.Comma)) {
          at++;
          continue;
        }
        if (!opened) {
          if (code !== Char.OpenBracket) throw new NotAJsonArrayError('it does not start with [');
          opened = true;
          at++;
          continue;
        }
        if (code === Char.CloseBracket) {
          closed = true;
          return;
        }
        itemStart = at;
        depth = 0;
      }
      switch (code) {
        case Char.DoubleQuote:
        case Char.SingleQuote:
          quote = code;
          break;
        case Char.OpenBrace:
        case Char.OpenBracket:
          depth++;
          break;
        case Char.CloseBrace:
        case Char.CloseBracket:
          if (depth === 0 && code === Char.CloseBrace)
            throw new NotAJsonArrayError(`unexpected '}' at character ${at}`);
          if (depth === 0) {
            items.push(text.slice(itemStart, at));
            itemStart = -1;
            closed = true;
            return;
          }
          depth--;
          break;
        case Char.Comma:
          if (depth === 0) {
            items.push(text.slice(itemStart, at));
            itemStart = -1;
          }
          break;
      }
      at++;
    }
  };

  for await (const piece of pieces) {
    text += piece;
    scan(false);
    yield* items.splice(0);
    if (closed) return;
    // Keep only what is still to be read: the open item, or the unscanned rest.
    const keep = itemStart >= 0 ? itemStart : at;
    text = text.slice(keep);
    at -= keep;
    if (itemStart >= 0) itemStart = 0;
  }
  scan(true);
  yield* items.splice(0);
  if (!closed)
    throw new NotAJsonArrayError(opened ? 'the array is not closed' : 'the file is empty');
}
