import { JsonNumeral, readJsonDocument, readStandardJsonDocument } from './json-reader';
import { IMPORT_QUOTAS, MAX_DOCUMENT_DEPTH, REQUEST_QUOTAS } from './wire-codec';
import { MalformedBodyError } from '../model/wire-errors';

describe('readJsonDocument', () => {
  it('reads valid JSON as JSON.parse does', () => {
    expect(readJsonDocument('{"a":[1,"x",true,null],"b":{"c":-2.5e3}}')).toEqual({
      a: [1, 'x', true, null],
      b: { c: -2500 },
    });
  });

  it("reads Json.NET's lenient syntax: comments, trailing commas, single quotes, unquoted names", () => {
    expect(
      readJsonDocument("{ // a comment\n transaction_id: 1, /* another */ 'financetype':'Cash',}"),
    ).toEqual({ transaction_id: new JsonNumeral('1'), financetype: 'Cash' });
    expect(readJsonDocument('[1,2,]')).toEqual([new JsonNumeral('1'), new JsonNumeral('2')]);
    // Json.NET skipped empty elements.
    expect(readJsonDocument('[1,,2]')).toEqual([new JsonNumeral('1'), new JsonNumeral('2')]);
    expect(readJsonDocument('[,]')).toEqual([]);
    expect(readJsonDocument("{'a':'it\\'s \\u0041'}")).toEqual({ a: "it's A" });
    expect(readJsonDocument('{"a":undefined}')).toEqual({ a: null });
  });

  it('keeps numerals as written when a double could not carry them, or JSON.parse refuses them', () => {
    expect(readJsonDocument('{"a":0.50000000000000001}')).toEqual({
      a: new JsonNumeral('0.50000000000000001'),
    });
    expect(readJsonDocument('{"a":0x1A,"b":012,"c":.5,"d":5.,"e":-Infinity}')).toEqual({
      a: new JsonNumeral('0x1A'),
      b: new JsonNumeral('012'),
      c: new JsonNumeral('.5'),
      d: new JsonNumeral('5.'),
      e: new JsonNumeral('-Infinity'),
    });
  });

  it('ignores what follows the first value, as Web API read one value from the body', () => {
    expect(readJsonDocument('{"a":1} garbage')).toEqual({ a: new JsonNumeral('1') });
  });

  it('keeps a member named __proto__ a member, never a prototype', () => {
    const read = readJsonDocument("{__proto__:{polluted:1},'a':1,}") as Record<string, unknown>;
    expect(Object.getPrototypeOf(read)).toBe(Object.prototype);
    expect(Object.keys(read)).toEqual(['__proto__', 'a']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([
    ['an empty text', ''],
    ['a bare word', '{"a":Cash}'],
    ['an unterminated string', '{"a":"x'],
    ['an unterminated comment', '{"a":1 /* x'],
    ['a missing colon', '{"a" 1}'],
    ['a missing comma', '{"a":1 "b":2}'],
    ['a bad escape', '{"a":"\\q"}'],
    ['a leading plus', '{"a":+5}'],
  ])('refuses %s', (_, text) => {
    expect(() => readJsonDocument(text)).toThrow(MalformedBodyError);
  });

  it(`refuses nesting past ${MAX_DOCUMENT_DEPTH} levels on both paths, before recursing through it`, () => {
    const nested = (levels: number, tail = '') =>
      `${'['.repeat(levels)}${tail}${']'.repeat(levels)}`;
    expect(() => readJsonDocument(nested(MAX_DOCUMENT_DEPTH))).not.toThrow();
    expect(() => readJsonDocument(nested(MAX_DOCUMENT_DEPTH + 1))).toThrow(/nested deeper/);
    expect(() => readJsonDocument(nested(MAX_DOCUMENT_DEPTH + 1, '0x1'))).toThrow(/nested deeper/);
    expect(() => readJsonDocument(`${'['.repeat(100000)}0x1`)).toThrow(/nested deeper/);
  });

  describe(`refuses more than ${REQUEST_QUOTAS.maxElements} members and items before parsing`, () => {
    const { maxElements } = REQUEST_QUOTAS;
    const members = (count: number, quote = '"') =>
      `{${Array.from({ length: count }, (_, n) => `${quote}k${n}${quote}:${n}`).join(',')}}`;
    // The member holding the list, and its items.
    const items = (count: number, item: string) =>
      `{"k":[${Array.from({ length: count - 1 }, () => item).join(',')}]}`;
    const refused = new MalformedBodyError(
      `The request body holds more than ${maxElements} members and items.`,
    );

    it.each([
      ['members, in valid JSON', readJsonDocument, (count: number) => members(count)],
      ['members, in the lenient syntax', readJsonDocument, (count: number) => members(count, "'")],
      ['members, in standard JSON', readStandardJsonDocument, (count: number) => members(count)],
      [
        'members whose values end in an escaped backslash',
        readJsonDocument,
        (count: number) => members(count).replace(/:(\d+)/g, ':"$1\\\\"'),
      ],
      ['empty records in a list', readJsonDocument, (count: number) => items(count, '{}')],
      ['numbers in a list', readStandardJsonDocument, (count: number) => items(count, '0')],
    ])('reads %s at the quota, and refuses one more', (_, read, document) => {
      expect(() => read(document(maxElements))).not.toThrow();
      expect(() => read(document(maxElements + 1))).toThrow(refused);
    });

    it('counts no colon, comma or bracket inside strings or comments, nor after the document', () => {
      const text = members(maxElements - 2).replace(
        '{',
        `{"a":"x:{[\\":" /* y:{ */ , 'b' : 'z:[,\\':' // w:[\n, `,
      );
      expect(() => readJsonDocument(`${text} [0,0]`)).not.toThrow();
    });

    it('lets import documents hold any number of members and items', () => {
      expect(readJsonDocument(members(maxElements + 1), IMPORT_QUOTAS)).toHaveProperty('k0');
    });
  });
});
