import fc from 'fast-check';
import { DateTime } from 'luxon';
import { formatWireDate, setServiceTimeZone } from './wire-date';

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

    it.each(['UTC', 'UTC+8', 'UTC-3:30', 'UTC+14'])(
      'writes every instant in the fixed-offset zone %s as luxon formats it',
      (zone) => {
        setServiceTimeZone(zone);
        fc.assert(
          fc.property(
            fc.date({
              min: new Date('0001-01-01T00:00:00Z'),
              max: new Date('9999-12-31T23:59:59.999Z'),
              noInvalidDate: true,
            }),
            (date) => {
              const local = DateTime.fromJSDate(date);
              const fraction = local.millisecond
                ? `.${String(local.millisecond).padStart(3, '0')}`.replace(/0{1,2}$/, '')
                : '';
              expect(formatWireDate(date)).toBe(
                `${local.toFormat("yyyy-MM-dd'T'HH:mm:ss")}${fraction}${local.toFormat('ZZ')}`,
              );
            },
          ),
          { numRuns: 2000 },
        );
      },
    );

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
});
