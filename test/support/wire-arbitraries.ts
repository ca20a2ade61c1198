import fc from 'fast-check';
import {
  INT32_MAX,
  INT32_MIN,
  DECIMAL_PRECISION,
  DECIMAL_SCALE,
  type WireClass,
  type WireMember,
  type WireModel,
  type WireScalarMember,
  wireModelOf,
} from '../../src/wire';

/** Text every format can carry: well-formed Unicode without the characters XML 1.0 cannot hold. */
// eslint-disable-next-line no-control-regex
const NON_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;

export interface ArbitraryOptions {
  /** Forms cannot tell an empty value from null, nor an empty list from an absent one. */
  readonly formSafe?: boolean;
}

const COLUMN_WHOLE_DIGITS = DECIMAL_PRECISION - DECIMAL_SCALE;
const EARLIEST = new Date('1000-01-01T00:00:00.000Z');
const LATEST = new Date('9999-12-31T23:59:59.999Z');

/** The whole number of `unit`s a bound allows on its side, never past the bound (1 lower, -1 upper). */
function unitsWithin(bound: number, unit: number, exclusive: boolean, side: 1 | -1): number {
  const units = bound * unit;
  const inside = side > 0 ? Math.ceil(units) : Math.floor(units);
  return exclusive && inside === units ? inside + side : inside;
}

/**
 * A decimal of the member: a whole number of its smallest step, within its bounds (the legacy range
 * as whole values, the exact ones as declared), its precision and DECIMAL(15,4).
 */
function decimalArbitrary(member: WireScalarMember): fc.Arbitrary<number> {
  const places = Math.min(member.scale ?? DECIMAL_SCALE, DECIMAL_SCALE);
  const unit = 10 ** places;
  const wholeDigits = Math.min(
    COLUMN_WHOLE_DIGITS,
    member.precision === undefined ? Infinity : member.precision - (member.scale ?? 0),
  );
  const largest = 10 ** (wholeDigits + places) - 1;
  const lows = [-largest];
  const highs = [largest];
  if (member.min !== undefined) lows.push(member.min * unit);
  if (member.max !== undefined) highs.push(member.max * unit);
  if (member.lower)
    lows.push(unitsWithin(member.lower.value.toNumber(), unit, member.lower.exclusive, 1));
  if (member.upper)
    highs.push(unitsWithin(member.upper.value.toNumber(), unit, member.upper.exclusive, -1));
  return fc
    .integer({ min: Math.max(...lows), max: Math.min(...highs) })
    .map((units) => units / unit);
}

/** Text of the member: its lengths, its pattern, any text every format can carry. */
function textArbitrary(member: WireScalarMember, options: ArbitraryOptions): fc.Arbitrary<string> {
  const minLength = Math.max(member.minLength ?? 0, member.required || options.formSafe ? 1 : 0);
  const maxLength = Math.max(minLength, 40);
  const text = member.pattern
    ? fc.stringMatching(member.pattern)
    : fc.string({ unit: 'grapheme', minLength, maxLength });
  return text.filter(
    (candidate) =>
      candidate.length >= minLength &&
      candidate.length <= Math.min(member.maxLength ?? Infinity, maxLength) &&
      !NON_XML.test(candidate) &&
      candidate.isWellFormed() &&
      (!member.required || candidate.trim() !== ''),
  );
}

function memberArbitrary(member: WireMember, options: ArbitraryOptions): fc.Arbitrary<unknown> {
  if (member.kind !== 'list' && member.enum) return fc.constantFrom(...member.enum);
  switch (member.kind) {
    case 'int':
      return fc.integer({ min: member.min ?? INT32_MIN, max: member.max ?? INT32_MAX });
    case 'decimal':
      return decimalArbitrary(member);
    case 'string':
      return textArbitrary(member, options);
    case 'boolean':
      return fc.boolean();
    case 'intOrText':
      return fc.oneof(
        memberArbitrary({ ...member, kind: 'int' }, options),
        memberArbitrary({ ...member, kind: 'string' }, options),
      );
    case 'date': {
      const earliest = member.earliest && member.earliest > EARLIEST ? member.earliest : EARLIEST;
      const latest = member.latest && member.latest < LATEST ? member.latest : LATEST;
      return fc.date({ min: earliest, max: latest, noInvalidDate: true });
    }
    case 'list': {
      const item = recordArbitrary(wireModelOf(member.item()), options);
      // A form cannot send an empty list.
      const minLength = Math.max(member.minItems ?? 0, options.formSafe ? 1 : 0);
      return fc.array(item, {
        minLength,
        maxLength: Math.max(minLength, Math.min(member.maxItems ?? 4, 4)),
      });
    }
  }
}

/**
 * Any valid record a client may send of a model: every member it reads present, null where the
 * member is optional; no read-only member, which it does not read.
 */
export function recordArbitrary(
  model: WireModel,
  options: ArbitraryOptions = {},
): fc.Arbitrary<Record<string, unknown>> {
  const members: Record<string, fc.Arbitrary<unknown>> = {};
  for (const member of model.readMembers) {
    const value = memberArbitrary(member, options);
    const required = member.required === true;
    members[member.name] = required ? value : fc.option(value, { nil: null });
  }
  return fc.record(members);
}

export const validRecord = (type: WireClass, options?: ArbitraryOptions) =>
  recordArbitrary(wireModelOf(type), options);
