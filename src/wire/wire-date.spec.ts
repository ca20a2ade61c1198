import { formatWireDate, isValidTimeZone, parseWireDate, setServiceTimeZone } from './wire-date';

const iso = (date: Date | undefined) => date?.toISOString();

describe('wire dates', () => {
  afterEach(() => setServiceTimeZone('UTC'));

  describe('formatWireDate', () => {
    it('writes UTC as +00:00, never Z', () => {
      setServiceTimeZone('UTC');
      expect(formatWireDate(new Date('2026-03-01T10:11:12Z'))).toBe('2026-03-01T10:11:12+00:00');
    });

    it('writes the instant in the service zone with its offset', () => {
      setServiceTimeZone('Asia/Manila');
      expect(formatWireDate(new Date('2026-03-01T10:11:12Z'))).toBe('2026-03-01T18:11:12+08:00');
      // Crossing midnight moves the calendar date too.
      expect(formatWireDate(new Date('2026-12-31T20:00:00Z'))).toBe('2027-01-01T04:00:00+08:00');
    });

    it('follows daylight saving time in zones that have it', () => {
      setServiceTimeZone('America/New_York');
      expect(formatWireDate(new Date('2026-01-15T12:00:00Z'))).toBe('2026-01-15T07:00:00-05:00');
      expect(formatWireDate(new Date('2026-07-15T12:00:00Z'))).toBe('2026-07-15T08:00:00-04:00');
    });

    it('writes a fraction only when there is one, without trailing zeros', () => {
      expect(formatWireDate(new Date('2026-03-01T10:11:12.000Z'))).toBe(
        '2026-03-01T10:11:12+00:00',
      );
      expect(formatWireDate(new Date('2026-03-01T10:11:12.500Z'))).toBe(
        '2026-03-01T10:11:12.5+00:00',
      );
      expect(formatWireDate(new Date('2026-03-01T10:11:12.120Z'))).toBe(
        '2026-03-01T10:11:12.12+00:00',
      );
      expect(formatWireDate(new Date('2026-03-01T10:11:12.007Z'))).toBe(
        '2026-03-01T10:11:12.007+00:00',
      );
    });
  });

  describe('parseWireDate', () => {
    it('reads an explicit offset as that offset, whatever the service zone', () => {
      setServiceTimeZone('Asia/Manila');
      expect(iso(parseWireDate('2026-03-01T18:11:12+08:00'))).toBe('2026-03-01T10:11:12.000Z');
      expect(iso(parseWireDate('2026-03-01T10:11:12Z'))).toBe('2026-03-01T10:11:12.000Z');
      expect(iso(parseWireDate('2026-03-01T05:11:12-05:00'))).toBe('2026-03-01T10:11:12.000Z');
      expect(iso(parseWireDate('2026-03-01T18:11:12+0800'))).toBe('2026-03-01T10:11:12.000Z');
    });

    it('reads a date without an offset in the service zone', () => {
      setServiceTimeZone('UTC');
      expect(iso(parseWireDate('2026-03-01T10:11:12'))).toBe('2026-03-01T10:11:12.000Z');
      setServiceTimeZone('Asia/Manila');
      expect(iso(parseWireDate('2026-03-01T10:11:12'))).toBe('2026-03-01T02:11:12.000Z');
      expect(iso(parseWireDate('2026-03-01'))).toBe('2026-02-28T16:00:00.000Z');
    });

    it('keeps milliseconds and drops sub-millisecond digits, as .NET may send seven', () => {
      expect(iso(parseWireDate('2026-03-01T10:11:12.5Z'))).toBe('2026-03-01T10:11:12.500Z');
      expect(iso(parseWireDate('2026-03-01T10:11:12.1234567Z'))).toBe('2026-03-01T10:11:12.123Z');
      expect(iso(parseWireDate('2026-03-01T10:11:12.9999999+00:00'))).toBe(
        '2026-03-01T10:11:12.999Z',
      );
      expect(iso(parseWireDate('2026-03-01T10:11:12,25Z'))).toBe('2026-03-01T10:11:12.250Z');
    });

    it('round-trips what formatWireDate writes', () => {
      setServiceTimeZone('Asia/Manila');
      const instant = new Date('2026-03-01T10:11:12.340Z');
      expect(parseWireDate(formatWireDate(instant))?.getTime()).toBe(instant.getTime());
    });

    it.each([
      '',
      'not a date',
      'yesterday',
      '2026-13-01T00:00:00Z',
      '2026-02-30T00:00:00Z',
      '2026-03-01T25:00:00Z',
      '2026-03-01 10:11:12',
      '2026/03/01',
      '01/03/2026',
      '1772359872000',
      '2026-03-01T10:11:12+08:00 trailing',
    ])('refuses %j', (text) => {
      expect(parseWireDate(text)).toBeUndefined();
    });

    it('accepts the years 1000 to 9999 and refuses anything outside them', () => {
      expect(iso(parseWireDate('1000-01-01T00:00:00Z'))).toBe('1000-01-01T00:00:00.000Z');
      expect(iso(parseWireDate('9999-12-31T23:59:59.999Z'))).toBe('9999-12-31T23:59:59.999Z');
      expect(parseWireDate('0999-12-31T23:59:59Z')).toBeUndefined();
      expect(parseWireDate('0001-01-01T00:00:00Z')).toBeUndefined();
      expect(parseWireDate('10000-01-01T00:00:00Z')).toBeUndefined();
      expect(parseWireDate('+010000-01-01T00:00:00Z')).toBeUndefined();
      // The bounds are instants: a local time inside year 1000 that is year 999 in UTC is refused.
      expect(parseWireDate('1000-01-01T00:30:00+01:00')).toBeUndefined();
      expect(parseWireDate('9999-12-31T23:30:00-01:00')).toBeUndefined();
    });
  });

  describe('isValidTimeZone', () => {
    it('knows IANA zone names and refuses invented ones', () => {
      expect(isValidTimeZone('UTC')).toBe(true);
      expect(isValidTimeZone('Asia/Manila')).toBe(true);
      expect(isValidTimeZone('Mars/Base')).toBe(false);
    });
  });
});
