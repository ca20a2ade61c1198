import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ValidateBy, ValidateIf, type ValidationArguments } from 'class-validator';
import { isDotNetDate } from '../values/dotnet-date';
import { ExactDecimal } from '../values/exact-decimal';
import { INT32_MAX, INT32_MIN } from '../values/int32';
import { UnreadableValue } from '../values/unreadable-value';
import {
  isBoundRecord,
  registerWireMember,
  type WireClass,
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

/**
 * White space as .NET's `String.Trim` sees it: with U+0085 (NEXT LINE), which JavaScript's `trim`
 * keeps, and without U+FEFF (the byte order mark), which JavaScript's `trim` removes.
 */
const DOTNET_WHITE_SPACE =
  /^[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/;

/** `present, not null, not empty or white space`, as DataAnnotations' [Required]. */
function Required(): PropertyDecorator {
  return ValidateBy({
    name: 'wireRequired',
    validator: {
      validate: (value: unknown) =>
        !isAbsent(value) && !(typeof value === 'string' && DOTNET_WHITE_SPACE.test(value)),
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

function MaxLength(max: number): PropertyDecorator {
  return validIfPresent(
    'wireMaxLength',
    (value) => typeof value === 'string' && value.length <= max,
    (args) => `The field ${args.property} must be a string with a maximum length of ${max}.`,
  );
}

/** The OpenAPI schema of a member: what validation enforces, stated for generated clients. */
function openApiSchema(member: WireScalarMember): ApiPropertyOptions {
  const common = { required: member.required, nullable: !member.required };
  switch (member.kind) {
    case 'int':
      return {
        ...common,
        type: 'integer',
        format: 'int32',
        minimum: member.min ?? INT32_MIN,
        maximum: member.max ?? INT32_MAX,
      };
    case 'decimal':
      // Any .NET decimal. A range applies after rounding half to even, so its bounds reach half a
      // unit further: `n ± 0.5` itself rounds to the even one of its neighbours.
      return {
        ...common,
        type: 'number',
        format: 'decimal',
        ...(member.min !== undefined && {
          minimum: member.min - 0.5,
          exclusiveMinimum: member.min % 2 !== 0,
        }),
        ...(member.max !== undefined && {
          maximum: member.max + 0.5,
          exclusiveMaximum: member.max % 2 !== 0,
        }),
      };
    case 'string':
      return { ...common, type: 'string', maxLength: member.maxLength };
    case 'boolean':
      return { ...common, type: 'boolean' };
    case 'date':
      return { ...common, type: 'string', format: 'date-time' };
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

interface FieldOptions {
  /** Present, not null and not blank, as DataAnnotations' [Required]. */
  required?: boolean;
}

export interface NumberFieldOptions extends FieldOptions {
  /** Inclusive whole-number bounds, as the seed's [Range] attributes; either may be given alone. */
  min?: number;
  max?: number;
}

export interface TextFieldOptions extends FieldOptions {
  /**
   * For text a request stores: its column's length, so that nothing accepted is cut. Without it text
   * is unbounded, as the legacy's was.
   */
  maxLength?: number;
}

/**
 * One declaration per member: its wire shape, the coercion from what clients send, and the validation
 * rules with the legacy messages, applied in that order so each member reports its first violation.
 * Every bound the OpenAPI schema states is a rule here, and no rule goes undocumented.
 */
function ScalarField(
  kind: WireScalarKind,
  options: NumberFieldOptions & TextFieldOptions = {},
): PropertyDecorator {
  return (target, key) => {
    const name = String(key);
    const { required = false } = options;
    // Each option binds only the kinds its schema keyword describes.
    const numeric = kind === 'int' || kind === 'decimal';
    const min = numeric ? options.min : undefined;
    const max = numeric ? options.max : undefined;
    const maxLength = kind === 'string' ? options.maxLength : undefined;
    for (const bound of [min, max]) {
      // A fractional bound has no [Range] reading, and the decimal schema widens whole bounds by half.
      if (bound !== undefined && !Number.isSafeInteger(bound))
        throw new Error(
          `${target.constructor.name}.${name}: range bounds are whole numbers (got ${bound})`,
        );
    }
    const member: WireScalarMember = { name, kind, required, min, max, maxLength };
    registerWireMember(target, member);
    ApiProperty(openApiSchema(member))(target, key);
    const rules: PropertyDecorator[] = [];
    if (required) rules.push(Required());
    rules.push(validIfPresent(`wire_${kind}`, VALIDITY[kind], invalidValue));
    if (min !== undefined || max !== undefined) rules.push(Range(min, max));
    if (maxLength !== undefined) rules.push(MaxLength(maxLength));
    for (const rule of rules) rule(target, key);
  };
}

export const IntField = (options?: NumberFieldOptions) => ScalarField('int', options);
export const DecimalField = (options?: NumberFieldOptions) => ScalarField('decimal', options);
export const TextField = (options?: TextFieldOptions) => ScalarField('string', options);
export const BooleanField = () => ScalarField('boolean');
export const DateField = () => ScalarField('date');
/** An integer or a text, as the value happens to be: JSON writes each as its own type. */
export const IntOrTextField = () => ScalarField('intOrText');

/** A list of records: a JSON array, an XML wrapper of repeated item elements, indexed form keys. */
export function ListField(item: () => WireClass): PropertyDecorator {
  return (target, key) => {
    registerWireMember(target, { name: String(key), kind: 'list', item });
    ApiProperty({
      // Written inline: @nestjs/swagger knows a lazy type by the thunk's name being `type`.
      type: () => item(),
      isArray: true,
      required: false,
      nullable: true,
      xml: { name: String(key), wrapped: true },
    })(target, key);
    // For class-transformer, which builds the item instances of a DTO read by ValidationPipe.
    Type(item)(target, key);
    // A null list is a value like any other null. Its items are validated one by one by
    // toValidatedDto, which skips null items as Json.NET did (ValidateNested refuses them).
    ValidateIf((_, value) => !isAbsent(value))(target, key);
    ValidateBy({
      name: 'wireList',
      validator: {
        // A null item is a value Json.NET and DataContractSerializer both read; any other is a record,
        // as a codec binds it or as class-transformer builds it.
        validate: (value: unknown) =>
          Array.isArray(value) &&
          value.every((entry) => entry === null || isBoundRecord(entry) || entry instanceof item()),
        defaultMessage: invalidValue,
      },
    })(target, key);
  };
}
