import { TextDecoder } from 'node:util';

const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const REPLACEMENT = '\uFFFD';

/** The range the second byte of a sequence must fall in, by its lead byte; undefined for no lead. */
function secondByteRange(lead: number): readonly [number, number] | undefined {
  if (lead >= 0xc2 && lead <= 0xdf) return [0x80, 0xbf];
  if (lead === 0xe0) return [0xa0, 0xbf];
  if (lead === 0xed) return [0x80, 0x9f];
  if (lead >= 0xe1 && lead <= 0xef) return [0x80, 0xbf];
  if (lead === 0xf0) return [0x90, 0xbf];
  if (lead === 0xf4) return [0x80, 0x8f];
  if (lead >= 0xf1 && lead <= 0xf3) return [0x80, 0xbf];
  return undefined;
}

const isContinuation = (byte: number | undefined) =>
  byte !== undefined && byte >= 0x80 && byte <= 0xbf;

/**
 * Where the UTF-8 sequence at `start` ends, and whether it is valid. As .NET Framework's UTF8Encoding
 * reads (Mono's too): an invalid sequence is the bytes read before the fault, except that a lead byte
 * followed by a continuation byte out of its range (an overlong form, a surrogate, past U+10FFFF)
 * is one invalid sequence of both bytes: `ED A0 80` is two, where the Unicode recommendation (and
 * WHATWG's decoder) makes three.
 */
function sequenceAt(bytes: Uint8Array, start: number): { end: number; valid: boolean } {
  const lead = bytes[start];
  if (lead < 0x80) return { end: start + 1, valid: true };
  const range = secondByteRange(lead);
  if (!range) return { end: start + 1, valid: false };
  const second = bytes[start + 1];
  if (!isContinuation(second)) return { end: start + 1, valid: false };
  if (second < range[0] || second > range[1]) return { end: start + 2, valid: false };
  const length = lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
  for (let at = start + 2; at < start + length; at++)
    if (!isContinuation(bytes[at])) return { end: at, valid: false };
  return { end: start + length, valid: true };
}

/**
 * UTF-8 as .NET's replacing decoder (`Encoding.UTF8`) read it: each invalid sequence, as
 * `sequenceAt` delimits them, becomes one U+FFFD. A byte order mark is not removed. Linear time: the
 * valid runs between faults are decoded whole.
 */
export function decodeUtf8AsDotNet(bytes: Uint8Array): string {
  try {
    return strict.decode(bytes);
  } catch {
    // Some bytes are not UTF-8: found and replaced below.
  }
  const parts: string[] = [];
  let runStart = 0;
  for (let at = 0; at < bytes.length;) {
    const { end, valid } = sequenceAt(bytes, at);
    if (!valid) {
      parts.push(strict.decode(bytes.subarray(runStart, at)), REPLACEMENT);
      runStart = end;
    }
    at = end;
  }
  parts.push(strict.decode(bytes.subarray(runStart)));
  return parts.join('');
}
