import { DateTime, Settings } from 'luxon';

// The span both databases store in a DATETIME column.
const EARLIEST = Date.UTC(1000, 0, 1);
const LATEST = Date.UTC(10000, 0, 1) - 1;

/** Sets the zone that dates without an offset are read in and that every date is written in. */
export function setServiceTimeZone(zone: string): void {
  Settings.defaultZone = zone;
}

/** Whether both databases' DATETIME columns hold the date as it is: years 1000 to 9999. */
export function isStorableDate(value: unknown): value is Date {
  if (!(value instanceof Date)) return false;
  const instant = value.getTime();
  return instant >= EARLIEST && instant <= LATEST;
}

/** Writes `2026-03-01T18:11:12.5+08:00` in the service zone: fraction only when non-zero, as Json.NET. */
export function formatWireDate(value: Date): string {
  const local = DateTime.fromJSDate(value);
  const fraction = local.millisecond
    ? `.${String(local.millisecond).padStart(3, '0')}`.replace(/0+$/, '')
    : '';
  return `${local.toFormat("yyyy-MM-dd'T'HH:mm:ss")}${fraction}${local.toFormat('ZZ')}`;
}
