import { JsonCodec } from '../codecs/json.codec';
import { XmlCodec } from '../codecs/xml.codec';
import { MalformedBodyError } from '../model/wire-errors';
import { RawWireBody } from './wire-body';

const hex = (...parts: string[]) => Buffer.from(parts.join(''), 'hex');
const text = (value: string, encoding: BufferEncoding = 'utf8') =>
  Buffer.from(value, encoding).toString('hex');
const decode = (codec: JsonCodec | XmlCodec, bytes: Buffer, charset?: string) =>
  new RawWireBody(codec, bytes, charset).decode().text;

// As the legacy's JSON formatter read bodies: strictly in its encodings, but through a StreamReader,
// which a byte order mark switches to .NET's replacing decoder of that encoding.
describe('RawWireBody.decode', () => {
  const json = new JsonCodec();

  it.each<[string, Buffer, string | undefined, string]>([
    [
      'UTF-8 after a byte order mark',
      hex('efbbbf', text('"a'), 'ff', text('"')),
      undefined,
      '"a\ufffd"',
    ],
    [
      'UTF-8 after a byte order mark, whatever the charset',
      hex('efbbbf', 'c328'),
      'utf-16',
      '\ufffd(',
    ],
    [
      'UTF-16 after its byte order mark',
      hex('fffe', text('a', 'utf16le'), '00d8'),
      undefined,
      'a\ufffd',
    ],
    ['UTF-16BE after its byte order mark', hex('feff', '0061', 'd800'), 'utf-16', 'a\ufffd'],
    [
      'UTF-16 after its byte order mark, charset utf-16le',
      hex('fffe', '00d8'),
      'utf-16le',
      '\ufffd',
    ],
  ])('replaces what is not text in %s', (_, bytes, charset, expected) => {
    expect(decode(json, bytes, charset)).toBe(expected);
  });

  it.each<[string, Buffer, string | undefined]>([
    ['UTF-8 without a byte order mark', hex(text('"a'), 'ff', text('"')), undefined],
    ['UTF-16 without a byte order mark', hex(text('a', 'utf16le'), '00d8'), 'utf-16'],
    // The mark is the preamble of the formatter's own UTF-16, which the StreamReader then kept.
    ['UTF-16 after its byte order mark, charset utf-16', hex('fffe', '00d8'), 'utf-16'],
  ])('refuses bytes that are not text in %s', (_, bytes, charset) => {
    expect(() => decode(json, bytes, charset)).toThrow(MalformedBodyError);
  });

  it('keeps XML strict after a byte order mark, as XmlDictionaryReader was', () => {
    expect(() => decode(new XmlCodec('urn:x'), hex('efbbbf', text('<a>'), 'ff'))).toThrow(
      MalformedBodyError,
    );
  });
});
