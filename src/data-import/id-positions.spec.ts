import fc from 'fast-check';
import { IdPositions } from './id-positions';

describe('IdPositions', () => {
  it('answers as a Map of first positions would, across growth', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), { maxLength: 3000 }),
        fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 3000 }),
        (spread, small) => {
          const table = new IdPositions(2);
          const oracle = new Map<number, number>();
          [...spread, ...small, ...spread].forEach((id, position) => {
            expect(table.firstPosition(id, position)).toBe(oracle.get(id));
            if (!oracle.has(id)) oracle.set(id, position);
          });
        },
      ),
    );
  });

  it('holds a million consecutive ids, each found at its position', () => {
    const table = new IdPositions();
    let repeated = 0;
    for (let id = 1; id <= 1_000_000; id++)
      if (table.firstPosition(id, id - 1) !== undefined) repeated++;
    expect(repeated).toBe(0);
    expect(table.firstPosition(1, 7)).toBe(0);
    expect(table.firstPosition(1_000_000, 7)).toBe(999_999);
    expect(table.firstPosition(0, 7)).toBeUndefined();
  });
});
