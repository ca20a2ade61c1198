import { closingQuote } from '../wire';
import { records } from './progress';

/** A place in a file: 1-based line and column (in UTF-16 code units, as an editor counts). */
export interface FilePosition {
  readonly line: number;
  readonly column: number;
}

/** A document that is not a JSON array of records; the message says why, `at` where. */
export class NotAJsonArrayError extends Error {
  constructor(
    message: string,
    readonly at?: FilePosition,
  ) {
    super(message);
  }
}

/** An item longer than the most taken: its number (from 1), and where it starts. */
export class ItemTooLongError extends Error {
  constructor(
    readonly item: number,
    readonly at: FilePosition,
  ) {
    super(`item ${item} is too long`);
  }
}

/** One item of the array: its text, and where it starts in the file. */
export interface JsonArrayItem extends FilePosition {
  readonly text: string;
}

/** Where `offset` of `text` is in the file, `text` starting at `start`. */
export function positionIn(text: string, offset: number, start: FilePosition): FilePosition {
  const lastLineFeed = text.lastIndexOf('\n', offset - 1);
  if (lastLineFeed < 0) return { line: start.line, column: start.column + offset };
  let lines = 0;
  for (let at = text.indexOf('\n'); at >= 0 && at < offset; at = text.indexOf('\n', at + 1))
    lines++;
  return { line: start.line + lines, column: offset - lastLineFeed };
}

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
 * what follows the array is ignored, as after a request body. An item longer than `maxItemLength`
 * characters is ItemTooLongError, as soon as that much of it is read: memory holds no more of it.
 */
export async function* jsonArrayItems(
  pieces: AsyncIterable<string>,
  maxItemLength: number,
): AsyncGenerator<JsonArrayItem> {
  let text = '';
  let at = 0;
  // Where the current item began (-1 between items), and the nesting inside it.
  let itemStart = -1;
  let depth = 0;
  let opened = false;
  let closed = false;
  let quote: number = 0;
  let comment: '//' | '/*' | undefined;
  const items: JsonArrayItem[] = [];
  let itemCount = 0;
  // The file position of `text` at `counted`, and the first line feed at or after it (Infinity when
  // `text` has none): found by indexOf as items are met, not character by character in the scan.
  let counted = 0;
  let line = 1;
  let column = 1;
  let nextLineFeed = -1;
  const positionAt = (offset: number): FilePosition => {
    for (;;) {
      if (nextLineFeed < counted) {
        const found = text.indexOf('\n', counted);
        nextLineFeed = found < 0 ? Infinity : found;
      }
      if (nextLineFeed >= offset) break;
      line++;
      column = 1;
      counted = nextLineFeed + 1;
    }
    column += offset - counted;
    counted = offset;
    return { line, column };
  };
  const pushItem = (start: number, end: number) => {
    if (end - start > maxItemLength) throw new ItemTooLongError(itemCount + 1, positionAt(start));
    items.push({ text: text.slice(start, end), ...positionAt(start) });
    itemCount++;
  };

  /**
   * Scans `text` from `at` as far as it can be read; `ended` when no more text will come. The loop
   * works on local copies of the scanner's state, written back as it stops: a variable the closure
   * shares is reloaded from memory on every use, and this loop visits every character of the file.
   */
  const scan = (ended: boolean): void => {
    const source = text;
    const length = source.length;
    let index = at;
    let start = itemStart;
    let nesting = depth;
    let open = quote;
    scanning: while (index < length && !closed) {
      if (comment) {
        const end = source.indexOf(comment === '//' ? '\n' : '*/', index);
        if (end < 0) {
          // A '*' at the end may start the comment's end.
          index = Math.max(index, length - 1);
          break;
        }
        // Past the line's end, or past the '*/'.
        index = comment === '//' ? end + 1 : end + 2;
        comment = undefined;
        continue;
      }
      if (open !== 0) {
        const end = closingQuote(source, open === Char.DoubleQuote ? '"' : "'", index);
        if (end < 0) {
          index = length;
          break;
        }
        index = end + 1;
        open = 0;
        continue;
      }
      const code = source.charCodeAt(index);
      if (code === Char.Slash) {
        if (index + 1 >= length && !ended) break;
        const next = source.charCodeAt(index + 1);
        if (next === Char.Slash || next === Char.Asterisk) {
          comment = next === Char.Slash ? '//' : '/*';
          index += 2;
          continue;
        }
        if (start < 0) throw new NotAJsonArrayError("unexpected '/'", positionAt(index));
        index++;
        continue;
      }
      if (start < 0) {
        if (isSpace(code) || (opened && code === Char.Comma)) {
          index++;
          continue;
        }
        if (!opened) {
          if (code !== Char.OpenBracket)
            throw new NotAJsonArrayError("it does not start with '['", positionAt(index));
          opened = true;
          index++;
          continue;
        }
        if (code === Char.CloseBracket) {
          closed = true;
          break;
        }
        start = index;
        nesting = 0;
      }
      switch (code) {
        case Char.DoubleQuote:
        case Char.SingleQuote:
          open = code;
          break;
        case Char.OpenBrace:
        case Char.OpenBracket:
          nesting++;
          break;
        case Char.CloseBrace:
        case Char.CloseBracket:
          if (nesting === 0 && code === Char.CloseBrace)
            throw new NotAJsonArrayError("unexpected '}'", positionAt(index));
          if (nesting === 0) {
            pushItem(start, index);
            start = -1;
            closed = true;
            break scanning;
          }
          nesting--;
          break;
        case Char.Comma:
          if (nesting === 0) {
            pushItem(start, index);
            start = -1;
          }
          break;
      }
      index++;
    }
    at = index;
    itemStart = start;
    depth = nesting;
    quote = open;
  };

  for await (const piece of pieces) {
    text += piece;
    if (nextLineFeed === Infinity) nextLineFeed = -1;
    scan(false);
    yield* items.splice(0);
    if (closed) return;
    if (itemStart >= 0 && text.length - itemStart > maxItemLength)
      throw new ItemTooLongError(itemCount + 1, positionAt(itemStart));
    // Keep only what is still to be read: the open item, or the unscanned rest.
    const keep = itemStart >= 0 ? itemStart : at;
    positionAt(keep);
    text = text.slice(keep);
    at -= keep;
    counted -= keep;
    nextLineFeed -= keep;
    if (itemStart >= 0) itemStart = 0;
  }
  scan(true);
  yield* items.splice(0);
  if (closed) return;
  if (!opened) throw new NotAJsonArrayError('the file is empty');
  const open = itemStart >= 0 ? positionAt(itemStart) : undefined;
  const end = positionAt(text.length);
  throw new NotAJsonArrayError(
    `the array is not closed: the file ends at line ${end.line}, column ${end.column}, ` +
      (open
        ? `inside record ${itemCount + 1} (from line ${open.line}, column ${open.column})`
        : `after ${records(itemCount)}`),
  );
}
