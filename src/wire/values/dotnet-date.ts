import { DateTime } from 'luxon';
import { serviceFixedOffset } from './wire-date';

/**
 * The date spellings the legacy stack read: Json.NET and the form binder through .NET's
 * `DateTime.Parse` in the invariant culture (plus Json.NET's `/Date(ms)/`), DataContractSerializer
 * through `XmlConvert` (XML Schema's forms only). A spelling without an offset is read in the service
 * time zone (luxon's default zone).
 */

interface DateParts {
  year: number;
  month: number;
  day: number;
  hour?: number;
  minute?: number;
  second?: number;
  millisecond?: number;
  /** Minutes east of UTC; absent for a local time. */
  offset?: number;
}

// .NET's DateTime: years 1 to 9999.
const EARLIEST = DateTime.fromObject({ year: 1, month: 1, day: 1 }, { zone: 'utc' }).toMillis();
const LATEST = DateTime.fromObject({ year: 9999, month: 12, day: 31 }, { zone: 'utc' })
  .endOf('day')
  .toMillis();

/** Whether a date is one .NET's DateTime can hold. */
export function isDotNetDate(value: unknown): value is Date {
  if (!(value instanceof Date)) return false;
  const instant = value.getTime();
  return instant >= EARLIEST && instant <= LATEST;
}

const between = (value: number, low: number, high: number) =>
  Number.isInteger(value) && value >= low && value <= high;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeapYear = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
/** The proleptic Gregorian calendar's days in a month, as luxon and JavaScript's Date count them. */
const daysInMonth = (year: number, month: number) =>
  month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1];

/**
 * Local date fields at a fixed offset as an instant, by luxon's own rules of validity (24:00 is the
 * next midnight) and arithmetic, without luxon: most dates a client sends are read this way.
 */
function atFixedOffset(parts: DateParts, offset: number): Date | undefined {
  const { year, month, day, hour = 0, minute = 0, second = 0, millisecond = 0 } = parts;
  const validHour =
    between(hour, 0, 23) || (hour === 24 && minute === 0 && second === 0 && millisecond === 0);
  if (
    !Number.isInteger(year) ||
    !between(month, 1, 12) ||
    !between(day, 1, daysInMonth(year, month)) ||
    !validHour ||
    !between(minute, 0, 59) ||
    !between(second, 0, 59) ||
    !between(millisecond, 0, 999)
  )
    return undefined;
  const local = new Date(0);
  local.setUTCFullYear(year, month - 1, day);
  local.setUTCHours(hour, minute, second, millisecond);
  const date = new Date(local.getTime() - offset * 60_000);
  return isDotNetDate(date) ? date : undefined;
}

/** Fields read at their own offset, else in the service zone. */
function toDate(parts: DateParts): Date | undefined {
  const offset = parts.offset ?? serviceFixedOffset();
  if (offset !== undefined) return atFixedOffset(parts, offset);
  // A zone with rules (daylight saving time): luxon knows them.
  const { year, month, day, hour, minute, second, millisecond } = parts;
  const parsed = DateTime.fromObject({ year, month, day, hour, minute, second, millisecond });
  if (!parsed.isValid) return undefined;
  const date = parsed.toJSDate();
  return isDotNetDate(date) ? date : undefined;
}

const millisecondsOf = (fraction: string | undefined) =>
  fraction ? Number(fraction.slice(0, 3).padEnd(3, '0')) : 0;

/** `Z`, `GMT`, `+08`, `+0800` or `+08:00` as minutes east of UTC. */
function offsetOf(zone: string | undefined): number | undefined {
  if (!zone) return undefined;
  if (/^(?:z|gmt)$/i.test(zone)) return 0;
  const match = /^([+-])(\d{1,2})(?::?(\d{2}))?$/.exec(zone);
  if (!match) return undefined;
  const minutes = Number(match[2]) * 60 + Number(match[3] ?? 0);
  return match[1] === '-' ? -minutes : minutes;
}

/** The parts of a year-first date as a pattern captured them; what is left out is its start. */
function partsOf(
  ...[year, month, day, hour, minute, second, fraction, zone]: (string | undefined)[]
): DateParts {
  return {
    year: Number(year),
    month: Number(month ?? 1),
    day: Number(day ?? 1),
    hour: Number(hour ?? 0),
    minute: Number(minute ?? 0),
    second: Number(second ?? 0),
    millisecond: millisecondsOf(fraction),
    offset: offsetOf(zone),
  };
}

// Json.NET's Microsoft dates: milliseconds since 1970 UTC, the offset only says how it was shown.
const MICROSOFT_DATE = /^\/Date\((-?\d{1,15})(?:[+-]\d{4})?\)\/$/;

export const isMicrosoftDate = (text: string) => MICROSOFT_DATE.test(text);

export function parseMicrosoftDate(text: string): Date | undefined {
  const match = MICROSOFT_DATE.exec(text);
  if (!match) return undefined;
  const date = new Date(Number(match[1]));
  return isDotNetDate(date) ? date : undefined;
}

// XML Schema's dateTime, date, gYearMonth and gYear, and time (today), each with an optional zone.
const XSD_DATE =
  /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?)?)?)?(Z|[+-]\d{2}:\d{2})?$/;
const XSD_TIME = /^(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})?$/;

/** `XmlConvert.ToDateTime` with the round-trip mode, as DataContractSerializer reads a DateTime. */
export function parseXsdDate(text: string): Date | undefined {
  const trimmed = text.trim();
  const date = XSD_DATE.exec(trimmed);
  if (date) {
    const [, year, month, day, hour, minute, second, fraction, zone] = date;
    return toDate(partsOf(year, month, day, hour, minute, second, fraction, zone));
  }
  const time = XSD_TIME.exec(trimmed);
  if (!time) return undefined;
  const [, hour, minute, second, fraction, zone] = time;
  return onToday({
    hour: Number(hour),
    minute: Number(minute),
    second: Number(second),
    millisecond: millisecondsOf(fraction),
    offset: offsetOf(zone),
  });
}

function onToday(time: Omit<DateParts, 'year' | 'month' | 'day'>): Date | undefined {
  const { year, month, day } = DateTime.now();
  return toDate({ year, month, day, ...time });
}

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
const DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

/** January is 1; a name or its three-letter abbreviation. */
function monthOf(word: string): number | undefined {
  const index = MONTHS.findIndex((name) => name === word || name.slice(0, 3) === word);
  return index < 0 ? undefined : index + 1;
}

const isDayName = (word: string) => DAYS.some((name) => name === word || name.slice(0, 3) === word);

/** The invariant culture's two-digit years: up to 29 is 20xx, from 30 it is 19xx. */
const fullYear = (digits: string) =>
  digits.length > 2 ? Number(digits) : Number(digits) + (Number(digits) <= 29 ? 2000 : 1900);

// The year-first spellings DateTime.Parse reads: 2024-01-02, 2024/1/2, 2024.01, with a time after T or a space.
const YEAR_FIRST =
  /^(\d{4})([-/.])(\d{1,2})(?:\2(\d{1,2}))?(?:(?:T|\s+)(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d+))?)?)?\s*(Z|GMT|[+-]\d{1,2}(?::?\d{2})?)?$/i;
const TIME_OF_DAY =
  /(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d+))?)?(?:\s*([ap])\.?m\.?)?(?:\s*(Z|GMT|[+-]\d{1,2}(?::?\d{2})?))?/i;

/**
 * Far more words than any spelling read has (`Tuesday, 02 January 2024 GMT` has five, with empty ends
 * seven): a text of thousands of separators is refused without splitting it all.
 */
const MAX_PIECES = 16;

/**
 * .NET's `DateTime.Parse` in the invariant culture, for the spellings clients send: ISO 8601 (with a
 * space or T, any fraction, an offset), month first (`01/02/2024` is 2 January), month names
 * (`2 January 2024`, `Jan 2, 2024`, `Tuesday, January 02, 2024`), RFC 1123 and a time alone (today).
 */
export function parseDotNetDate(text: string): Date | undefined {
  const trimmed = text.trim();
  const iso = YEAR_FIRST.exec(trimmed);
  if (iso) {
    const [, year, , month, day, hour, minute, second, fraction, zone] = iso;
    return toDate(partsOf(year, month, day, hour, minute, second, fraction, zone));
  }
  let hour = 0;
  let minute = 0;
  let second = 0;
  let millisecond = 0;
  let offset: number | undefined;
  let rest = trimmed;
  const time = TIME_OF_DAY.exec(trimmed);
  if (time) {
    const [whole, h, m, s, fraction, meridiem, zone] = time;
    hour = Number(h);
    // An hour past 12 keeps its value whatever AM or PM says, as DateTime.Parse read it.
    if (meridiem && hour <= 12) {
      if (hour === 0) return undefined;
      hour = (hour % 12) + (meridiem.toLowerCase() === 'p' ? 12 : 0);
    }
    minute = Number(m);
    second = Number(s ?? 0);
    millisecond = millisecondsOf(fraction);
    offset = offsetOf(zone);
    rest = `${trimmed.slice(0, time.index)} ${trimmed.slice(time.index + whole.length)}`;
  }
  const clock = { hour, minute, second, millisecond, offset };
  const pieces = rest.toLowerCase().split(/[\s,/.-]+/, MAX_PIECES + 1);
  if (pieces.length > MAX_PIECES) return undefined;
  const words = pieces.filter((word) => word !== '' && !isDayName(word));
  if (words.at(-1) === 'gmt') {
    words.pop();
    clock.offset = 0;
  }
  if (words.length === 0) return time ? onToday(clock) : undefined;
  const numbers = words.filter((word) => /^\d{1,4}$/.test(word));
  const names = words.filter((word) => !/^\d+$/.test(word));
  if (names.length > 1 || numbers.length + names.length !== words.length) return undefined;
  const now = DateTime.now();
  if (names.length === 1) {
    const month = monthOf(names[0]);
    if (month === undefined || numbers.length === 0 || numbers.length > 2) return undefined;
    if (numbers.length === 1) {
      const [only] = numbers;
      return only.length > 2 || Number(only) > 31
        ? toDate({ year: fullYear(only), month, day: 1, ...clock })
        : toDate({ year: now.year, month, day: Number(only), ...clock });
    }
    const [first, second] = numbers;
    return first.length === 4
      ? toDate({ year: Number(first), month, day: Number(second), ...clock })
      : toDate({ year: fullYear(second), month, day: Number(first), ...clock });
  }
  if (numbers.length === 3) {
    const [month, day, year] = numbers;
    return toDate({ year: fullYear(year), month: Number(month), day: Number(day), ...clock });
  }
  if (numbers.length === 2) {
    const [first, second] = numbers;
    return second.length === 4
      ? toDate({ year: Number(second), month: Number(first), day: 1, ...clock })
      : toDate({ year: now.year, month: Number(first), day: Number(second), ...clock });
  }
  return undefined;
}
