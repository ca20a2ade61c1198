import { ExactDecimal } from '../values/exact-decimal';
import { JsonNumeral } from './json-reader';
import { FORM_DIALECT, JSON_DIALECT, type WireDialect, XML_DIALECT } from './wire-dialects';
import { UnreadableValue } from '../values/unreadable-value';
import { type WireScalarKind } from '../model/wire-model';

/** What a dialect made of a value: the value, a decimal's exact text, or how it failed. */
function outcome(dialect: WireDialect, kind: WireScalarKind, value: unknown): unknown {
  const read = dialect[kind](value);
  if (read instanceof UnreadableValue) return read.failsRecord ? 'fails record' : 'unreadable';
  if (read instanceof ExactDecimal) return read.toString();
  if (read instanceof Date) return read.toISOString();
  return read;
}

const numeral = (text: string) => new JsonNumeral(text);

// Each row is what the legacy service answered (ASP.NET Web API 5.2.3 with Json.NET 6.0.8).
describe('JSON_DIALECT (Json.NET 6)', () => {
  it.each<[WireScalarKind, unknown, unknown]>([
    ['int', 5, 5],
    ['int', numeral('012'), 10],
    ['int', numeral('0x1A'), 26],
    ['int', numeral('08'), 'fails record'],
    ['int', numeral('0xFFFFFFFF'), -1],
    ['int', numeral('037777777777'), -1],
    ['int', numeral('0x1FFFFFFFF'), 'fails record'],
    ['int', 5.5, 'fails record'],
    // Json.NET refused these two; JSON.parse cannot tell them from 5 and 100, so neither reader does.
    ['int', numeral('5.0'), 5],
    ['int', numeral('1e2'), 100],
    ['int', numeral('1e-2'), 'fails record'],
    ['int', 2147483648, 'fails record'],
    ['int', -2147483648, -2147483648],
    ['int', numeral('Infinity'), 'unreadable'],
    ['int', '5', 5],
    ['int', ' +5 ', 5],
    ['int', '012', 12],
    ['int', '', null],
    ['int', '5.0', 'unreadable'],
    ['int', '0x1A', 'unreadable'],
    ['int', '1,000', 'unreadable'],
    ['int', true, 'unreadable'],
    ['int', {}, 'unreadable'],
    ['decimal', 0.5, '0.5'],
    ['decimal', numeral('0.50000000000000001'), '0.50000000000000001'],
    ['decimal', numeral('0X1a'), '26'],
    ['decimal', numeral('1E2'), '100'],
    ['decimal', numeral('5.'), '5'],
    ['decimal', numeral('-.5'), '-0.5'],
    ['decimal', numeral('1e30'), 'fails record'],
    ['decimal', numeral('08'), 'fails record'],
    ['decimal', numeral('NaN'), 'unreadable'],
    ['decimal', Infinity, 'fails record'],
    ['decimal', '1,000.5', '1000.5'],
    ['decimal', ' 5 ', '5'],
    ['decimal', '5-', '-5'],
    ['decimal', '', null],
    ['decimal', '5e2', 'unreadable'],
    ['decimal', 'NaN', 'unreadable'],
    ['decimal', true, 'unreadable'],
    ['boolean', true, true],
    ['boolean', 0, false],
    ['boolean', 2, true],
    ['boolean', 1.5, true],
    ['boolean', 'True', true],
    ['boolean', ' true ', true],
    ['boolean', '', null],
    ['boolean', '1', 'unreadable'],
    ['boolean', 'yes', 'unreadable'],
    ['boolean', '  ', 'unreadable'],
    ['boolean', [], 'unreadable'],
    ['string', 'x', 'x'],
    ['string', 123, '123'],
    ['string', numeral('0x1A'), '26'],
    ['string', numeral('123456789012345678901234567890'), '123456789012345678901234567890'],
    ['int', numeral(`1${'0'.repeat(100000)}`), 'fails record'],
    ['int', `  ${'0'.repeat(20)}12 `, 12],
    ['int', '1'.repeat(100000), 'unreadable'],
    ['string', true, 'True'],
    ['string', {}, 'unreadable'],
    ['string', 0.30000000000000004, '0.3'],
    ['string', 1e21, '1E+21'],
    ['string', -0, '0'],
    ['string', numeral('0.30000000000000004'), '0.3'],
    ['string', numeral('-0'), '0'],
    ['string', numeral('08'), 'fails record'],
    ['string', numeral('-0x1A'), 'fails record'],
    ['string', numeral('1e400'), 'fails record'],
    ['string', 'b\ud83d!', 'b\ufffd!'],
    ['string', '\udc00x\ud800', '\ufffdx\ufffd'],
    ['string', '\ud83d\ude00', '\ud83d\ude00'],
    // Json.NET read a string member without parsing dates.
    ['string', '2024-01-02T10:00:00Z', '2024-01-02T10:00:00Z'],
    ['date', '/Date(1245398693390+0800)/', '2009-06-19T08:04:53.390Z'],
    ['date', '01/02/2024', '2024-01-02T00:00:00.000Z'],
    ['date', '', null],
    ['date', 'garbage', 'unreadable'],
    ['date', 1245398693390, 'unreadable'],
  ])('reads a %s from %j', (kind, value, expected) => {
    expect(outcome(JSON_DIALECT, kind, value)).toEqual(expected);
  });
});

describe('XML_DIALECT (XmlConvert)', () => {
  it.each<[WireScalarKind, string, unknown]>([
    ['int', ' 5 ', 5],
    ['int', '+5', 5],
    ['int', '012', 12],
    ['int', '5.0', 'unreadable'],
    ['int', '0x1A', 'unreadable'],
    ['int', '', 'unreadable'],
    ['decimal', '.5', '0.5'],
    ['decimal', ' 5. ', '5'],
    ['decimal', '0.50000000000000001', '0.50000000000000001'],
    ['decimal', '1e-5', 'unreadable'],
    ['decimal', '1,000', 'unreadable'],
    ['boolean', 'true', true],
    ['boolean', ' 0 ', false],
    ['boolean', '1', true],
    ['boolean', 'True', 'unreadable'],
    ['boolean', '', 'unreadable'],
    ['date', '2024-01-02', '2024-01-02T00:00:00.000Z'],
    ['date', '01/02/2024', 'unreadable'],
    ['string', '', ''],
  ])('reads a %s from %j', (kind, value, expected) => {
    expect(outcome(XML_DIALECT, kind, value)).toEqual(expected);
  });
});

describe("FORM_DIALECT (the form binder's type converters)", () => {
  it.each<[WireScalarKind, string, unknown]>([
    ['int', ' 5 ', 5],
    ['int', '0x1A', 26],
    ['int', '#5', 5],
    ['int', '0xFFFFFFFF', -1],
    ['int', '012', 12],
    ['int', '5.0', 'unreadable'],
    ['decimal', '1e-5', '0.00001'],
    ['decimal', '.5', '0.5'],
    ['decimal', ' 1 ', '1'],
    ['decimal', '1,000', 'unreadable'],
    ['boolean', 'True', true],
    ['boolean', ' true ', true],
    ['boolean', '1', 'unreadable'],
    ['boolean', 'on', 'unreadable'],
    ['date', '01/02/2024', '2024-01-02T00:00:00.000Z'],
    ['date', '2024-01-02 10:00:00', '2024-01-02T10:00:00.000Z'],
    ['date', '/Date(1245398693390)/', 'unreadable'],
  ])('reads a %s from %j', (kind, value, expected) => {
    expect(outcome(FORM_DIALECT, kind, value)).toEqual(expected);
  });
});
