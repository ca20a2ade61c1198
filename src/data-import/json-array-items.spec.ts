import { Readable } from 'node:stream';
import { jsonArrayItems, NotAJsonArrayError } from './json-array-items';

/** The items of a document handed over in pieces of `size` characters. */
async function itemsOf(document: string, size = document.length || 1): Promise<string[]> {
  const pieces: string[] = [];
  for (let at = 0; at < document.length; at += size) pieces.push(document.slice(at, at + size));
  const items: string[] = [];
  for await (const item of jsonArrayItems(Readable.from(pieces))) items.push(item.trim());
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
    ['', 'the file is empty'],
    ['{"a": 1}', 'it does not start with ['],
    ['[{"a": 1}, {"b": 2}', 'the array is not closed'],
    ['[{"a": "unterminated}]', 'the array is not closed'],
    ['[1 }', "unexpected '}'"],
  ])('refuses %j: %s', async (document, reason) => {
    await expect(itemsOf(document)).rejects.toThrow(NotAJsonArrayError);
    await expect(itemsOf(document)).rejects.toThrow(reason);
  });

  it('reads an empty array as no items', async () => {
    expect(await itemsOf('[ ]')).toEqual([]);
    expect(await itemsOf('[,]')).toEqual([]);
  });
});
