import { neutralised, restored } from './csv-formulas';

describe('CSV formulas', () => {
  it.each([
    [
      '=HYPERLINK("https://attacker.example/","Angela Cruz")',
      `'=HYPERLINK("https://attacker.example/","Angela Cruz")`,
    ],
    ['+63 912 555 0101', "'+63 912 555 0101"],
    ['-', "'-"],
    ['@SUM(1+1)', "'@SUM(1+1)"],
    ['\tTabbed', "'\tTabbed"],
    ['\r=1+1', "'\r=1+1"],
    ["'=quoted already", "''=quoted already"],
    ["''-twice", "'''-twice"],
    ['Angela Cruz', 'Angela Cruz'],
    ["'quoted, not a formula", "'quoted, not a formula"],
    ['a=1', 'a=1'],
    [' =spaced', ' =spaced'],
    ['', ''],
  ])('writes %j as %j, and reads it back', (text, cell) => {
    expect(neutralised(text)).toBe(cell);
    expect(restored(cell)).toBe(text);
  });
});
