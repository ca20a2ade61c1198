import { DateTime } from 'luxon';
import { parseDotNetDate, parseMicrosoftDate, parseXsdDate } from './dotnet-date';
import { setServiceTimeZone } from './wire-date';

const iso = (date: Date | undefined) => date?.toISOString();
const today = () => DateTime.now().toFormat('yyyy-MM-dd');

describe('.NET dates', () => {
  afterEach(() => setServiceTimeZone('UTC'));

  describe("DateTime.Parse in the invariant culture (Json.NET's strings, form values)", () => {
    it.each([
      ['2024-01-02', '2024-01-02T00:00:00.000Z'],
      ['2024-01-02T10:00:00.1234567+08:00', '2024-01-02T02:00:00.123Z'],
      ['2024-01-02T10:00:00Z', '2024-01-02T10:00:00.000Z'],
      ['2024-01-02 10:00:00', '2024-01-02T10:00:00.000Z'],
      ['2024-01-02T10:00+08', '2024-01-02T02:00:00.000Z'],
      ['2024-01-02T10:00:00+0800', '2024-01-02T02:00:00.000Z'],
      ['2024-1-2', '2024-01-02T00:00:00.000Z'],
      ['2024/01/02', '2024-01-02T00:00:00.000Z'],
      ['2024-01', '2024-01-01T00:00:00.000Z'],
      ['01/02/2024', '2024-01-02T00:00:00.000Z'],
      ['01.02.2024', '2024-01-02T00:00:00.000Z'],
      ['1/2/2024 10:00:00 AM', '2024-01-02T10:00:00.000Z'],
      ['1/2/2024 12:30 PM', '2024-01-02T12:30:00.000Z'],
      ['1/2/2024 12:30 AM', '2024-01-02T00:30:00.000Z'],
      ['1/2/2024 22:00:00 PM', '2024-01-02T22:00:00.000Z'],
      ['1/2/24', '2024-01-02T00:00:00.000Z'],
      ['1/2/30', '1930-01-02T00:00:00.000Z'],
      ['Tue, 02 Jan 2024 10:00:00 GMT', '2024-01-02T10:00:00.000Z'],
      ['2 January 2024', '2024-01-02T00:00:00.000Z'],
      ['Jan 2, 2024', '2024-01-02T00:00:00.000Z'],
      ['Tuesday, January 02, 2024', '2024-01-02T00:00:00.000Z'],
      ['Jan 2024', '2024-01-01T00:00:00.000Z'],
      ['0001-01-01T00:00:00', '0001-01-01T00:00:00.000Z'],
      ['9999-12-31T23:59:59.9999999', '9999-12-31T23:59:59.999Z'],
    ])('reads %j', (text, expected) => {
      expect(iso(parseDotNetDate(text))).toBe(expected);
    });

    it('reads a time alone as today, and a date without an offset in the service zone', () => {
      expect(iso(parseDotNetDate('10:00'))).toBe(`${today()}T10:00:00.000Z`);
      setServiceTimeZone('Asia/Manila');
      expect(iso(parseDotNetDate('2026-03-01 10:11:12'))).toBe('2026-03-01T02:11:12.000Z');
      expect(iso(parseDotNetDate('03/01/2026'))).toBe('2026-02-28T16:00:00.000Z');
    });

    it.each([
      '',
      '   ',
      'garbage',
      '13/02/2024',
      '20240102',
      '2024-01-02T25:00:00',
      '2024-02-30',
      'Jan Feb 2024',
      '2024',
      '10000-01-01',
    ])('refuses %j', (text) => {
      expect(parseDotNetDate(text)).toBeUndefined();
    });
  });

  describe("Json.NET's Microsoft dates", () => {
    it('reads milliseconds since 1970 UTC; the offset only said how it was shown', () => {
      expect(iso(parseMicrosoftDate('/Date(1245398693390)/'))).toBe('2009-06-19T08:04:53.390Z');
      expect(iso(parseMicrosoftDate('/Date(1245398693390+0800)/'))).toBe(
        '2009-06-19T08:04:53.390Z',
      );
      expect(iso(parseMicrosoftDate('/Date(-1245398693390-0130)/'))).toBe(
        '1930-07-15T15:55:06.610Z',
      );
      expect(parseMicrosoftDate('/Date(x)/')).toBeUndefined();
      expect(parseMicrosoftDate('Date(1)')).toBeUndefined();
    });
  });

  describe("XmlConvert's XML Schema forms (DataContractSerializer)", () => {
    it.each([
      ['2024-01-02', '2024-01-02T00:00:00.000Z'],
      [' 2024-01-02T10:00:00 ', '2024-01-02T10:00:00.000Z'],
      ['2024-01-02T10:00:00.1234567+08:00', '2024-01-02T02:00:00.123Z'],
      ['0001-01-01T00:00:00', '0001-01-01T00:00:00.000Z'],
      ['2024-01', '2024-01-01T00:00:00.000Z'],
    ])('reads %j', (text, expected) => {
      expect(iso(parseXsdDate(text))).toBe(expected);
    });

    it.each(['2024-01-02 10:00:00', '01/02/2024', '2024-01-02T10:00', '', '2024-1-2'])(
      'refuses %j',
      (text) => {
        expect(parseXsdDate(text)).toBeUndefined();
      },
    );
  });
});
