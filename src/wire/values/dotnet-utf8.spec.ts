import { decodeUtf8AsDotNet } from './dotnet-utf8';

const bytes = (hex: string) => Buffer.from(hex.replace(/ /g, ''), 'hex');
const codePoints = (text: string) =>
  [...text].map((character) => character.codePointAt(0)!.toString(16)).join(' ');

// Each row is what the legacy service stored from these bytes inside a text member of a JSON body
// after a UTF-8 byte order mark, read back; `41` ('A') shows where a sequence ended.
describe("decodeUtf8AsDotNet (.NET's replacing UTF-8 decoder)", () => {
  it.each<[string, string]>([
    ['ff', 'fffd'],
    ['80', 'fffd'],
    ['80 80', 'fffd fffd'],
    ['c3 28', 'fffd 28'],
    ['c2 c3 a9', 'fffd e9'],
    ['e2 82', 'fffd'],
    ['e2 82 41', 'fffd 41'],
    ['e2 e2 82 ac', 'fffd 20ac'],
    ['f0 9f 98', 'fffd'],
    ['f0 9f 98 41', 'fffd 41'],
    ['f0 9f 98 a0', '1f620'],
    ['c0 af', 'fffd fffd'],
    ['c1 41', 'fffd 41'],
    // A lead byte and a continuation byte out of its range are one sequence.
    ['e0 80', 'fffd'],
    ['e0 80 8f', 'fffd fffd'],
    ['e0 9f 80', 'fffd fffd'],
    ['ed a0 80', 'fffd fffd'],
    ['ed a0 80 ed b0 80', 'fffd fffd fffd fffd'],
    ['ed a0 41', 'fffd 41'],
    ['f0 8f 80 80', 'fffd fffd fffd'],
    ['f4 90 80 80', 'fffd fffd fffd'],
    ['f4 90 41', 'fffd 41'],
    ['f5 80 80 80', 'fffd fffd fffd fffd'],
    ['f8 88 80 80', 'fffd fffd fffd fffd'],
    ['fc 80 80 80 80 80', 'fffd fffd fffd fffd fffd fffd'],
  ])('%s is %s', (hex, expected) => {
    expect(codePoints(decodeUtf8AsDotNet(bytes(`3c${hex}3e`)))).toBe(`3c ${expected} 3e`);
  });

  it('keeps valid text, a byte order mark included, as it is', () => {
    expect(decodeUtf8AsDotNet(Buffer.from('\ufeffJosé 日本 😀'))).toBe('\ufeffJosé 日本 😀');
  });

  it('decodes a megabyte of faults in linear time', () => {
    const started = performance.now();
    const text = decodeUtf8AsDotNet(Buffer.alloc(1 << 20, 0xff));
    expect(text.length).toBe(1 << 20);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

describe('decodeUtf8AsDotNet, as the form parser met the bytes', () => {
  const R = '\uFFFD';
  it.each([
    ['61c3a962', 'a\u00e9b'],
    ['61e962', `a${R}b`],
    ['61c0806', `a${R}${R}`],
    ['61e28262', `a${R}b`],
    ['e0a080', '\u0800'],
    ['efbbbf61', '\uFEFFa'],
    ['fffe61', `${R}${R}a`],
    ['f48fbfbf', '\u{10FFFF}'],
    ['e1', R],
    ['e09f80', `${R}${R}`],
    ['f08f8080', `${R}${R}${R}`],
    ['c1bf', `${R}${R}`],
    ['f580', `${R}${R}`],
    ['edbfbf', `${R}${R}`],
    ['e0a062', `${R}b`],
    ['c3c3a9', `${R}\u00e9`],
    ['efbfbf', '\uFFFF'],
    ['f0908080f0', `\u{10000}${R}`],
  ])('decodes %s as %j', (hex, text) => {
    expect(decodeUtf8AsDotNet(Buffer.from(hex, 'hex'))).toBe(text);
  });
});
