const REPLACEMENT = '\uFFFD';

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
  const ascii = (from: number, to: number) =>
    Buffer.from(bytes.buffer, bytes.byteOffset + from, to - from).toString('latin1');
  let text = '';
  let plainFrom = 0;
  let at = 0;
  while (at < bytes.length) {
    const lead = bytes[at];
    if (lead < 0x80) {
      at++;
      continue;
    }
    text += ascii(plainFrom, at);
    const needed = continuationsOf(lead);
    let end = at + 1;
    let valid = needed > 0;
    for (let taken = 0; valid && taken < needed; taken++) {
      const next = bytes[end];
      if (!isContinuation(next)) valid = false;
      else if (taken === 0 && secondOutOfRange(lead, next)) {
        // .NET read the second byte before it found the sequence out of range: both are one fault.
        end++;
        valid = false;
      } else end++;
    }
    text += valid
      ? Buffer.from(bytes.buffer, bytes.byteOffset + at, end - at).toString('utf8')
      : REPLACEMENT;
    at = end;
    plainFrom = end;
  }
  return text + ascii(plainFrom, at);
}

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/**
 * A form key or value decoded as Web API's UriQueryUtility.UrlDecode did: `+` is a space; `%` and two
 * hex digits is a byte; the bytes and the ASCII characters between them are decoded as UTF-8 together
 * (by `dotNetUtf8`), and other characters are kept as they are. Anything else after `%` (`%zz`, `%u00e9`,
 * a `%` among the last two characters) is kept as written.
 */
export function dotNetUrlDecode(text: string): string {
  if (!text.includes('%') && !text.includes('+')) return text;
  let decoded = '';
  const bytes: number[] = [];
  const flush = () => {
    if (bytes.length === 0) return;
    decoded += dotNetUtf8(Uint8Array.from(bytes));
    bytes.length = 0;
  };
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === 0x2b) {
      bytes.push(0x20);
      continue;
    }
    if (code === 0x25 && at < text.length - 2) {
      const high = hexValue(text.charCodeAt(at + 1));
      const low = hexValue(text.charCodeAt(at + 2));
      if (high >= 0 && low >= 0) {
        bytes.push((high << 4) | low);
        at += 2;
        continue;
      }
    }
    if (code < 0x80) {
      bytes.push(code);
      continue;
    }
    flush();
    decoded += text[at];
  }
  flush();
  return decoded;
}
