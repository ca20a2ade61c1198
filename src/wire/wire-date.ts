import { DateTime, Settings } from 'luxon';

// ISO 8601 calendar dates, optionally with a time and an offset; .NET writes up to 7 fractional digits.
const ISO_DATE_TIME =
  /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?$/i;

// The span both databases store in a DATETIME column.
const EARLIEST = Date.UTC(1000, 0, 1);
const LATEST = Date.UTC(10000, 0, 1) - 1;

/** Sets the zone that dates without an offset are read in and that every date is written in. */
export function setServiceTimeZone(zone: string): void {
  Settings.defaultZone = zone;
}

export function isValidTimeZone(zone: string): boolean {
  return DateTime.local({ zone }).isValid;
}

/** Reads an ISO 8601 date; sub-millisecond digits are dropped, as a JavaScript date holds milliseconds. */
export function parseWireDate(text: string): Date | undefined {
  if (!ISO_DATE_TIME.test(text)) return undefined;
  const parsed = DateTime.fromISO(text.replace(',', '.'));
  if (!parsed.isValid) return undefined;
  const instant = parsed.toMillis();
  return instant >= EARLIEST && instant <= LATEST ? parsed.toJSDate() : undefined;
}

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
