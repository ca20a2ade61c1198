import {
  ExactDecimal,
  FLOAT_STYLE,
  NUMBER_STYLE,
  NUMERAL,
  parseDecimal,
  XML_DECIMAL_STYLE,
} from './exact-decimal';

const exact = (text: string) => parseDecimal(text, NUMERAL)!;

describe('ExactDecimal', () => {
  it.each([
    ['0.5', 0n],
    ['1.5', 2n],
    ['2.5', 2n],
    ['-2.5', -2n],
    ['0.50000000000000001', 1n],
    ['0.99', 1n],
    ['100000000.4', 100000000n],
    ['100000000.5', 100000000n],
    ['100000000.51', 100000001n],
    ['1e-5', 0n],
    ['1.5e3', 1500n],
  ])('rounds %s half to even to %s', (text, whole) => {
    expect(exact(text).roundToInteger()).toBe(whole);
  });

  it("holds what .NET's decimal holds and nothing larger", () => {
    expect(exact('79228162514264337593543950335').fitsDotNetDecimal()).toBe(true);
    expect(exact('79228162514264337593543950336').fitsDotNetDecimal()).toBe(false);
    expect(exact('-79228162514264337593543950335').fitsDotNetDecimal()).toBe(true);
    expect(exact('1e30').fitsDotNetDecimal()).toBe(false);
    expect(exact('2.0416666666666666666666666667').fitsDotNetDecimal()).toBe(true);
    expect(exact('1.23456789012345678901234567890123').fitsDotNetDecimal()).toBe(true);
  });

  it.each([
    ['99999999999.9999', true],
    ['-99999999999.9999', true],
    ['100000000000', false],
    ['633642.0000000001', false],
    ['0.30000000000000004', false],
    ['5.12340000', true],
    ['1e5', true],
    ['1e11', false],
    ['0.00001', false],
  ])('knows whether DECIMAL(15,4) stores %s exactly: %s', (text, fits) => {
    expect(exact(text).fitsColumn(15, 4)).toBe(fits);
  });

  it('keeps what decides rounding and fit of a numeral of any length, at a bounded cost', () => {
    const started = Date.now();
    const half = exact(`0.5${'0'.repeat(500000)}1`);
    const exactlyHalf = exact(`0.5${'0'.repeat(500000)}`);
    const huge = exact(`1${'0'.repeat(500000)}`);
    expect(Date.now() - started).toBeLessThan(500);
    expect(half.roundToInteger()).toBe(1n);
    expect(exactlyHalf.roundToInteger()).toBe(0n);
    expect(half.fitsColumn(15, 4)).toBe(false);
    expect(exactlyHalf.fitsColumn(15, 4)).toBe(true);
    expect(huge.fitsDotNetDecimal()).toBe(false);
  });

  it.each([
    ['0.2', '0.2', 0],
    ['0.20', '2e-1', 0],
    ['0', '-0', 0],
    ['0.2000000000000000001', '0.2', 1],
    ['0.1999999999999999999', '0.2', -1],
    ['-0.2', '0.2', -1],
    ['-0.3', '-0.2', -1],
    ['-0.2', '-0.2000000000000000001', 1],
    ['100', '1e2', 0],
    ['99.99', '1e2', -1],
    ['1e-1000', '0', 1],
    ['-1e-1000', '0', -1],
    ['123456789012345678901234567890.5', '123456789012345678901234567890.4', 1],
  ])('compares %s with %s exactly: %d', (left, right, sign) => {
    expect(Math.sign(exact(left).compare(exact(right)))).toBe(sign);
    expect(Math.sign(exact(right).compare(exact(left)))).toBe(-sign || 0);
  });

  it('compares values far apart at once, without scaling their digits', () => {
    const started = Date.now();
    const tiny = exact(`0.${'0'.repeat(500000)}1`);
    expect(tiny.compare(exact('0.2'))).toBeLessThan(0);
    expect(tiny.compare(exact('0'))).toBeGreaterThan(0);
    expect(exact('1e999').compare(tiny)).toBeGreaterThan(0);
    expect(Date.now() - started).toBeLessThan(100);
  });

  it.each([
    ['1.2500', 2, 1],
    ['1e2', 0, 3],
    ['0.5', 1, 0],
    ['0.0001', 4, 0],
    ['-123.45', 2, 3],
    ['0.000', 0, 0],
    ['99999999999.9999', 4, 11],
  ])('counts the digits of %s: %d after the point, %d before', (text, places, whole) => {
    expect(exact(text).decimalPlaces()).toBe(places);
    expect(exact(text).wholeDigits()).toBe(whole);
  });

  it('spells itself out exactly and converts to the nearest double', () => {
    expect(exact('2.0416666666666666666666666667').toString()).toBe(
      '2.0416666666666666666666666667',
    );
    expect(exact('-1.5e3').toString()).toBe('-1500');
    expect(exact('1e-5').toString()).toBe('0.00001');
    expect(exact('-0').toString()).toBe('0');
    expect(exact('633642.0000000001').toNumber()).toBe(633642.0000000001);
    expect(ExactDecimal.ofNumber(1e21).toString()).toBe('1000000000000000000000');
  });
});

describe('parseDecimal', () => {
  it.each([
    // Json.NET's strings: NumberStyles.Number.
    [NUMBER_STYLE, '1,000.5', '1000.5'],
    [NUMBER_STYLE, '1,0,0', '100'],
    [NUMBER_STYLE, ' +5 ', '5'],
    [NUMBER_STYLE, '5-', '-5'],
    [NUMBER_STYLE, '.5', '0.5'],
    [NUMBER_STYLE, '5.', '5'],
    [NUMBER_STYLE, '5e2', undefined],
    [NUMBER_STYLE, ',5', undefined],
    [NUMBER_STYLE, '(5)', undefined],
    [NUMBER_STYLE, '$5', undefined],
    [NUMBER_STYLE, '0x1A', undefined],
    [NUMBER_STYLE, 'NaN', undefined],
    [NUMBER_STYLE, '', undefined],
    [NUMBER_STYLE, '.', undefined],
    // The form binder: NumberStyles.Float.
    [FLOAT_STYLE, ' 1e-5 ', '0.00001'],
    [FLOAT_STYLE, '1,000', undefined],
    // XmlConvert.ToDecimal.
    [XML_DECIMAL_STYLE, ' 5. ', '5'],
    [XML_DECIMAL_STYLE, '-.5', '-0.5'],
    [XML_DECIMAL_STYLE, '1e-5', undefined],
    [XML_DECIMAL_STYLE, '1,000', undefined],
    // A numeral takes no white space.
    [NUMERAL, ' 5', undefined],
  ])('reads %j %j as %j', (style, text, expected) => {
    expect(parseDecimal(text, style)?.toString()).toBe(expected);
  });
});
