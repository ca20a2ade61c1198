import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { ValidateBy, ValidateIf, ValidateNested, type ValidationArguments } from 'class-validator';
import { parseWireDate, isStorableDate } from './wire-date';
import {
  registerWireMember,
  type WireClass,
  type WireScalarKind,
  type WireScalarMember,
} from './wire-model';

/** Declared decimals are DECIMAL(15,4): every such value round-trips exactly through a double. */
export const DECIMAL_PRECISION = 15;
export const DECIMAL_SCALE = 4;
const DECIMAL_LIMIT = 10 ** (DECIMAL_PRECISION - DECIMAL_SCALE);
export const INT32_MIN = -2147483648;
export const INT32_MAX = 2147483647;
export const DEFAULT_TEXT_LENGTH = 255;

// Characters that XML 1.0 cannot carry: accepted in JSON, they could never be written back as XML.
// eslint-disable-next-line no-control-regex
const NON_XML_CHARACTER = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;
const NON_XML_CHARACTERS = new RegExp(NON_XML_CHARACTER.source, 'g');
const INTEGER_TEXT = /^\s*[+-]?\d+\s*$/;
const DECIMAL_TEXT = /^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)\s*$/;

/**
 * How a value appears inside `The value '…' is not valid for …`: short, never an object dump, and
 * always writable as XML text, with control characters spelled `\u0001`.
 */
export function describeValue(value: unknown): string {
  let text: string;
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

function fractionDigits(value: number): number {
  const [mantissa, exponent] = value.toString().split('e');
  const fraction = mantissa.split('.')[1]?.length ?? 0;
  return Math.max(0, fraction - Number(exponent ?? 0));
}

const isInt32 = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX;

const isWireDecimal = (value: unknown): value is number =>
  typeof value === 'number' &&
  Number.isFinite(value) &&
  Math.abs(value) < DECIMAL_LIMIT &&
  fractionDigits(value) <= DECIMAL_SCALE;

const isWireText = (value: unknown): value is string =>
  typeof value === 'string' && value.isWellFormed() && !NON_XML_CHARACTER.test(value);

/** Each coercion accepts what a legacy client may send for the kind, and leaves anything else as it was. */
const COERCIONS: Record<WireScalarKind, (value: unknown) => unknown> = {
  int: (value) => (typeof value === 'string' && INTEGER_TEXT.test(value) ? Number(value) : value),
  decimal: (value) => {
    if (typeof value !== 'string' || !DECIMAL_TEXT.test(value)) return value;
    const fraction = value.trim().split('.')[1]?.replace(/0+$/, '') ?? '';
    return fraction.length <= DECIMAL_SCALE ? Number(value) : value;
  },
  string: (value) => {
    if (typeof value === 'number') return String(value);
    if (typeof value === 'boolean') return value ? 'True' : 'False';
    return value;
  },
  boolean: (value) => {
    if (typeof value === 'string') {
      const text = value.trim().toLowerCase();
      if (text === 'true' || text === '1') return true;
      if (text === 'false' || text === '0') return false;
    }
    if (value === 1 || value === 0) return value === 1;
    return value;
  },
  date: (value) => (typeof value === 'string' ? (parseWireDate(value.trim()) ?? value) : value),
};

const VALIDITY: Record<WireScalarKind, (value: unknown) => boolean> = {
  int: isInt32,
  decimal: isWireDecimal,
  string: isWireText,
  boolean: (value) => typeof value === 'boolean',
  date: isStorableDate,
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
        !isAbsent(value) && !(typeof value === 'string' && value.trim() === ''),
      defaultMessage: (args?: ValidationArguments) => `The ${args?.property} field is required.`,
    },
  });
}

function Range(min: number, max: number): PropertyDecorator {
  return validIfPresent(
    'wireRange',
    (value) => typeof value === 'number' && value >= min && value <= max,
    (args) => `The field ${args.property} must be between ${min} and ${max}.`,
  );
}

function MaxLength(max: number): PropertyDecorator {
  return validIfPresent(
    'wireMaxLength',
    (value) => typeof value === 'string' && value.length <= max,
    (args) => `The field ${args.property} must be a string with a maximum length of ${max}.`,
  );
}

const DECIMAL_MAX = Number(
  `${'9'.repeat(DECIMAL_PRECISION - DECIMAL_SCALE)}.${'9'.repeat(DECIMAL_SCALE)}`,
);

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
      return {
        ...common,
        type: 'number',
        format: 'decimal',
        multipleOf: 1 / 10 ** DECIMAL_SCALE,
        minimum: member.min ?? -DECIMAL_MAX,
        maximum: member.max ?? DECIMAL_MAX,
      };
    case 'string':
      return { ...common, type: 'string', maxLength: member.maxLength };
    case 'boolean':
      return { ...common, type: 'boolean' };
    case 'date':
      return { ...common, type: 'string', format: 'date-time' };
  }
}

export interface ScalarFieldOptions {
  required?: boolean;
  /** Inclusive bounds, as the seed's [Range] attributes. */
  min?: number;
  max?: number;
  /** For text: the column length, so that nothing accepted is cut when stored. */
  maxLength?: number;
}

/**
 * One declaration per member: its wire shape, the coercion from what clients send, and the validation
 * rules with the legacy messages, applied in that order so each member reports its first violation.
 */
function ScalarField(kind: WireScalarKind, options: ScalarFieldOptions = {}): PropertyDecorator {
  return (target, key) => {
    const name = String(key);
    const maxLength = kind === 'string' ? (options.maxLength ?? DEFAULT_TEXT_LENGTH) : undefined;
    const required = options.required ?? false;
    const member: WireScalarMember = {
      name,
      kind,
      required,
      min: options.min,
      max: options.max,
      maxLength,
    };
    registerWireMember(target, member);
    ApiProperty(openApiSchema(member))(target, key);
    const coerce = COERCIONS[kind];
    Transform(({ value }) => coerce(value))(target, key);
    const rules: PropertyDecorator[] = [];
    if (required) rules.push(Required());
    rules.push(validIfPresent(`wire_${kind}`, VALIDITY[kind], invalidValue));
    if (options.min !== undefined && options.max !== undefined)
      rules.push(Range(options.min, options.max));
    if (maxLength !== undefined) rules.push(MaxLength(maxLength));
    for (const rule of rules) rule(target, key);
  };
}

export const IntField = (options?: ScalarFieldOptions) => ScalarField('int', options);
export const DecimalField = (options?: ScalarFieldOptions) => ScalarField('decimal', options);
export const TextField = (options?: ScalarFieldOptions) => ScalarField('string', options);
export const BooleanField = () => ScalarField('boolean');
export const DateField = () => ScalarField('date');

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
    Type(item)(target, key);
    // A null list is a value like any other null; class-validator would still try to descend into it.
    ValidateIf((_, value) => !isAbsent(value))(target, key);
    ValidateBy({
      name: 'wireList',
      validator: {
        validate: (value: unknown) =>
          Array.isArray(value) && value.every((entry) => entry instanceof item()),
        defaultMessage: invalidValue,
      },
    })(target, key);
    ValidateNested({ each: true })(target, key);
  };
}
