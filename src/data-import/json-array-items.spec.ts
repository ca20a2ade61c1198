import { Readable } from 'node:stream';
import {
  ItemTooLongError,
  type JsonArrayItem,
  jsonArrayItems,
  NotAJsonArrayError,
  positionIn,
} from './json-array-items';

/** More than any document here holds. */
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

/** The items of a document handed over in pieces of `size` characters. */
async function itemsOf(document: string, size = document.length || 1): Promise<string[]> {
  const pieces: string[] = [];
  for (let at = 0; at < document.length; at += size) pieces.push(document.slice(at, at + size));
  const items: string[] = [];
  for await (const item of jsonArrayItems(Readable.from(pieces), UNBOUNDED))
    items.push(item.text.trim());
  return items;
}

describe('jsonArrayItems', () => {
  // Strings holding every character that decides where an item ends, in both quotes, comments in
  // every place, an escaped backslash before a closing quote, nesting, and Json.NET's empty items.
  const LENIENT = `\uFEFF // a file comment
  [ {"a": "x, ] } \\" [", 'b': 'it\\'s, ]', c: [1, {d: "\\\\"}]} /* after, ] */ ,
    ,{"e": null}, // trailing comma and comment
    12, "text, ]", ]  trailing garbage is ignored`;
  const EXPECTED = [
    `{"a": "x, ] } \\" [", 'b': 'it\\'s, ]', c: [1, {d: "\\\\"}]} /* after, ] */`,
    '{"e": null}',
    '12',
    '"text, ]"',
  ];

  it('cuts the items of a lenient document, whatever the pieces it arrives in', async () => {
    for (let size = 1; size <= LENIENT.length; size++)
      expect(await itemsOf(LENIENT, size)).toEqual(EXPECTED);
  });

  it.each([
    ['', 'the file is empty', undefined],
    ['\n  {"a": 1}', "it does not start with '['", { line: 2, column: 3 }],
    [
      '[{"a": 1},\n {"b": 2},\n',
      'the array is not closed: the file ends at line 3, column 1, after 2 records',
      undefined,
    ],
    [
      '[{"a": 1},\n {"b": 2}',
      'the array is not closed: the file ends at line 2, column 10, inside record 2 (from line 2, column 2)',
      undefined,
    ],
    [
      '[{"a": 1},\n {"a": "unterminated}]',
      'the array is not closed: the file ends at line 2, column 23, inside record 2 (from line 2, column 2)',
      undefined,
    ],
    ['[1,\n\n  2 }', "unexpected '}'", { line: 3, column: 5 }],
  ])('refuses %j: %s', async (document, reason, at) => {
    const refusal = await itemsOf(document).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(NotAJsonArrayError);
    const { message, at: where } = refusal as NotAJsonArrayError;
    expect({ message, at: where }).toEqual({ message: reason, at });
  });

  it('tells where each item starts in the file, whatever the pieces it arrives in', async () => {
    const document = '[\r\n  {"a": 1},\r\n  {"b":\n "x\\ny"}, 3, /* a\n comment */ 4\n]';
    const expected = [
      { text: '{"a": 1}', line: 2, column: 3 },
      { text: '{"b":\n "x\\ny"}', line: 3, column: 3 },
      { text: '3', line: 4, column: 11 },
      { text: '4', line: 5, column: 13 },
    ];
    for (let size = 1; size <= document.length; size++) {
      const pieces: string[] = [];
      for (let at = 0; at < document.length; at += size) pieces.push(document.slice(at, at + size));
      const items: JsonArrayItem[] = [];
      for await (const item of jsonArrayItems(Readable.from(pieces), UNBOUNDED))
        items.push({ ...item, text: item.text.trim() });
      expect({ size, items }).toEqual({ size, items: expected });
    }
  });

  it('finds an offset inside an item in the file', () => {
    const start = { line: 7, column: 3 };
    expect(positionIn('{"a":\n  1,\n  x}', 0, start)).toEqual({ line: 7, column: 3 });
    expect(positionIn('{"a":\n  1,\n  x}', 4, start)).toEqual({ line: 7, column: 7 });
    expect(positionIn('{"a":\n  1,\n  x}', 13, start)).toEqual({ line: 9, column: 3 });
  });

  it('reads an empty array as no items', async () => {
    expect(await itemsOf('[ ]')).toEqual([]);
    expect(await itemsOf('[,]')).toEqual([]);
  });

  it('refuses an item longer than the most taken once that much of it is read, saying where it starts', async () => {
    const long = `{"a": "${'x'.repeat(100)}"}`;
    const document = `[\n  {"a": 1},\n  ${long},\n  {"b": 2}\n]`;
    // Every item of at most its length is taken.
    const taken: string[] = [];
    for await (const item of jsonArrayItems(Readable.from([document]), long.length))
      taken.push(item.text.trim());
    expect(taken).toEqual(['{"a": 1}', long, '{"b": 2}']);
    for (const size of [1, 7, 64, document.length]) {
      const pieces: string[] = [];
      for (let at = 0; at < document.length; at += size) pieces.push(document.slice(at, at + size));
      const refused = (async () => {
        const items: JsonArrayItem[] = [];
        for await (const item of jsonArrayItems(Readable.from(pieces), long.length - 1))
          items.push(item);
        return items;
      })();
      await expect(refused).rejects.toThrow(ItemTooLongError);
      await expect(refused).rejects.toMatchObject({ item: 2, at: { line: 3, column: 3 } });
    }
  });
});
