import { isUtf8 } from 'node:buffer';

/** Continuation bytes a lead byte needs, by .NET's UTF-8 decoder; 0 for a byte that leads nothing. */
function continuationsOf(lead: number): number {
  if (lead >= 0xc2 && lead <= 0xdf) return 1;
  if (lead >= 0xe0 && lead <= 0xef) return 2;
  if (lead >= 0xf0 && lead <= 0xf4) return 3;
  return 0;
}

const isContinuation = (byte: number | undefined) =>
  byte !== undefined && byte >= 0x80 && byte <= 0xbf;

/** The second byte of a sequence that would be overlong, a surrogate or past U+10FFFF. */
function secondOutOfRange(lead: number, second: number): boolean {
  return (
    (lead === 0xe0 && second < 0xa0) ||
    (lead === 0xed && second > 0x9f) ||
    (lead === 0xf0 && second < 0x90) ||
    (lead === 0xf4 && second > 0x8f)
  );
}

/**
 * UTF-8 as .NET Framework's `Encoding.UTF8` decoded it, replacing what is not UTF-8 with U+FFFD
 * otherwise than WHATWG's decoder does: one U+FFFD for a lead byte and the bytes that followed it
 * until the sequence broke, and one for a lead byte and a second byte out of its range (`E0 80`, the
 * start of an overlong form, is one U+FFFD, where WHATWG's decoder writes two).
 */
export function dotNetUtf8(bytes: Uint8Array): string {
  if (isUtf8(bytes)) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString();
  // The bytes again, each fault replaced by U+FFFD's three (EF BF BD: at most three times as many
  // bytes), decoded at once.
  const repaired = Buffer.allocUnsafe(bytes.length * 3);
  let length = 0;
  let at = 0;
  while (at < bytes.length) {
    const lead = bytes[at];
    const needed = continuationsOf(lead);
    let end = at + 1;
    let valid = lead < 0x80 || needed > 0;
    for (let taken = 0; valid && taken < needed; taken++) {
      const next = bytes[end];
      if (!isContinuation(next)) valid = false;
      else if (taken === 0 && secondOutOfRange(lead, next)) {
        // .NET read the second byte before it found the sequence out of range: both are one fault.
        end++;
        valid = false;
      } else end++;
    }
    if (valid) {
      while (at < end) repaired[length++] = bytes[at++];
      continue;
    }
    repaired[length++] = 0xef;
    repaired[length++] = 0xbf;
    repaired[length++] = 0xbd;
    at = end;
  }
  return repaired.toString('utf8', 0, length);
}

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/**
 * A form key or value decoded as Web API's UriQueryUtility.UrlDecode did: `+` is a space; `%` and two
 * hex digits is a byte; the bytes are decoded as UTF-8 by `dotNetUtf8`, together with the text
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
  return dotNetUtf8(bytes.subarray(0, length));
}
