import { decodeUtf8AsDotNet } from './dotnet-utf8';

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/**
 * A form key or value decoded as Web API's UriQueryUtility.UrlDecode did: `+` is a space; `%` and two
 * hex digits is a byte; the bytes are decoded as UTF-8 by `decodeUtf8AsDotNet`, together with the text
 * between them. Anything else after `%` (`%zz`, `%u00e9`, a `%` among the last two characters) is
 * kept as written.
 */
export function dotNetUrlDecode(text: string): string {
  if (!text.includes('%') && !text.includes('+')) return text;
  // .NET decoded the characters outside ASCII apart, each ending the bytes before it. Written as their
  // UTF-8 instead, they decode alike: they start with a lead byte, which ends any sequence left open
  // before them as that did, and they are whole.
  const bytes = Buffer.allocUnsafe(Buffer.byteLength(text));
  let length = 0;
  let from = 0;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code !== 0x2b && code !== 0x25) continue;
    const high = code === 0x25 && at < text.length - 2 ? hexValue(text.charCodeAt(at + 1)) : -1;
    const low = high < 0 ? -1 : hexValue(text.charCodeAt(at + 2));
    if (code === 0x25 && low < 0) continue;
    if (at > from) length += bytes.write(text.slice(from, at), length);
    if (code === 0x2b) {
      bytes[length++] = 0x20;
      from = at + 1;
    } else {
      bytes[length++] = (high << 4) | low;
      from = at + 3;
      at += 2;
    }
  }
  length += bytes.write(text.slice(from), length);
  return decodeUtf8AsDotNet(bytes.subarray(0, length));
}
