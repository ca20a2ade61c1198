import { INT32_MAX, INT32_MIN } from '../values/int32';
import { UnreadableValue } from '../values/unreadable-value';
import {
  isMicrosoftDate,
  parseDotNetDate,
  parseMicrosoftDate,
  parseXsdDate,
} from '../values/dotnet-date';
import {
  ExactDecimal,
  FLOAT_STYLE,
  NUMBER_STYLE,
  NUMERAL,
  type NumberSpelling,
  parseDecimal,
  XML_DECIMAL_STYLE,
} from '../values/exact-decimal';
import { trimDotNetSpace, trimXmlSpace } from '../values/white-space';
import { formatDotNetDouble, jsonNumeralAsText } from '../values/dotnet-number-text';
import { JsonNumeral } from './json-reader';
import { type WireScalarKind } from '../model/wire-model';

/**
 * How one format turns what a client sent into a member's value, as the legacy's reader of that
 * format did: the converted value, `null`, or an UnreadableValue. Decimals stay ExactDecimal until
 * validation is done.
 */
export type WireDialect = Readonly<Record<WireScalarKind, (value: unknown) => unknown>>;

const LOWEST = BigInt(INT32_MIN);
const HIGHEST = BigInt(INT32_MAX);
const isInt32 = (value: bigint) => value >= LOWEST && value <= HIGHEST;
/** Digits alone, too few to pass an Int32's bounds: most integers a client sends. */
const PLAIN_DIGITS = /^\d{1,9}$/;

/** Whole numbers as `Int32.Parse` with the given white space and sign rules reads them. */
function readInteger(text: string, trim: (text: string) => string): number | undefined {
  if (PLAIN_DIGITS.test(text)) return Number(text);
  const body = trim(text).replace(/^([+-]?)0+(?=\d)/, '$1');
  // Longer than any Int32: refused before BigInt spends time on it.
  if (!/^[+-]?\d{1,10}$/.test(body)) return undefined;
  const value = BigInt(body);
  return isInt32(value) ? Number(value) : undefined;
}

function readDecimal(text: string, spelling: NumberSpelling): ExactDecimal | undefined {
  const value = parseDecimal(text, spelling);
  return value?.fitsDotNetDecimal() ? value : undefined;
}

const orUnreadable = <T>(value: T | undefined, raw: unknown, failsRecord = false) =>
  value === undefined ? new UnreadableValue(raw, failsRecord) : value;

/** Json.NET's integer numerals: hexadecimal `0x1A`, octal `012`, or decimal digits. */
function integerOfNumeral(text: string): bigint | undefined {
  // Past any 64-bit integer Json.NET read (it then read a decimal): left to the decimal reading.
  if (text.length > 24) return undefined;
  if (/^0[xX][0-9a-fA-F]+$/.test(text)) return BigInt(text.toLowerCase());
  if (/^0[0-7]+$/.test(text)) return BigInt(`0o${text.slice(1)}`);
  if (/^-?\d+$/.test(text) && !/^0\d/.test(text)) return BigInt(text);
  return undefined;
}

/** A JSON number, from either reader, as exact text; `undefined` for NaN, Infinity or a bad octal. */
function decimalOfJsonNumber(value: number | JsonNumeral): ExactDecimal | undefined {
  // JSON.parse reads a numeral past a double's range, such as 1e400, as Infinity.
  if (typeof value === 'number')
    return Number.isFinite(value) ? ExactDecimal.ofNumber(value) : undefined;
  const integer = integerOfNumeral(value.text);
  if (integer !== undefined) return parseDecimal(integer.toString(), NUMERAL);
  return /^-?0\d/.test(value.text) ? undefined : parseDecimal(value.text, NUMERAL);
}

const isJsonNumber = (value: unknown): value is number | JsonNumeral =>
  typeof value === 'number' || value instanceof JsonNumeral;

const textOf = (value: number | JsonNumeral) =>
  typeof value === 'number' ? String(value) : value.text;

/**
 * A numeral with a fraction or an exponent past a double's range (`1e400`): Json.NET's reader read it
 * as a double and stopped there, whatever the member's type. JSON.parse reads it as Infinity.
 */
function overflowsDouble(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isFinite(value);
  return (
    value instanceof JsonNumeral &&
    /^[^xX]*[.eE]/.test(value.text) &&
    !Number.isFinite(Number(value.text))
  );
}

const JSON_READERS: WireDialect = {
  int: (value) => {
    if (value === null || value === '') return null;
    // What nearly every client sends, JSON.parse read exactly.
    if (
      typeof value === 'number' &&
      Number.isInteger(value) &&
      value >= INT32_MIN &&
      value <= INT32_MAX
    )
      // An Int32 has no negative zero.
      return value === 0 ? 0 : value;
    if (isJsonNumber(value)) {
      if (/^-?(?:Infinity|NaN)$/.test(textOf(value))) return new UnreadableValue(textOf(value));
      // Json.NET wrapped a hexadecimal or octal numeral of up to 32 bits into an Int32 (0xFFFFFFFF is -1).
      const radixInteger =
        value instanceof JsonNumeral && /^0\d|^0x/i.test(value.text)
          ? integerOfNumeral(value.text)
          : undefined;
      if (radixInteger !== undefined && radixInteger < 2n ** 32n)
        return Number(BigInt.asIntN(32, radixInteger));
      // Json.NET refused `5.0` and `1e2` here; JSON.parse does not keep the spelling, so both
      // readers take a whole number however it is written (more lenient, never stricter).
      const exact = decimalOfJsonNumber(value);
      const whole =
        exact?.isWhole() && exact.fitsDotNetDecimal() ? exact.roundToInteger() : undefined;
      return whole !== undefined && isInt32(whole)
        ? Number(whole)
        : new UnreadableValue(textOf(value), true);
    }
    return typeof value === 'string'
      ? orUnreadable(readInteger(value, trimDotNetSpace), value)
      : new UnreadableValue(value);
  },
  decimal: (value) => {
    if (value === null || value === '') return null;
    if (isJsonNumber(value)) {
      const exact = decimalOfJsonNumber(value);
      // The literals NaN and Infinity reach the binder as floats; a bad numeral or an overflow
      // (JSON.parse's Infinity is one: JSON has no such literal) stops the reader.
      const failsRecord = typeof value === 'number' || !/(?:Infinity|NaN)$/.test(value.text);
      return orUnreadable(
        exact?.fitsDotNetDecimal() ? exact : undefined,
        textOf(value),
        failsRecord,
      );
    }
    return typeof value === 'string'
      ? orUnreadable(readDecimal(value, NUMBER_STYLE), value)
      : new UnreadableValue(value);
  },
  string: (value) => {
    if (value === null) return value;
    // Json.NET kept a lone surrogate escape (`\ud83d`); what the legacy stored reads back as U+FFFD.
    if (typeof value === 'string') return value.toWellFormed();
    if (typeof value === 'boolean') return value ? 'True' : 'False';
    // JSON.parse reads exactly the numerals of 15 digits or fewer, where integers and doubles agree.
    if (typeof value === 'number') return formatDotNetDouble(value);
    if (value instanceof JsonNumeral)
      return orUnreadable(jsonNumeralAsText(value.text), value.text, true);
    return new UnreadableValue(value);
  },
  boolean: (value) => {
    if (value === null || value === '') return null;
    if (typeof value === 'boolean') return value;
    if (isJsonNumber(value)) {
      const exact = decimalOfJsonNumber(value);
      return exact === undefined ? new UnreadableValue(textOf(value)) : exact.digits !== 0n;
    }
    if (typeof value !== 'string') return new UnreadableValue(value);
    const word = trimDotNetSpace(value).toLowerCase();
    return word === 'true' ? true : word === 'false' ? false : new UnreadableValue(value);
  },
  // A number read as an integer, anything else as text.
  intOrText: (value) =>
    isJsonNumber(value) ? JSON_READERS.int(value) : JSON_READERS.string(value),
  date: (value) => {
    if (value === null || value === '') return null;
    if (typeof value !== 'string') return new UnreadableValue(value);
    const text = value.trim();
    // Json.NET read a Microsoft date with the document: one past DateTime's range stopped the reader.
    if (isMicrosoftDate(text)) return orUnreadable(parseMicrosoftDate(text), value, true);
    return orUnreadable(parseDotNetDate(value), value);
  },
};

/** Json.NET 6 with Web API's default settings. */
export const JSON_DIALECT: WireDialect = Object.fromEntries(
  Object.entries(JSON_READERS).map(([kind, read]) => [
    kind,
    (value: unknown) =>
      overflowsDouble(value)
        ? new UnreadableValue(textOf(value as number | JsonNumeral), true)
        : read(value),
  ]),
) as WireDialect;

/** DataContractSerializer, through XmlConvert: the text of an element. */
export const XML_DIALECT: WireDialect = {
  int: (value) => orUnreadable(readInteger(String(value), trimXmlSpace), value),
  decimal: (value) => orUnreadable(readDecimal(String(value), XML_DECIMAL_STYLE), value),
  string: (value) => value,
  boolean: (value) => {
    const word = trimXmlSpace(String(value));
    if (word === 'true' || word === '1') return true;
    if (word === 'false' || word === '0') return false;
    return new UnreadableValue(value);
  },
  date: (value) => orUnreadable(parseXsdDate(String(value)), value),
  // XML text carries no type: the text as sent.
  intOrText: (value) => value,
};

/** Hexadecimal as Int32Converter reads it (`0x1A`, `&h1A`, `#1A`): 32 bits, so `0xFFFFFFFF` is -1. */
function readHexInteger(text: string): number | undefined {
  const match = /^(?:0x|&h|#)([0-9a-f]{1,8})$/i.exec(text);
  return match ? Number.parseInt(match[1], 16) | 0 : undefined;
}

/** The form binder's type converters in the invariant culture; an empty value is already null. */
export const FORM_DIALECT: WireDialect = {
  int: (value) => {
    const text = trimDotNetSpace(String(value));
    return orUnreadable(readHexInteger(text) ?? readInteger(text, trimDotNetSpace), value);
  },
  decimal: (value) => orUnreadable(readDecimal(String(value), FLOAT_STYLE), value),
  string: (value) => value,
  boolean: (value) => {
    const word = trimDotNetSpace(String(value)).toLowerCase();
    return word === 'true' ? true : word === 'false' ? false : new UnreadableValue(value);
  },
  date: (value) => orUnreadable(parseDotNetDate(String(value)), value),
  intOrText: (value) => value,
};
