import fc from 'fast-check';
import {
  INT32_MAX,
  INT32_MIN,
  DECIMAL_PRECISION,
  DECIMAL_SCALE,
  type WireClass,
  type WireMember,
  type WireModel,
  wireModelOf,
} from '../../src/wire';

/** Text every format can carry: well-formed Unicode without the characters XML 1.0 cannot hold. */
// eslint-disable-next-line no-control-regex
const NON_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;

export interface ArbitraryOptions {
  /** Forms cannot tell an empty value from null, nor an empty list from an absent one. */
  readonly formSafe?: boolean;
}

const SCALE = 10 ** DECIMAL_SCALE;
const DECIMAL_BOUND = 10 ** DECIMAL_PRECISION - 1;

function memberArbitrary(member: WireMember, options: ArbitraryOptions): fc.Arbitrary<unknown> {
  switch (member.kind) {
    case 'int':
      return fc.integer({ min: member.min ?? INT32_MIN, max: member.max ?? INT32_MAX });
    case 'decimal':
      // A whole number of ten-thousandths, within the member's range and DECIMAL(15,4).
      return fc
        .integer({
          min: Math.max(-DECIMAL_BOUND, Math.ceil((member.min ?? -Infinity) * SCALE)),
          max: Math.min(DECIMAL_BOUND, Math.floor((member.max ?? Infinity) * SCALE)),
        })
        .map((units) => units / SCALE);
    case 'string':
      return fc
        .string({
          unit: 'grapheme',
          minLength: member.required || options.formSafe ? 1 : 0,
          maxLength: 40,
        })
        .filter(
          (text) =>
            text.length <= (member.maxLength ?? Infinity) &&
            !NON_XML.test(text) &&
            text.isWellFormed() &&
            (!member.required || text.trim() !== ''),
        );
    case 'boolean':
      return fc.boolean();
    case 'intOrText':
      return fc.oneof(
        memberArbitrary({ ...member, kind: 'int' }, options),
        memberArbitrary({ ...member, kind: 'string' }, options),
      );
    case 'date':
      return fc.date({
        min: new Date('1000-01-01T00:00:00.000Z'),
        max: new Date('9999-12-31T23:59:59.999Z'),
        noInvalidDate: true,
      });
    case 'list': {
      const item = recordArbitrary(wireModelOf(member.item()), options);
      return fc.array(item, { minLength: options.formSafe ? 1 : 0, maxLength: 4 });
    }
  }
}

/** Any valid record of a model: every member present, null where the member is optional. */
export function recordArbitrary(
  model: WireModel,
  options: ArbitraryOptions = {},
): fc.Arbitrary<Record<string, unknown>> {
  const members: Record<string, fc.Arbitrary<unknown>> = {};
  for (const member of model.members) {
    const value = memberArbitrary(member, options);
    const required = member.kind !== 'list' && member.required;
    members[member.name] = required ? value : fc.option(value, { nil: null });
  }
  return fc.record(members);
}

export const validRecord = (type: WireClass, options?: ArbitraryOptions) =>
  recordArbitrary(wireModelOf(type), options);
