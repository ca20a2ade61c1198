import * as classValidator from 'class-validator';
import { ValidationTypes } from 'class-validator';
import { FIELD_DECORATORS, optionText } from './wire-fields';
import { type WireMember } from './wire-model';

type ValidationMetadata = ReturnType<
  classValidator.MetadataStorage['getTargetValidationMetadatas']
>[number];

/**
 * The names class-validator's own decorators register their rules under (`max`, `isIn`, `isLength`):
 * the string constants it exports beside them.
 */
const BUILT_IN = new Set(
  Object.values(classValidator).filter((value): value is string => typeof value === 'string'),
);

/** The rules the field decorators declare: `wireRequired`, `wire_decimal`, `wireExactRange`… */
export const isWireRule = (name: string | undefined) =>
  name !== undefined && /^wire[A-Z_]/.test(name);

/** A field decorator with options, as the developer would write it on this member. */
function field(member: WireMember, options: Record<string, unknown>): string {
  const written = Object.entries(options)
    .map(([name, value]) => `${name}: ${optionText(value)}`)
    .join(', ');
  return member.kind === 'list'
    ? `ListField(() => ${member.item().name}, { ${written} })`
    : `${FIELD_DECORATORS[member.kind]}({ ${written} })`;
}

/** The decorator's name as imported: `isIn` is @IsIn, `isLength` is @Length. */
const DECORATOR_NAMES: Record<string, string> = {
  isLength: 'Length',
  isIp: 'IsIP',
  isFqdn: 'IsFQDN',
  isIso8601: 'IsISO8601',
  isUuid: 'IsUUID',
  isJson: 'IsJSON',
  isJwt: 'IsJWT',
  isIsbn: 'IsISBN',
  isIsin: 'IsISIN',
  isMacAddress: 'IsMACAddress',
  isEnum: 'IsEnum',
};

function decoratorOf(metadata: ValidationMetadata): string {
  switch (metadata.type) {
    case ValidationTypes.NESTED_VALIDATION:
      return 'ValidateNested';
    case ValidationTypes.WHITELIST:
      return 'Allow';
    case ValidationTypes.PROMISE_VALIDATION:
      return 'ValidatePromise';
    case ValidationTypes.CONDITIONAL_VALIDATION:
      return metadata.name === classValidator.IS_OPTIONAL ? 'IsOptional' : 'ValidateIf';
  }
  const name = metadata.name ?? 'Validate';
  return DECORATOR_NAMES[name] ?? name.charAt(0).toUpperCase() + name.slice(1);
}

/** The decorator as written: `@Max(0.2)`, `@IsIn(['a', 'b'])`. */
function written(metadata: ValidationMetadata): string {
  const decorator = decoratorOf(metadata);
  if (metadata.type === ValidationTypes.CONDITIONAL_VALIDATION) return `@${decorator}()`;
  const constraints = [...((metadata.constraints as unknown[] | undefined) ?? [])];
  // @IsEnum(Status) keeps the values it computed beside the enum, and a numeric enum's reverse keys.
  if (metadata.name === 'isEnum') constraints.splice(0, Infinity, enumObject(constraints[0]));
  while (constraints.length > 0 && constraints[constraints.length - 1] === undefined)
    constraints.pop();
  return `@${decorator}(${constraints.map(optionText).join(', ')})`;
}

/** A TypeScript enum object without a numeric enum's reverse mapping (`1: 'Gold'`). */
const enumObject = (entity: unknown): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(entity as Record<string, unknown>).filter(([key]) => Number.isNaN(Number(key))),
  );

/** The values of a TypeScript enum object. */
const enumValues = (entity: unknown): unknown[] => Object.values(enumObject(entity));

/** class-validator's number rules, which refuse anything but a JavaScript number. */
const NUMBER_RULES = new Set([
  'max',
  'min',
  'isPositive',
  'isNegative',
  'isDivisibleBy',
  'isNumber',
]);

const TYPE_RULES = new Set([
  'isInt',
  'isNumber',
  'isString',
  'isBoolean',
  'isDate',
  'isArray',
  'isObject',
]);

/** What to declare instead of a class-validator rule on a member, when a field option says it. */
function replacement(
  name: string,
  constraints: readonly unknown[],
  member: WireMember,
): string | undefined {
  const [first, second] = constraints;
  const { kind } = member;
  const numeric = kind === 'int' || kind === 'decimal';
  switch (name) {
    case 'max':
    case 'min': {
      if (!numeric || typeof first !== 'number') return undefined;
      if (kind === 'decimal')
        return field(member, { [name === 'max' ? 'exactMax' : 'exactMin']: first });
      const whole = name === 'max' ? Math.floor(first) : Math.ceil(first);
      return field(member, { [name]: whole });
    }
    case 'isPositive':
      return kind === 'decimal'
        ? field(member, { greaterThan: 0 })
        : kind === 'int'
          ? field(member, { min: 1 })
          : undefined;
    case 'isNegative':
      return kind === 'decimal'
        ? field(member, { lessThan: 0 })
        : kind === 'int'
          ? field(member, { max: -1 })
          : undefined;
    case 'isIn':
    case 'isEnum': {
      const values = name === 'isIn' ? (first as unknown[]) : enumValues(first);
      return kind === 'string' || kind === 'int' ? field(member, { enum: values }) : undefined;
    }
    case 'isLength':
      return kind === 'string'
        ? field(member, {
            minLength: first,
            ...(second !== undefined && { maxLength: second }),
          })
        : undefined;
    case 'minLength':
    case 'maxLength':
      return kind === 'string' ? field(member, { [name]: first }) : undefined;
    case 'matches': {
      if (kind !== 'string') return undefined;
      const pattern = first instanceof RegExp ? first : new RegExp(String(first));
      return field(member, { pattern: new RegExp(pattern.source) });
    }
    case 'isNumber': {
      const places = (first as { maxDecimalPlaces?: number } | undefined)?.maxDecimalPlaces;
      return kind === 'decimal' && places !== undefined
        ? field(member, { scale: places })
        : undefined;
    }
    case 'isNotEmpty':
    case 'isDefined':
      return field(member, { required: true });
    case 'minDate':
    case 'maxDate':
      return kind === 'date' && first instanceof Date
        ? field(member, { [name === 'minDate' ? 'earliest' : 'latest']: first })
        : undefined;
    case 'arrayMinSize':
    case 'arrayMaxSize':
    case 'arrayNotEmpty':
      return kind === 'list'
        ? field(member, {
            [name === 'arrayMaxSize' ? 'maxItems' : 'minItems']:
              name === 'arrayNotEmpty' ? 1 : first,
          })
        : undefined;
    default:
      return undefined;
  }
}

/** The rule's name as class-validator registered it: the decorator's, or the constraint class's. */
export function ruleName(metadata: ValidationMetadata): string | undefined {
  if (metadata.type === ValidationTypes.CONDITIONAL_VALIDATION)
    return metadata.name ?? 'validateIf';
  return (
    metadata.name ??
    (metadata.type === ValidationTypes.CUSTOM_VALIDATION ? undefined : metadata.type)
  );
}

/**
 * Why a class-validator decorator on a wire DTO's member is refused at start, and what to declare
 * instead; `undefined` for a rule wire validation runs as class-validator would: the field
 * decorators' own, and a module's own constraints (ValidateBy, @Validate), which see each value as
 * its format read it (a decimal as an ExactDecimal).
 *
 * class-validator's own decorators are refused: on a decimal its number rules refuse every value (the
 * value is an ExactDecimal, not a number), and on any member their rule would go unstated in the
 * OpenAPI document and answer in class-validator's voice rather than the legacy's.
 */
export function plainRuleRefusal(
  metadata: ValidationMetadata,
  member: WireMember | undefined,
  constraintName: string | undefined,
): string | undefined {
  const name = constraintName ?? ruleName(metadata);
  if (isWireRule(name)) return undefined;
  const decorator = written(metadata);
  if (!member)
    return (
      `${decorator} is on a member no field decorator declares: a wire model reads and writes ` +
      'only the members its field decorators declare (IntField, DecimalField, TextField, DateField, ' +
      'BooleanField, ListField), and their options state its rules.'
    );
  const custom = metadata.type === ValidationTypes.CUSTOM_VALIDATION && !BUILT_IN.has(name ?? '');
  if (custom) {
    if (metadata.each) return `${decorator} with each: wire validation runs a rule on the member.`;
    if (metadata.validateIf)
      return `${decorator} with validateIf: wire rules hold unconditionally; check the condition in the service.`;
    return undefined;
  }
  const isList = member.kind === 'list';
  const instead = replacement(
    name ?? '',
    (metadata.constraints as unknown[] | undefined) ?? [],
    member,
  );
  const why =
    member.kind === 'decimal' && NUMBER_RULES.has(name ?? '')
      ? `a DecimalField's value is an exact decimal, not a number, so ${decorator} would refuse every value`
      : 'class-validator rules on a wire DTO would go unstated in the OpenAPI document and answer ' +
        "in class-validator's voice, not the legacy's";
  let advice: string;
  if (instead) advice = `Use ${instead} instead.`;
  else if (metadata.type === ValidationTypes.CONDITIONAL_VALIDATION)
    advice =
      name === classValidator.IS_OPTIONAL
        ? `Remove it: a wire field is optional unless declared with { required: true }.`
        : 'Remove it: wire rules hold unconditionally; check the condition in the service.';
  else if (
    isList &&
    ['validateNested', 'isArray', ValidationTypes.NESTED_VALIDATION].includes(name ?? '')
  )
    advice = 'Remove it: ListField binds and validates its items by their own model.';
  else if (TYPE_RULES.has(name ?? '') || name === ValidationTypes.WHITELIST)
    advice = `Remove it: ${FIELD_DECORATORS[member.kind]} already refuses a value of another type, in the legacy voice.`;
  else
    advice =
      `No ${FIELD_DECORATORS[member.kind]} option states this rule: use the one that does (required, enum, ` +
      'min/max, exactMin/exactMax/greaterThan/lessThan, scale, precision, minLength/maxLength, ' +
      'pattern, earliest/latest, minItems/maxItems), or check it in the service.';
  return `${decorator} is not a wire rule (${why}). ${advice}`;
}
