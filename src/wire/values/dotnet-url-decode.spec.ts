import { dotNetUrlDecode } from './dotnet-url-decode';

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
