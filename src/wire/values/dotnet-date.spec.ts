import fc from 'fast-check';
import { DateTime, FixedOffsetZone } from 'luxon';
import { parseDotNetDate, parseMicrosoftDate, parseXsdDate } from './dotnet-date';
import { setServiceTimeZone } from './wire-date';

const iso = (date: Date | undefined) => date?.toISOString();
const today = () => DateTime.now().toFormat('yyyy-MM-dd');

describe('.NET dates', () => {
  afterEach(() => setServiceTimeZone('UTC'));

  describe('fields to an instant, without luxon at a fixed offset', () => {
    // The last day at an offset west of UTC: past 9999 as an instant, so no .NET DateTime.
    const LAST_INSTANT_PAST_OFFSET = {
      year: 9999,
      month: 12,
      day: 31,
      hour: 13,
      minute: 0,
      second: 0,
      millisecond: 0,
      offset: -660,
    };
    const two = (value: number) => String(value).padStart(2, '0');
    const fields = fc.record({
      year: fc.integer({ min: 0, max: 9999 }),
      month: fc.integer({ min: 0, max: 13 }),
      day: fc.oneof(fc.integer({ min: 0, max: 32 }), fc.constantFrom(28, 29, 30, 31)),
      hour: fc.oneof(fc.integer({ min: 0, max: 25 }), fc.constant(24)),
      minute: fc.oneof(fc.integer({ min: 0, max: 60 }), fc.constant(0)),
      second: fc.oneof(fc.integer({ min: 0, max: 60 }), fc.constant(0)),
      millisecond: fc.oneof(fc.integer({ min: 0, max: 999 }), fc.constant(0)),
      offset: fc.option(fc.integer({ min: -14 * 60, max: 14 * 60 }), { nil: undefined }),
    });

    it.each(['UTC', 'UTC+8', 'UTC-3:30', 'America/New_York'])(
      'reads every XML Schema date as luxon does, in the service zone %s',
      (zone) => {
        setServiceTimeZone(zone);
        fc.assert(
          fc.property(fields, ({ offset, ...local }) => {
            const { year, month, day, hour, minute, second, millisecond } = local;
            // Luxon's fix for two-digit years resets the day after 24:00 rolled it over: before
            // the year 100 it reads 24:00 as the same day's midnight. Read here, as in every other
            // year, as the next midnight.
            fc.pre(!(year < 100 && hour === 24));
            const sign = offset !== undefined && offset < 0 ? '-' : '+';
            const zoneText =
              offset === undefined
                ? ''
                : `${sign}${two(Math.floor(Math.abs(offset) / 60))}:${two(Math.abs(offset) % 60)}`;
            const text =
              `${String(year).padStart(4, '0')}-${two(month)}-${two(day)}T${two(hour)}:` +
              `${two(minute)}:${two(second)}.${String(millisecond).padStart(3, '0')}${zoneText}`;
            const expected = DateTime.fromObject(
              local,
              offset === undefined ? {} : { zone: FixedOffsetZone.instance(offset) },
            );
            const instant = expected.isValid ? expected.toJSDate() : undefined;
            // .NET's DateTime holds the years 1 to 9999 only.
            const inRange =
              instant &&
              instant >= new Date('0001-01-01T00:00:00Z') &&
              instant <= new Date('9999-12-31T23:59:59.999Z');
            expect(iso(parseXsdDate(text))).toBe(inRange ? iso(instant) : undefined);
          }),
          { numRuns: 3000, examples: [[{ ...LAST_INSTANT_PAST_OFFSET }]] },
        );
      },
    );
  });

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
