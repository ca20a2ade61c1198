import { dotNetUrlDecode, dotNetUtf8 } from './dotnet-url-decode';

const R = '\uFFFD';

describe('dotNetUrlDecode', () => {
  // Each as the legacy twin stored it, byte for byte.
  it.each([
    ['a+b%20c', 'a b c'],
    ['a%C3%A9b', 'a\u00e9b'],
    ['a%FFb', `a${R}b`],
    ['a%C3', `a${R}`],
    ['a%E2%82b', `a${R}b`],
    ['a%F0%9F%98b', `a${R}b`],
    ['a%C0%80b', `a${R}${R}b`],
    ['a%E0%80%80b', `a${R}${R}b`],
    ['a%ED%A0%80b', `a${R}${R}b`],
    ['a%F4%90%80%80b', `a${R}${R}${R}b`],
    ['a%F8%88%80%80%80b', `a${R}${R}${R}${R}${R}b`],
    ['a%80%80b', `a${R}${R}b`],
    ['a%E2x%82%ACb', `a${R}x${R}${R}b`],
    ['a%u00e9b', 'a%u00e9b'],
    ['a%', 'a%'],
    ['a%4', 'a%4'],
    ['a%zzb', 'a%zzb'],
    ['a%%41b', 'a%Ab'],
    ['%F0%9F%98%80', '\u{1F600}'],
    [`a${R}%A9b`, `a${R}${R}b`],
    ['\u00e9%C3%A9', '\u00e9\u00e9'],
  ])('decodes %j as %j', (text, decoded) => {
    expect(dotNetUrlDecode(text)).toBe(decoded);
  });
});

describe('dotNetUtf8', () => {
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
    expect(dotNetUtf8(Buffer.from(hex, 'hex'))).toBe(text);
  });
});
