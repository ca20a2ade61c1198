import { formatDotNetDouble, jsonNumeralAsText } from './dotnet-number-text';

// Each row is what the legacy service stored for the numeral in a text member (Json.NET 6.0.8 on the
// .NET double formatting of its time), read back.
describe('jsonNumeralAsText (Json.NET 6 ReadAsString)', () => {
  it.each<[string, string | undefined]>([
    ['0.30000000000000004', '0.3'],
    ['1e21', '1E+21'],
    ['1e+21', '1E+21'],
    ['1.0E21', '1E+21'],
    ['1.0', '1'],
    ['1e0', '1'],
    ['12345678901234567890123', '12345678901234567890123'],
    ['-9223372036854775809', '-9223372036854775809'],
    ['-0', '0'],
    ['-0.0', '0'],
    ['0.0', '0'],
    ['1e-7', '1E-07'],
    ['1.0E-5', '1E-05'],
    ['2.5e-5', '2.5E-05'],
    ['0.0001', '0.0001'],
    ['1e14', '100000000000000'],
    ['1e15', '1E+15'],
    ['1e16', '1E+16'],
    ['99999999999999999999.5', '1E+20'],
    ['123456789012345678', '123456789012345678'],
    ['123456789.123456789', '123456789.123457'],
    ['0.1234567890123456789', '0.123456789012346'],
    // Rounded from the exact value (…8849554), not from its 17 digits (…8850).
    ['9927186.9457828850', '9927186.94578288'],
    ['639318843965096.50', '639318843965097'],
    ['5e-324', '4.94065645841247E-324'],
    ['1e-400', '0'],
    ['1.7976931348623157e308', '1.79769313486232E+308'],
    ['1.5e300', '1.5E+300'],
    ['-1.5', '-1.5'],
    ['.5', '0.5'],
    ['5.', '5'],
    ['0e5', '0'],
    ['0x1A', '26'],
    ['0X1a', '26'],
    ['0xFFFFFFFFFFFFFFFF', '-1'],
    ['0x7FFFFFFFFFFFFFFF', '9223372036854775807'],
    ['012', '10'],
    ['00', '0'],
    ['-012', '-12'],
    ['01777777777777777777777', '-1'],
    ['NaN', 'NaN'],
    ['Infinity', 'Infinity'],
    ['-Infinity', '-Infinity'],
    // Where Json.NET's reader failed.
    ['08', undefined],
    ['-0x1A', undefined],
    ['0x', undefined],
    ['0x10000000000000000', undefined],
    ['02000000000000000000000', undefined],
    ['00.5', undefined],
    ['012.5', undefined],
    ['0.5e', undefined],
    ['1e', undefined],
    ['-', undefined],
    ['1e400', undefined],
  ])('%s is %j', (numeral, text) => {
    expect(jsonNumeralAsText(numeral)).toBe(text);
  });

  it('formats every double as .NET did, negative zero, NaN and the infinities included', () => {
    expect([-0, NaN, Infinity, -Infinity, 0.1 + 0.2, 1e21, -1e-7].map(formatDotNetDouble)).toEqual([
      '0',
      'NaN',
      'Infinity',
      '-Infinity',
      '0.3',
      '1E+21',
      '-1E-07',
    ]);
  });

  it('reads a long numeral in linear time', () => {
    const started = performance.now();
    for (const numeral of [
      '1'.repeat(100_000),
      `0${'7'.repeat(100_000)}`,
      `1.${'0'.repeat(100_000)}x`,
    ])
      jsonNumeralAsText(numeral);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
