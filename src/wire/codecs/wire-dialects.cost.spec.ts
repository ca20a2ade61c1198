import fc from 'fast-check';
import { type WireScalarKind } from '../model/wire-model';
import { FORM_DIALECT, JSON_DIALECT, type WireDialect, XML_DIALECT } from './wire-dialects';

/**
 * Every reading of a value costs time linear in its length, whatever its shape. A value is a prefix,
 * a unit repeated n or 4n times, and a suffix, each drawn from the characters numbers, booleans and
 * dates are spelled with; the larger may cost at most SLOWEST_RATIO times the smaller (linear: 4,
 * quadratic: 16). The end-to-end suite (test/input-cost.e2e-spec.ts) sends the shapes named in
 * advance through every format; this one looks for the shapes nobody named.
 */
const SLOWEST_RATIO = 6;
const UNITS = 4096;
const ATTEMPTS = 3;

const DIALECTS: ReadonlyArray<readonly [string, WireDialect]> = [
  ['JSON', JSON_DIALECT],
  ['XML', XML_DIALECT],
  ['form', FORM_DIALECT],
];
const KINDS: readonly WireScalarKind[] = [
  'int',
  'decimal',
  'boolean',
  'date',
  'string',
  'intOrText',
];

const WHITE_SPACE = ' \t\n\v\f\r\u0085\u00a0';
const SPELLING = fc.constantFrom(
  ...`${WHITE_SPACE}0123456789+-.,eExX:/TZ()&#hapmMDGtrufls`.split(''),
);
const piece = (maxLength: number) => fc.string({ unit: SPELLING, maxLength });
/** What is repeated: often white space or digits alone, the runs a reader may scan again and again. */
const UNIT = fc.oneof(
  fc.string({ unit: fc.constantFrom(...WHITE_SPACE.split('')), minLength: 1, maxLength: 3 }),
  fc.string({ unit: fc.constantFrom(...'0123456789'.split('')), minLength: 1, maxLength: 3 }),
  fc.string({ unit: SPELLING, minLength: 1, maxLength: 4 }),
);

/** The fastest of three readings of the value, each repeated until it takes a measurable time. */
function readingMs(read: (value: unknown) => unknown, value: string): number {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round++) {
    let times = 0;
    const started = performance.now();
    do {
      read(value);
      times++;
    } while (performance.now() - started < 2);
    best = Math.min(best, (performance.now() - started) / times);
  }
  return best;
}

/** Noise only slows a reading: a ratio past the bound is measured again before it counts. */
function costRatio(read: (value: unknown) => unknown, valueOf: (units: number) => string): number {
  let best = Number.POSITIVE_INFINITY;
  for (let attempt = 0; attempt < ATTEMPTS && best > SLOWEST_RATIO; attempt++) {
    const small = readingMs(read, valueOf(UNITS));
    best = Math.min(best, readingMs(read, valueOf(4 * UNITS)) / small);
  }
  return best;
}

describe('reading a value costs time linear in its length', () => {
  it.each(DIALECTS.flatMap(([name, dialect]) => KINDS.map((kind) => ({ name, kind, dialect }))))(
    '$name $kind',
    ({ kind, dialect }) => {
      const read = dialect[kind];
      fc.assert(
        fc.property(piece(12), UNIT, piece(12), (prefix, unit, suffix) => {
          const ratio = costRatio(read, (units) => `${prefix}${unit.repeat(units)}${suffix}`);
          return ratio <= SLOWEST_RATIO;
        }),
        { numRuns: 20 },
      );
    },
  );
});
