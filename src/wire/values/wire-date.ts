import { DateTime, Settings } from 'luxon';

// The span both databases store in a DATETIME column.
const EARLIEST = Date.UTC(1000, 0, 1);
const LATEST = Date.UTC(10000, 0, 1) - 1;

/** The service zone's offset in minutes when it never changes (UTC, a fixed offset); else undefined. */
let fixedOffset: number | undefined;

function readFixedOffset(): void {
  const zone = Settings.defaultZone;
  fixedOffset = zone.isUniversal ? zone.offset(0) : undefined;
}
readFixedOffset();

/** The service zone's offset in minutes when it is fixed (UTC by default); undefined for a zone with rules. */
export const serviceFixedOffset = (): number | undefined => fixedOffset;

/** Sets the zone that dates without an offset are read in and that every date is written in. */
export function setServiceTimeZone(zone: string): void {
  Settings.defaultZone = zone;
  readFixedOffset();
}

/** Whether both databases' DATETIME columns hold the date as it is: years 1000 to 9999. */
export function isStorableDate(value: unknown): value is Date {
  if (!(value instanceof Date)) return false;
  const instant = value.getTime();
  return instant >= EARLIEST && instant <= LATEST;
}

// A millisecond that is not 0 has at most two trailing zeros.
const fractionOf = (millisecond: number) =>
  millisecond ? `.${String(millisecond).padStart(3, '0')}`.replace(/0{1,2}$/, '') : '';
const two = (value: number) => String(value).padStart(2, '0');

/**
 * Writes `2026-03-01T18:11:12.5+08:00` in the service zone: fraction only when non-zero, as Json.NET.
 * In a zone of one fixed offset (UTC, the default) by the date's own fields: every response writes
 * dates, and luxon's formatting costs several times as much.
 */
export function formatWireDate(value: Date): string {
  if (fixedOffset === undefined) {
    const local = DateTime.fromJSDate(value);
    return `${local.toFormat("yyyy-MM-dd'T'HH:mm:ss")}${fractionOf(local.millisecond)}${local.toFormat('ZZ')}`;
  }
  const local = new Date(value.getTime() + fixedOffset * 60_000);
  const offset = Math.abs(fixedOffset);
  return (
    `${String(local.getUTCFullYear()).padStart(4, '0')}-${two(local.getUTCMonth() + 1)}-` +
    `${two(local.getUTCDate())}T${two(local.getUTCHours())}:${two(local.getUTCMinutes())}:` +
    `${two(local.getUTCSeconds())}${fractionOf(local.getUTCMilliseconds())}` +
    `${fixedOffset < 0 ? '-' : '+'}${two(Math.floor(offset / 60))}:${two(offset % 60)}`
  );
}
