import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ValidateBy, type ValidationArguments } from 'class-validator';
import { isDotNetDate } from '../values/dotnet-date';
import { superLinearCause } from './linear-pattern';
import { isDotNetBlank } from '../values/white-space';
import { ExactDecimal, NUMERAL, parseDecimal } from '../values/exact-decimal';
import { INT32_MAX, INT32_MIN } from '../values/int32';
import { UnreadableValue } from '../values/unreadable-value';
import {
  type DecimalBound,
  isBoundRecord,
  registerWireMember,
  type WireClass,
  type WireMember,
  type WireScalarKind,
  type WireScalarMember,
} from './wire-model';

/** The columns of declared decimals, DECIMAL(15,4): what the import stores without rounding. */
export const DECIMAL_PRECISION = 15;
export const DECIMAL_SCALE = 4;
/** The longest text a stored member holds (CONTRACT §6): what each member's text column holds. */
export const STORED_TEXT_LENGTH = 4000;

// Characters that XML 1.0 cannot carry, spelled out when a message quotes them.
// eslint-disable-next-line no-control-regex
const NON_XML_CHARACTERS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

/**
 * How a value appears inside `The value '…' is not valid for …`: short, never an object dump, and
 * always writable as XML text, with control characters spelled `\u0001`.
 */
export function describeValue(value: unknown): string {
  let text: string;
  if (value instanceof UnreadableValue) return describeValue(value.raw);
  if (typeof value === 'string') text = value;
  else if (value instanceof Date) text = value.toISOString();
  else if (value === null || typeof value !== 'object') text = String(value);
  else text = Array.isArray(value) ? '[…]' : '{…}';
  const short = text.length > 100 ? `${text.slice(0, 100)}…` : text;
  return short
    .toWellFormed()
    .replace(
      NON_XML_CHARACTERS,
      (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
}

const invalidValue = (args: ValidationArguments) =>
  `The value '${describeValue(args.value)}' is not valid for ${args.property}.`;

const isAbsent = (value: unknown): value is null | undefined =>
  value === null || value === undefined;

const isInt32 = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX;

/** What a member of each kind holds once its format converted it; anything else was unreadable. */
const VALIDITY: Record<WireScalarKind, (value: unknown) => boolean> = {
  int: isInt32,
  decimal: (value) => value instanceof ExactDecimal,
  // Any Unicode text: a lone surrogate is not text, and neither database could store it.
  string: (value) => typeof value === 'string' && value.isWellFormed(),
  boolean: (value) => typeof value === 'boolean',
  date: isDotNetDate,
  intOrText: (value) => isInt32(value) || VALIDITY.string(value),
};

function validIfPresent(
  name: string,
  test: (value: unknown) => boolean,
  message: (args: ValidationArguments) => string,
) {
  return ValidateBy({
    name,
    validator: {
      validate: (value: unknown) => isAbsent(value) || test(value),
      defaultMessage: message,
    },
  });
}

/** `present, not null, not empty or white space`, as DataAnnotations' [Required]. */
function Required(): PropertyDecorator {
  return ValidateBy({
    name: 'wireRequired',
    validator: {
      validate: (value: unknown) =>
        !isAbsent(value) && !(typeof value === 'string' && isDotNetBlank(value)),
      defaultMessage: (args?: ValidationArguments) => `The ${args?.property} field is required.`,
    },
  });
}

/** The legacy message of a range: DataAnnotations' for two bounds, the same voice for one. */
function rangeMessage(property: string, min: number | undefined, max: number | undefined): string {
  if (min !== undefined && max !== undefined)
    return `The field ${property} must be between ${min} and ${max}.`;
  return min !== undefined
    ? `The field ${property} must be at least ${min}.`
    : `The field ${property} must be at most ${max}.`;
}

/**
 * DataAnnotations' `[Range(min, max)]` with integer bounds, either of which may stand alone: a decimal
 * is first rounded to a whole number half to even, so `0.99` and `100000000.4` are in 1..100000000
 * and `100000000.51` is not.
 */
function Range(min: number | undefined, max: number | undefined): PropertyDecorator {
  const low = min === undefined ? undefined : BigInt(min);
  const high = max === undefined ? undefined : BigInt(max);
  const wholeOf = (value: unknown) => {
    if (value instanceof ExactDecimal) return value.roundToInteger();
    return typeof value === 'number' && Number.isInteger(value) ? BigInt(value) : undefined;
  };
  return validIfPresent(
    'wireRange',
    (value) => {
      const whole = wholeOf(value);
      return (
        whole !== undefined &&
        (low === undefined || whole >= low) &&
        (high === undefined || whole <= high)
      );
    },
    (args) => rangeMessage(args.property, min, max),
  );
}

/**
 * The message of an exact range: .NET 8's [Range] voice for two bounds (`between 0 exclusive and
 * 0.2`), and the same voice for one.
 */
function exactRangeMessage(
  property: string,
  lower: DecimalBound | undefined,
  upper: DecimalBound | undefined,
): string {
  const text = (bound: DecimalBound) =>
    `${bound.value.toString()}${bound.exclusive ? ' exclusive' : ''}`;
  if (lower && upper)
    return `The field ${property} must be between ${text(lower)} and ${text(upper)}.`;
  if (lower)
    return `The field ${property} must be ${lower.exclusive ? 'greater than' : 'at least'} ${lower.value.toString()}.`;
  return `The field ${property} must be ${upper!.exclusive ? 'less than' : 'at most'} ${upper!.value.toString()}.`;
}

/** Bounds of a decimal compared exactly, as sent: `0.2000000000000000001` is above `0.2`. */
function ExactRange(lower: DecimalBound | undefined, upper: DecimalBound | undefined) {
  const within = (value: ExactDecimal) => {
    const low = lower && value.compare(lower.value);
    const high = upper && value.compare(upper.value);
    return (
      (low === undefined || low > 0 || (low === 0 && !lower!.exclusive)) &&
      (high === undefined || high < 0 || (high === 0 && !upper!.exclusive))
    );
  };
  return validIfPresent(
    'wireExactRange',
    (value) => value instanceof ExactDecimal && within(value),
    (args) => exactRangeMessage(args.property, lower, upper),
  );
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

/** At most `scale` digits after the decimal point, trailing zeros not counted (`0.1000` has one). */
function Scale(scale: number): PropertyDecorator {
  return validIfPresent(
    'wireScale',
    (value) => value instanceof ExactDecimal && value.decimalPlaces() <= scale,
    (args) =>
      scale === 0
        ? `The field ${args.property} must be a whole number.`
        : `The field ${args.property} must have at most ${plural(scale, 'decimal place')}.`,
  );
}

/** At most `precision - scale` digits before the decimal point: with Scale, a DECIMAL(precision, scale). */
function Precision(precision: number, scale: number): PropertyDecorator {
  const whole = precision - scale;
  return validIfPresent(
    'wirePrecision',
    (value) => value instanceof ExactDecimal && value.wholeDigits() <= whole,
    (args) =>
      `The field ${args.property} must have at most ${plural(whole, 'digit')} before the decimal point.`,
  );
}

function MaxLength(max: number): PropertyDecorator {
  return validIfPresent(
    'wireMaxLength',
    (value) => typeof value === 'string' && value.length <= max,
    (args) => `The field ${args.property} must be a string with a maximum length of ${max}.`,
  );
}

/** DataAnnotations' [StringLength] with a minimum length; lengths in UTF-16 units, as .NET's. */
function Length(min: number, max: number | undefined): PropertyDecorator {
  return validIfPresent(
    'wireLength',
    (value) =>
      typeof value === 'string' &&
      value.length >= min &&
      (max === undefined || value.length <= max),
    (args) =>
      `The field ${args.property} must be a string with a minimum length of ${min}` +
      (max === undefined ? '.' : ` and a maximum length of ${max}.`),
  );
}

/** DataAnnotations' [RegularExpression] message; matched as JSON Schema's `pattern`, anywhere. */
function Pattern(pattern: RegExp): PropertyDecorator {
  return validIfPresent(
    'wirePattern',
    (value) => typeof value === 'string' && pattern.test(value),
    (args) => `The field ${args.property} must match the regular expression '${pattern.source}'.`,
  );
}

/** One of the listed values, exactly: text case-sensitively, as .NET's ordinal comparison. */
function OneOf(values: readonly (string | number)[]): PropertyDecorator {
  const listed = new Set<unknown>(values);
  return validIfPresent(
    'wireEnum',
    (value) => listed.has(value),
    (args) => `The field ${args.property} must be one of ${values.join(', ')}.`,
  );
}

/** Inclusive bounds of a date, compared as instants. */
function DateRange(earliest: Date | undefined, latest: Date | undefined): PropertyDecorator {
  const text = (date: Date) => date.toISOString();
  return validIfPresent(
    'wireDateRange',
    (value) =>
      value instanceof Date &&
      (earliest === undefined || value.getTime() >= earliest.getTime()) &&
      (latest === undefined || value.getTime() <= latest.getTime()),
    (args) =>
      earliest && latest
        ? `The field ${args.property} must be between ${text(earliest)} and ${text(latest)}.`
        : earliest
          ? `The field ${args.property} must be no earlier than ${text(earliest)}.`
          : `The field ${args.property} must be no later than ${text(latest!)}.`,
  );
}

/** How many items a list holds, null items counted, in [StringLength]'s voice. */
function ItemCount(min: number | undefined, max: number | undefined): PropertyDecorator {
  return validIfPresent(
    'wireItemCount',
    (value) =>
      Array.isArray(value) &&
      (min === undefined || value.length >= min) &&
      (max === undefined || value.length <= max),
    (args) =>
      `The field ${args.property} must be a list with ` +
      [
        min === undefined ? [] : [`a minimum length of ${min}`],
        max === undefined ? [] : [`a maximum length of ${max}`],
      ]
        .flat()
        .join(' and ') +
      '.',
  );
}

/** Which bound is the tighter: the further in, and exclusive where both are the same value. */
function tighter(
  a: DecimalBound | undefined,
  b: DecimalBound | undefined,
  side: 1 | -1,
): DecimalBound | undefined {
  if (!a || !b) return a ?? b;
  const order = a.value.compare(b.value) * side;
  if (order !== 0) return order > 0 ? a : b;
  return a.exclusive ? a : b;
}

/** The largest magnitude a DECIMAL(precision, scale) holds: `99.99` for (4, 2). */
function largestOf(precision: number, scale: number): ExactDecimal {
  const spelled = `${'9'.repeat(precision - scale) || '0'}${scale > 0 ? `.${'9'.repeat(scale)}` : ''}`;
  return parseDecimal(spelled, NUMERAL)!;
}

const negated = (value: ExactDecimal) => parseDecimal(`-${value.toString()}`, NUMERAL)!;

/**
 * The bounds a decimal member's schema states: its [Range], widened by the half a unit that rounding
 * admits (`n ± 0.5` itself rounds to the even one of its neighbours), its exact bounds, and the
 * largest value its precision holds, whichever is the tighter on each side.
 */
function decimalBounds(member: WireScalarMember): {
  lower?: DecimalBound;
  upper?: DecimalBound;
} {
  const whole = (bound: number, side: 1 | -1): DecimalBound => ({
    value: ExactDecimal.ofNumber(bound + side * 0.5),
    exclusive: bound % 2 !== 0,
  });
  const largest =
    member.precision === undefined ? undefined : largestOf(member.precision, member.scale ?? 0);
  return {
    lower: [
      member.min === undefined ? undefined : whole(member.min, -1),
      member.lower,
      largest && { value: negated(largest), exclusive: false },
    ].reduce((a, b) => tighter(a, b, 1), undefined),
    upper: [
      member.max === undefined ? undefined : whole(member.max, 1),
      member.upper,
      largest && { value: largest, exclusive: false },
    ].reduce((a, b) => tighter(a, b, -1), undefined),
  };
}

/** A bound as the document writes it: a JSON number, the same value (declarations make sure). */
const asJsonNumber = (value: ExactDecimal) => Number(value.toString());

/** An enumeration as the document states it: null among the values of a member that may be null. */
const enumKeyword = (member: WireScalarMember, nullable: boolean) =>
  member.enum && { enum: nullable ? [...member.enum, null] : [...member.enum] };

/**
 * The OpenAPI schema of a member: what validation enforces, stated for generated clients; a read-only
 * member's says what answers hold, and `readOnly` that requests' values are not read.
 */
function openApiSchema(member: WireScalarMember): ApiPropertyOptions {
  return { ...kindSchema(member), ...(member.readOnly && { readOnly: true }) };
}

/**
 * What a generated client's types cannot say of a decimal (a `number`) or a date (a `string`), in the
 * description every generator carries into its comments; the wire is as CONTRACT §3 and §6 say.
 */
export const DECIMAL_DESCRIPTION =
  'An exact decimal, as a JSON number (text in XML and forms), written as stored: at most ' +
  `${DECIMAL_PRECISION} significant digits, ${DECIMAL_SCALE} of them after the point, which a ` +
  'JavaScript number holds exactly. A request may send any .NET decimal its rules admit.';
export const DATE_DESCRIPTION =
  'A date and time in ISO 8601 with its offset from UTC, written in the service time zone ' +
  '(APP_TIMEZONE): `2026-03-01T18:11:12+08:00`. One sent without an offset is read in that zone.';

/** The schema of a member's kind and rules. */
function kindSchema(member: WireScalarMember): ApiPropertyOptions {
  const common = { required: member.required, nullable: !member.required };
  switch (member.kind) {
    case 'int':
      return {
        ...common,
        type: 'integer',
        format: 'int32',
        minimum: member.min ?? INT32_MIN,
        maximum: member.max ?? INT32_MAX,
        ...enumKeyword(member, common.nullable),
      };
    case 'decimal': {
      // Any .NET decimal, within the tighter of its bounds, in steps of its scale.
      const { lower, upper } = decimalBounds(member);
      return {
        ...common,
        type: 'number',
        format: 'decimal',
        description: DECIMAL_DESCRIPTION,
        ...(lower && { minimum: asJsonNumber(lower.value), exclusiveMinimum: lower.exclusive }),
        ...(upper && { maximum: asJsonNumber(upper.value), exclusiveMaximum: upper.exclusive }),
        ...(member.scale !== undefined && { multipleOf: Number(`1e-${member.scale}`) }),
      };
    }
    case 'string':
      return {
        ...common,
        type: 'string',
        maxLength: member.maxLength,
        ...(member.minLength !== undefined && { minLength: member.minLength }),
        ...(member.pattern && { pattern: member.pattern.source }),
        ...enumKeyword(member, common.nullable),
      };
    case 'boolean':
      return { ...common, type: 'boolean' };
    case 'date':
      // OpenAPI 3.0 has no keyword for a date's range: extensions state it, as ISO 8601 instants.
      return {
        ...common,
        type: 'string',
        format: 'date-time',
        description: DATE_DESCRIPTION,
        ...(member.earliest && { 'x-earliest': member.earliest.toISOString() }),
        ...(member.latest && { 'x-latest': member.latest.toISOString() }),
      };
    case 'intOrText':
      // Either type may be null: `nullable` needs a `type` beside it.
      return {
        required: member.required,
        anyOf: [
          {
            type: 'integer',
            format: 'int32',
            minimum: INT32_MIN,
            maximum: INT32_MAX,
            nullable: common.nullable,
          },
          { type: 'string', nullable: common.nullable },
        ],
      };
  }
}

/** The validation rules of a member, in the order they are checked: each reports the first it breaks. */
function rulesOf(member: WireScalarMember): PropertyDecorator[] {
  const rules: PropertyDecorator[] = [];
  if (member.required) rules.push(Required());
  rules.push(validIfPresent(`wire_${member.kind}`, VALIDITY[member.kind], invalidValue));
  if (member.min !== undefined || member.max !== undefined)
    rules.push(Range(member.min, member.max));
  if (member.lower || member.upper) rules.push(ExactRange(member.lower, member.upper));
  if (member.scale !== undefined) rules.push(Scale(member.scale));
  if (member.precision !== undefined) rules.push(Precision(member.precision, member.scale ?? 0));
  if (member.minLength !== undefined) rules.push(Length(member.minLength, member.maxLength));
  else if (member.maxLength !== undefined) rules.push(MaxLength(member.maxLength));
  if (member.pattern) rules.push(Pattern(member.pattern));
  if (member.enum) rules.push(OneOf(member.enum));
  if (member.earliest || member.latest) rules.push(DateRange(member.earliest, member.latest));
  return rules;
}

/**
 * Each option of a member as its decorator takes it, by the rule it declares: how a refusal names
 * the rule it broke (`DecimalField({ exactMax: 0.2 })`).
 */
export function declaredRuleOf(member: WireMember, rule: string): string {
  const decorator = FIELD_DECORATORS[member.kind];
  if (rule === 'wireList' || rule.startsWith('wire_')) return `the type of a ${decorator}`;
  const options = ruleOptions(member, rule);
  // A module's own constraint, by its name.
  return options === '' ? `the rule ${rule}` : `${decorator}({ ${options} })`;
}

/** The field decorator of each kind of member. */
export const FIELD_DECORATORS: Readonly<Record<WireMember['kind'], string>> = {
  int: 'IntField',
  decimal: 'DecimalField',
  string: 'TextField',
  boolean: 'BooleanField',
  date: 'DateField',
  intOrText: 'IntOrTextField',
  list: 'ListField',
};

function ruleOptions(member: WireMember, rule: string): string {
  const options = (entries: Record<string, unknown>) =>
    Object.entries(entries)
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => `${name}: ${optionText(value)}`)
      .join(', ');
  if (member.kind === 'list') {
    if (rule === 'wireItemCount')
      return options({ minItems: member.minItems, maxItems: member.maxItems });
    return rule === 'wireRequired' ? 'required: true' : '';
  }
  switch (rule) {
    case 'wireRequired':
      return 'required: true';
    case 'wireRange':
      return options({ min: member.min, max: member.max });
    case 'wireExactRange': {
      const bound = (side: DecimalBound | undefined, inclusive: string, exclusive: string) =>
        side && { [side.exclusive ? exclusive : inclusive]: asJsonNumber(side.value) };
      return options({
        ...bound(member.lower, 'exactMin', 'greaterThan'),
        ...bound(member.upper, 'exactMax', 'lessThan'),
      });
    }
    case 'wireScale':
      return options({ scale: member.scale });
    case 'wirePrecision':
      return options({ precision: member.precision, scale: member.scale });
    case 'wireLength':
    case 'wireMaxLength':
      return options({ minLength: member.minLength, maxLength: member.maxLength });
    case 'wirePattern':
      return options({ pattern: member.pattern });
    case 'wireEnum':
      return options({ enum: member.enum });
    case 'wireDateRange':
      return options({ earliest: member.earliest, latest: member.latest });
    default:
      return '';
  }
}

/** A value as TypeScript spells it in an option: `0.2`, `'paid'`, `['a', 'b']`, `/^x$/`. */
export function optionText(value: unknown): string {
  if (typeof value === 'string') return `'${value.replace(/[\\']/g, '\\$&')}'`;
  if (Array.isArray(value)) return `[${value.map(optionText).join(', ')}]`;
  if (value instanceof RegExp) return String(value);
  if (value instanceof Date)
    return Number.isNaN(value.getTime()) ? 'new Date(NaN)' : `new Date('${value.toISOString()}')`;
  if (typeof value === 'function') return value.name || 'function';
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).map(([key, entry]) => `${key}: ${optionText(entry)}`);
    return entries.length === 0 ? '{}' : `{ ${entries.join(', ')} }`;
  }
  return String(value);
}

export interface FieldOptions {
  /** Present, not null and not blank, as DataAnnotations' [Required]. */
  required?: boolean;
  /**
   * Written in every answer, never read from a request or an import file: a record a client echoes
   * back, with any value there or none, is read as if the member were absent, so adding one to a
   * record that requests carry refuses nothing that was accepted before. For what the service alone
   * decides, such as a row version. Stated as the schema's `readOnly`. Not with `required`.
   */
  readOnly?: boolean;
}

export interface NumberFieldOptions extends FieldOptions {
  /**
   * Inclusive whole-number bounds, as the seed's [Range] attributes; either may be given alone. A
   * decimal is rounded half to even before it is compared (`0.5` is below 1, `1.5` is not above 1):
   * DataAnnotations' [Range(int, int)]. For a bound with a fraction, or compared exactly, give a
   * DecimalField `exactMin`, `exactMax`, `greaterThan` or `lessThan` instead.
   */
  min?: number;
  max?: number;
}

export interface IntFieldOptions extends NumberFieldOptions {
  /**
   * The only values accepted: `enum: [1, 2, 3]` refuses 4 with `The field kind must be one of 1, 2,
   * 3.` Stated as the schema's `enum`, with null when the member may be null.
   */
  enum?: readonly number[];
}

export interface DecimalFieldOptions extends NumberFieldOptions {
  /**
   * Exact inclusive bounds, with any fraction: `exactMin: 0, exactMax: 0.2` accepts 0.2 and refuses
   * 0.2000000000000000001 and 0.2001, compared digit by digit as the client wrote the value, never
   * through a double and never rounded (unlike `min` and `max`, the legacy [Range], which round the
   * value to a whole number first). The bound is the number as written in the source (`0.2` is
   * two tenths). Refused with `The field rate must be between 0 and 0.2.`, `… at least 0.`,
   * `… at most 0.2.`. Not together with `min`/`max`.
   */
  exactMin?: number;
  exactMax?: number;
  /**
   * Exact exclusive bounds: `greaterThan: 0` refuses 0 and accepts 0.0001 (`The field amount must be
   * greater than 0.`). Stated as `minimum` with `exclusiveMinimum: true`. Not together with the
   * inclusive bound of the same side, nor with `min`/`max`.
   */
  greaterThan?: number;
  lessThan?: number;
  /**
   * Most digits after the decimal point, trailing zeros not counted (`0.25000` has two): `scale: 4`
   * refuses 0.12345 with `The field rate must have at most 4 decimal places.` Stated as
   * `multipleOf: 0.0001`.
   */
  scale?: number;
  /**
   * Most digits in all, with `scale` (required with it): the values a DECIMAL(precision, scale) column
   * holds, `precision: 6, scale: 2` up to 9999.99 (`… must have at most 4 digits before the decimal
   * point.`). Stated as the bounds it implies, ±9999.99, where they are tighter than the others; at
   * most 15 digits, which a JSON number states exactly.
   */
  precision?: number;
}

export interface TextFieldOptions extends FieldOptions {
  /**
   * For text a request stores: its column's length, so that nothing accepted is cut. Without it text
   * is unbounded, as the legacy's was. Lengths count UTF-16 units, as .NET's `String.Length`.
   */
  maxLength?: number;
  /** Shortest text accepted: DataAnnotations' [StringLength] with its MinimumLength. */
  minLength?: number;
  /**
   * A regular expression the text must match, as JSON Schema's `pattern`: somewhere in the text, so
   * anchor it (`/^[A-Z]{3}$/`) to match the whole value. A string is read with the `u` flag; a RegExp
   * may carry `u` or `v` and no other flag, which the document could not state. Refused with
   * DataAnnotations' `The field code must match the regular expression '^[A-Z]{3}$'.`
   */
  pattern?: string | RegExp;
  /**
   * The only values accepted, compared exactly and case-sensitively: `enum: ['pending', 'approved',
   * 'paid']` refuses `Paid` with `The field status must be one of pending, approved, paid.` Stated as
   * the schema's `enum`, with null when the member may be null. Each value must meet the other rules.
   */
  enum?: readonly string[];
}

export interface DateFieldOptions extends FieldOptions {
  /**
   * Inclusive bounds, compared as instants: a Date, or an ISO 8601 text with its offset
   * (`'2000-01-01T00:00:00Z'`), since a bound must not depend on the service's time zone. Refused
   * with `The field due must be between 2000-01-01T00:00:00.000Z and 2099-12-31T23:59:59.999Z.` (or
   * `no earlier than`, `no later than`); stated as the extensions `x-earliest` and `x-latest`,
   * OpenAPI 3.0 having no keyword for it.
   */
  earliest?: Date | string;
  latest?: Date | string;
}

export interface ListFieldOptions extends FieldOptions {
  /**
   * Fewest and most items, null items counted: `minItems: 1` refuses an empty list with `The field
   * lines must be a list with a minimum length of 1.` Stated as `minItems` and `maxItems`. Each item
   * is validated by its own model's rules, its errors keyed `record.lines[0].member`.
   */
  minItems?: number;
  maxItems?: number;
}

/** A declaration the wire cannot honour: named by its class and member, found when it is declared. */
class FieldDeclarationError extends Error {
  constructor(target: object, name: string, problem: string) {
    super(`${(target as { constructor: { name: string } }).constructor.name}.${name}: ${problem}`);
  }
}

const isCount = (value: number | undefined) =>
  value === undefined || (Number.isSafeInteger(value) && value >= 0);

/** Checks counts (lengths, items, digits): whole, not negative, the least no more than the most. */
function checkCounts(
  fail: (problem: string) => never,
  counts: Record<string, number | undefined>,
  [least, most]: [string, string] = ['', ''],
): void {
  for (const [option, value] of Object.entries(counts))
    if (!isCount(value)) fail(`${option} is a count, a whole number of at least 0 (got ${value})`);
  const [low, high] = [counts[least], counts[most]];
  if (low !== undefined && high !== undefined && low > high)
    fail(`${least} (${low}) is above ${most} (${high})`);
}

const EXACT_BOUNDS = ['exactMin', 'exactMax', 'greaterThan', 'lessThan'] as const;

/** The most digits a decimal member states: what a JSON number, a double, carries exactly. */
const MAX_STATED_PRECISION = 15;
/** The most digits after the point of .NET's decimal. */
const MAX_SCALE = 28;

function decimalMember(
  name: string,
  options: DecimalFieldOptions,
  fail: (problem: string) => never,
): WireScalarMember {
  const { required = false, min, max, scale, precision } = options;
  wholeBounds(fail, min, max);
  const exact = EXACT_BOUNDS.filter((option) => options[option] !== undefined);
  if (exact.length > 0 && (min !== undefined || max !== undefined))
    fail(
      `min and max are the legacy [Range], compared after rounding to a whole number; ${exact.join(' and ')} ` +
        'compare exactly. Give one kind of bound.',
    );
  const boundOf = (option: (typeof EXACT_BOUNDS)[number]): DecimalBound | undefined => {
    const value = options[option];
    if (value === undefined) return undefined;
    if (typeof value !== 'number' || !Number.isFinite(value))
      fail(`${option} is a finite number (got ${String(value)})`);
    return {
      value: ExactDecimal.ofNumber(value),
      exclusive: option === 'greaterThan' || option === 'lessThan',
    };
  };
  if (options.exactMin !== undefined && options.greaterThan !== undefined)
    fail('give exactMin or greaterThan, not both');
  if (options.exactMax !== undefined && options.lessThan !== undefined)
    fail('give exactMax or lessThan, not both');
  const lower = boundOf('exactMin') ?? boundOf('greaterThan');
  const upper = boundOf('exactMax') ?? boundOf('lessThan');
  if (lower && upper) {
    const order = lower.value.compare(upper.value);
    if (order > 0 || (order === 0 && (lower.exclusive || upper.exclusive)))
      fail(`its bounds ${lower.value.toString()} and ${upper.value.toString()} leave no value`);
  }
  checkCounts(fail, { scale, precision });
  if (scale !== undefined && scale > MAX_SCALE)
    fail(`scale is at most ${MAX_SCALE}, a .NET decimal's (got ${scale})`);
  if (precision !== undefined) {
    if (scale === undefined)
      fail('precision goes with scale, as a DECIMAL(precision, scale) column: give scale too');
    if (precision < 1 || precision > MAX_STATED_PRECISION || precision < scale)
      fail(
        `precision is from 1 (and at least scale, ${scale}) to ${MAX_STATED_PRECISION}, the digits a ` +
          `JSON number states exactly (got ${precision})`,
      );
  }
  return { name, kind: 'decimal', required, min, max, lower, upper, scale, precision };
}

/** [Range]'s bounds are whole numbers: a fraction has no [Range] reading. */
function wholeBounds(
  fail: (problem: string) => never,
  min: number | undefined,
  max: number | undefined,
): void {
  for (const bound of [min, max])
    if (bound !== undefined && !Number.isSafeInteger(bound))
      fail(
        `range bounds are whole numbers (got ${bound}): min and max are the legacy [Range]; a ` +
          'DecimalField takes exactMin, exactMax, greaterThan and lessThan for exact bounds',
      );
  if (min !== undefined && max !== undefined && min > max)
    fail(`min (${min}) is above max (${max})`);
}

function patternOf(pattern: string | RegExp, fail: (problem: string) => never): RegExp {
  if (pattern instanceof RegExp) {
    const flags = pattern.flags.replace(/[uv]/g, '');
    if (flags !== '')
      fail(
        `the pattern ${String(pattern)} carries the flag(s) ${flags}, which the document's pattern ` +
          'cannot state: write the rule into the expression itself',
      );
    // Read as the document's pattern is, with Unicode semantics.
    return linear(new RegExp(pattern.source, pattern.flags.includes('v') ? 'v' : 'u'), fail);
  }
  let compiled: RegExp;
  try {
    compiled = new RegExp(pattern, 'u');
  } catch (error) {
    return fail(`the pattern is not a regular expression: ${(error as Error).message}`);
  }
  return linear(compiled, fail);
}

/** A pattern tests what clients send: one that could backtrack super-linearly stops the start. */
function linear(pattern: RegExp, fail: (problem: string) => never): RegExp {
  const cause = superLinearCause(pattern);
  if (cause !== undefined)
    fail(`the pattern ${String(pattern)} can take more than linear time on some text: ${cause}`);
  return pattern;
}

/** `…T…` ending in `Z` or an offset; the offset is found from the end, so the test is linear. */
function hasTimeAndOffset(text: string): boolean {
  const offset = /(?:Z|[+-]\d{2}:?\d{2})$/i.exec(text);
  return offset !== null && /T/i.test(text.slice(0, offset.index));
}

function dateOf(
  option: string,
  value: Date | string | undefined,
  fail: (problem: string) => never,
): Date | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && !hasTimeAndOffset(value))
    fail(`${option} is an ISO 8601 date and time with its offset, such as '2000-01-01T00:00:00Z'`);
  const date = new Date(value);
  if (!isDotNetDate(date))
    fail(`${option} is not a date .NET's DateTime holds (got ${String(value)})`);
  return date;
}

/** The enumeration's values, each of which must meet the member's other rules. */
function enumOf<T extends string | number>(
  values: readonly T[] | undefined,
  fail: (problem: string) => never,
  meetsRules: (value: T) => string | undefined,
): readonly T[] | undefined {
  if (values === undefined) return undefined;
  const listed: readonly T[] = Array.isArray(values) ? values : [];
  if (listed.length === 0) fail('enum lists at least one value');
  if (new Set(listed).size !== listed.length) fail('enum lists a value twice');
  for (const value of listed) {
    const broken = meetsRules(value);
    if (broken) fail(`the enum value ${optionText(value)} ${broken}`);
  }
  return Object.freeze([...listed]);
}

/**
 * Declares a scalar member: its wire shape, the coercion from what clients send, and the validation
 * rules with the legacy messages, applied in that order so each member reports its first violation.
 * Every bound the OpenAPI schema states is a rule here, and no rule goes undocumented.
 */
function ScalarField(
  options: FieldOptions,
  declare: (name: string, fail: (problem: string) => never) => WireScalarMember,
): PropertyDecorator {
  return (target, key) => {
    const name = String(key);
    const fail = (problem: string): never => {
      throw new FieldDeclarationError(target, name, problem);
    };
    if (options.readOnly && options.required)
      fail('a read-only member is never read from a request, so it cannot be required there');
    const member: WireScalarMember = {
      ...declare(name, fail),
      ...(options.readOnly && { readOnly: true }),
    };
    registerWireMember(target, member);
    ApiProperty(openApiSchema(member))(target, key);
    for (const rule of rulesOf(member)) rule(target, key);
  };
}

export const IntField = (options: IntFieldOptions = {}) =>
  ScalarField(options, (name, fail) => {
    const { required = false, min, max } = options;
    wholeBounds(fail, min, max);
    const values = enumOf(options.enum, fail, (value) =>
      !isInt32(value)
        ? 'is not a 32-bit integer'
        : (min !== undefined && value < min) || (max !== undefined && value > max)
          ? `is outside min and max`
          : undefined,
    );
    return { name, kind: 'int', required, min, max, ...(values && { enum: values }) };
  });

export const DecimalField = (options: DecimalFieldOptions = {}) =>
  ScalarField(options, (name, fail) => decimalMember(name, options, fail));

export const TextField = (options: TextFieldOptions = {}) =>
  ScalarField(options, (name, fail) => {
    const { required = false, maxLength, minLength } = options;
    checkCounts(fail, { minLength, maxLength }, ['minLength', 'maxLength']);
    const pattern = options.pattern === undefined ? undefined : patternOf(options.pattern, fail);
    const values = enumOf(options.enum, fail, (value) =>
      typeof value !== 'string' || !value.isWellFormed()
        ? 'is not text'
        : (maxLength !== undefined && value.length > maxLength) ||
            (minLength !== undefined && value.length < minLength)
          ? 'breaks minLength or maxLength'
          : pattern && !pattern.test(value)
            ? `does not match the pattern ${String(pattern)}`
            : undefined,
    );
    return {
      name,
      kind: 'string',
      required,
      maxLength,
      ...(minLength !== undefined && { minLength }),
      ...(pattern && { pattern }),
      ...(values && { enum: values }),
    };
  });

export const BooleanField = (options: FieldOptions = {}) =>
  ScalarField(options, (name) => ({ name, kind: 'boolean', required: options.required ?? false }));

export const DateField = (options: DateFieldOptions = {}) =>
  ScalarField(options, (name, fail) => {
    const earliest = dateOf('earliest', options.earliest, fail);
    const latest = dateOf('latest', options.latest, fail);
    if (earliest && latest && earliest.getTime() > latest.getTime())
      fail(`earliest (${earliest.toISOString()}) is after latest (${latest.toISOString()})`);
    return {
      name,
      kind: 'date',
      required: options.required ?? false,
      ...(earliest && { earliest }),
      ...(latest && { latest }),
    };
  });

/** An integer or a text, as the value happens to be: JSON writes each as its own type. */
export const IntOrTextField = (options: FieldOptions = {}) =>
  ScalarField(options, (name) => ({
    name,
    kind: 'intOrText',
    required: options.required ?? false,
  }));

/** A list of records: a JSON array, an XML wrapper of repeated item elements, indexed form keys. */
export function ListField(
  item: () => WireClass,
  options: ListFieldOptions = {},
): PropertyDecorator {
  return (target, key) => {
    const name = String(key);
    const { required = false, minItems, maxItems } = options;
    checkCounts(
      (problem) => {
        throw new FieldDeclarationError(target, name, problem);
      },
      { minItems, maxItems },
      ['minItems', 'maxItems'],
    );
    registerWireMember(target, {
      name,
      kind: 'list',
      item,
      ...(required && { required }),
      ...(minItems !== undefined && { minItems }),
      ...(maxItems !== undefined && { maxItems }),
    });
    ApiProperty({
      // Written inline: @nestjs/swagger knows a lazy type by the thunk's name being `type`.
      type: () => item(),
      isArray: true,
      required,
      nullable: !required,
      xml: { name, wrapped: true },
      ...(minItems !== undefined && { minItems }),
      ...(maxItems !== undefined && { maxItems }),
    })(target, key);
    // For class-transformer, which builds the item instances of a DTO read by ValidationPipe.
    Type(item)(target, key);
    // A null list is a value like any other null. Its items are validated one by one by
    // toValidatedDto, which skips null items as Json.NET did (ValidateNested refuses them).
    if (required) Required()(target, key);
    validIfPresent(
      'wireList',
      // A null item is a value Json.NET and DataContractSerializer both read; any other is a record,
      // as a codec binds it or as class-transformer builds it, or one a codec could not read as a
      // record, which is reported at its index.
      (value) =>
        Array.isArray(value) &&
        value.every(
          (entry) =>
            entry === null ||
            isBoundRecord(entry) ||
            entry instanceof item() ||
            entry instanceof UnreadableValue,
        ),
      invalidValue,
    )(target, key);
    if (minItems !== undefined || maxItems !== undefined)
      ItemCount(minItems, maxItems)(target, key);
  };
}
