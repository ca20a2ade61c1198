/**
 * How .NET Framework wrote a double with `ToString()` in the invariant culture: the general format at
 * 15 significant digits ("G15"), correctly rounded from the double's exact value, trailing zeros
 * dropped; fixed-point for exponents -5 < e < 15, otherwise `1E+21`, `1E-07` (at least two exponent
 * digits); `NaN`, `Infinity`, `-Infinity`; negative zero as `0`.
 */
export function formatDotNetDouble(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
  if (value === 0) return '0';
  // toExponential rounds the exact value, as .NET did; its exponent is the rounded one.
  const [mantissa, exponentText] = Math.abs(value).toExponential(14).split('e');
  // Fifteen digits come back from a double unchanged, trailing zeros dropped.
  const digits = String(Number(mantissa)).replace('.', '');
  const exponent = Number(exponentText);
  const sign = value < 0 ? '-' : '';
  if (exponent <= -5 || exponent >= 15) {
    const fraction = digits.length > 1 ? `.${digits.slice(1)}` : '';
    const power = String(Math.abs(exponent)).padStart(2, '0');
    return `${sign}${digits[0]}${fraction}E${exponent < 0 ? '-' : '+'}${power}`;
  }
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0');
  const fraction = digits.slice(exponent + 1);
  return fraction === '' ? `${sign}${whole}` : `${sign}${whole}.${fraction}`;
}

const INT64_SPAN = 2n ** 64n;

/** `Convert.ToInt64(text, radix)`: up to 64 bits, wrapped into a signed Int64 (0xFFFFFFFFFFFFFFFF is -1). */
function int64OfRadix(digits: string, radix: 8 | 16): bigint | undefined {
  const valid = radix === 16 ? /^[0-9a-fA-F]+$/ : /^[0-7]+$/;
  if (!valid.test(digits)) return undefined;
  const value = BigInt(`${radix === 16 ? '0x' : '0o'}${digits}`);
  return value < INT64_SPAN ? BigInt.asIntN(64, value) : undefined;
}

// double.TryParse with NumberStyles.Float, as much of it as Json.NET's reader let through.
const FLOAT_NUMERAL = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * The text Json.NET 6's reader made of a number token where a string was expected (its
 * `ReadAsString`), from the numeral as written; `undefined` where its reader failed on the numeral.
 * A leading `0` is hexadecimal (`0x1A`, 26) or octal (`012`, 10), read as 64 bits; other whole
 * numerals are integers of any length, written in full; the rest were doubles, written as .NET wrote
 * a double (`0.30000000000000004` is `0.3`, `1e21` is `1E+21`).
 */
export function jsonNumeralAsText(text: string): string | undefined {
  if (text === 'NaN' || text === 'Infinity' || text === '-Infinity') return text;
  if (/^0[xX]/.test(text)) return int64OfRadix(text.slice(2), 16)?.toString();
  if (/^0[^.eE]/.test(text)) return int64OfRadix(text.slice(1), 8)?.toString();
  if (/^-?\d+$/.test(text)) return BigInt(text).toString();
  if (!FLOAT_NUMERAL.test(text)) return undefined;
  const value = Number(text);
  // Past a double's range: .NET's double.TryParse failed.
  return Number.isFinite(value) ? formatDotNetDouble(value) : undefined;
}
