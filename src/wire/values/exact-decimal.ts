import { trimDotNetSpace } from './white-space';

/**
 * A decimal number exactly as a client spelled it, for the rules a double cannot decide: .NET's
 * `decimal` range, integer rounding half to even (`0.50000000000000001` rounds to 1, its double to 0),
 * and whether a column of a given precision and scale holds it without rounding.
 */
export class ExactDecimal {
  private constructor(
    readonly negative: boolean,
    /** The digits without sign or point, leading zeros removed. */
    readonly digits: bigint,
    /** How many of those digits follow the decimal point (negative: trailing zeros left out). */
    readonly scale: number,
  ) {}

  static of(negative: boolean, integer: string, fraction: string, exponent: number): ExactDecimal {
    const spelled = `${integer}${fraction}`.replace(/^0+/, '');
    // Past any decimal's 29 digits, the rest only decides rounding and fit: a nonzero rest is kept as
    // one digit, so a megabyte of digits costs no more than eighty (BigInt parsing is quadratic).
    const kept = spelled.slice(0, SIGNIFICANT_DIGITS_KEPT);
    const rest = spelled.slice(SIGNIFICANT_DIGITS_KEPT);
    const sticky = /[1-9]/.test(rest) ? '1' : '0';
    const text = rest === '' ? kept : `${kept}${sticky}`;
    const digits = BigInt(text || '0');
    const scale = fraction.length - exponent - (spelled.length - text.length);
    return new ExactDecimal(negative && digits !== 0n, digits, scale);
  }

  /** The exact value of a finite double, through its shortest round-trip spelling. */
  static ofNumber(value: number): ExactDecimal {
    const parsed = parseDecimal(String(value), NUMERAL);
    if (!parsed) throw new RangeError(`${value} is not a finite number`);
    return parsed;
  }

  /** Rounded half to even to a whole number, as .NET's `Convert.ToInt32(decimal)` rounds. */
  roundToInteger(): bigint {
    let magnitude: bigint;
    if (this.scale <= 0) magnitude = this.digits * 10n ** BigInt(-this.scale);
    else {
      const unit = 10n ** BigInt(this.scale);
      magnitude = this.digits / unit;
      const twiceRest = (this.digits % unit) * 2n;
      if (twiceRest > unit || (twiceRest === unit && magnitude % 2n === 1n)) magnitude += 1n;
    }
    return this.negative ? -magnitude : magnitude;
  }

  /** Whether it has no fraction, however it is spelled (`5.0`, `1e2`). */
  isWhole(): boolean {
    return this.scale <= 0 || this.digits % 10n ** BigInt(this.scale) === 0n;
  }

  /** Whether .NET's `decimal` holds it: magnitude below 2^96; excess fraction digits are rounded there. */
  fitsDotNetDecimal(): boolean {
    // More whole digits than 2^96 has (29) never fit, and are not worth multiplying out.
    if (this.digits.toString().length - this.scale > 29) return false;
    const whole = this.roundToInteger();
    return (whole < 0n ? -whole : whole) <= DOTNET_DECIMAL_MAX;
  }

  /** Whether a DECIMAL(precision, scale) column stores it without rounding. */
  fitsColumn(precision: number, scale: number): boolean {
    return this.decimalPlaces() <= scale && this.wholeDigits() <= precision - scale;
  }

  /** Digits after the decimal point, trailing zeros not counted: `1.2500` has 2, `1e2` has 0. */
  decimalPlaces(): number {
    let { digits, scale } = this;
    while (scale > 0 && digits % 10n === 0n) {
      digits /= 10n;
      scale--;
    }
    return digits === 0n ? 0 : Math.max(0, scale);
  }

  /** Digits before the decimal point, leading zeros not counted: `123.45` has 3, `0.5` has 0. */
  wholeDigits(): number {
    return this.digits === 0n ? 0 : Math.max(0, this.digits.toString().length - this.scale);
  }

  /**
   * Compares the exact values, whatever their spellings (`0.20` equals `2e-1`): negative when this is
   * the smaller. Never rounds, so `0.2000000000000000001` is above `0.2`, which a double cannot tell.
   */
  compare(other: ExactDecimal): number {
    const sign = (value: ExactDecimal) => (value.digits === 0n ? 0 : value.negative ? -1 : 1);
    const [own, others] = [sign(this), sign(other)];
    if (own !== others || own === 0) return own - others;
    // Same sign: the magnitude with the higher leading digit position is the larger, found without
    // scaling a number of many digits by a power of ten.
    const lead = (value: ExactDecimal) => value.digits.toString().length - value.scale;
    const [ownLead, otherLead] = [lead(this), lead(other)];
    let magnitude: number;
    if (ownLead !== otherLead) magnitude = ownLead > otherLead ? 1 : -1;
    else {
      // The same leading position: the scales differ by no more than the digits do.
      const scale = Math.max(this.scale, other.scale);
      const ownDigits = this.digits * 10n ** BigInt(scale - this.scale);
      const otherDigits = other.digits * 10n ** BigInt(scale - other.scale);
      magnitude = ownDigits === otherDigits ? 0 : ownDigits > otherDigits ? 1 : -1;
    }
    return own * magnitude;
  }

  /** The value in plain digits, as exact as it was sent. */
  toString(): string {
    const digits = this.digits.toString();
    const whole =
      this.scale <= 0
        ? `${digits}${'0'.repeat(-this.scale)}`
        : `${digits.padStart(this.scale + 1, '0').slice(0, -this.scale)}.${digits.padStart(this.scale, '0').slice(-this.scale)}`;
    return this.negative ? `-${whole}` : whole;
  }

  /** The nearest double. */
  toNumber(): number {
    const magnitude = Number(`${this.digits}e${-this.scale}`);
    return this.negative ? -magnitude : magnitude;
  }
}

/** Significant digits kept exactly: far past the 29 of .NET's decimal and the 15 of a column. */
const SIGNIFICANT_DIGITS_KEPT = 80;

/** .NET's `decimal.MaxValue`: 2^96 - 1. */
const DOTNET_DECIMAL_MAX = 2n ** 96n - 1n;

/** Which parts of .NET's `NumberStyles` a spelling may use. */
export interface NumberSpelling {
  readonly whitespace: boolean;
  readonly thousands: boolean;
  readonly trailingSign: boolean;
  readonly exponent: boolean;
}

/** A JSON numeral, as Json.NET hands it to `decimal.Parse` (Number with AllowExponent). */
export const NUMERAL: NumberSpelling = {
  whitespace: false,
  thousands: false,
  trailingSign: false,
  exponent: true,
};

/** `NumberStyles.Number`: Json.NET's reading of a decimal given as a JSON string. */
export const NUMBER_STYLE: NumberSpelling = {
  whitespace: true,
  thousands: true,
  trailingSign: true,
  exponent: false,
};

/** `NumberStyles.Float`: the form binder's DecimalConverter. */
export const FLOAT_STYLE: NumberSpelling = {
  whitespace: true,
  thousands: false,
  trailingSign: false,
  exponent: true,
};

/** `XmlConvert.ToDecimal`: sign, digits and point between optional white space. */
export const XML_DECIMAL_STYLE: NumberSpelling = {
  whitespace: true,
  thousands: false,
  trailingSign: false,
  exponent: false,
};

const spellingPatterns = new Map<NumberSpelling, RegExp>();

function patternOf(spelling: NumberSpelling): RegExp {
  let pattern = spellingPatterns.get(spelling);
  if (!pattern) {
    const integer = spelling.thousands ? '(\\d[\\d,]*)?' : '(\\d*)';
    const exponent = spelling.exponent ? '(?:[eE]([+-]?\\d+))?' : '()';
    const trailing = spelling.trailingSign ? '([+-]?)' : '()';
    pattern = new RegExp(`^([+-]?)${integer}(?:\\.(\\d*))?${exponent}${trailing}$`);
    spellingPatterns.set(spelling, pattern);
  }
  return pattern;
}

/** Reads a decimal spelled as the given style allows; `undefined` when it is not such a spelling. */
export function parseDecimal(text: string, spelling: NumberSpelling): ExactDecimal | undefined {
  const body = spelling.whitespace ? trimDotNetSpace(text) : text;
  const match = patternOf(spelling).exec(body);
  if (!match) return undefined;
  const [, leadingSign, integer = '', fraction = '', exponent = '', trailingSign] = match;
  if (integer === '' && fraction === '') return undefined;
  if (leadingSign && trailingSign) return undefined;
  const exponentValue = exponent === '' ? 0 : Number(exponent);
  // An exponent past any decimal's reach: the value is 0 or overflows, whatever its digits.
  if (Math.abs(exponentValue) > 1000) {
    return exponentValue < 0 ? ExactDecimal.of(false, '0', '', 0) : undefined;
  }
  const sign = leadingSign || trailingSign;
  return ExactDecimal.of(sign === '-', integer.replace(/,/g, ''), fraction, exponentValue);
}
