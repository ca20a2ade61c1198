import { Body, Controller, type INestApplication, Post } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { type OperationObject, type ParameterObject, type SchemaObject } from '@nestjs/swagger';
import { createApp } from '../../app.factory';
import { loadAppConfig } from '../../config/app-config';
import { declaredIntegrationEvents } from '../../events/integration-event';
import { createOpenApiDocument, requestBodyOf } from '../../openapi/openapi-document';
import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { ExactDecimal, NUMERAL, parseDecimal } from '../values/exact-decimal';
import {
  BooleanField,
  DateField,
  DECIMAL_SCALE,
  DecimalField,
  IntField,
  ListField,
  TextField,
} from './wire-fields';
import { RequestValidationError } from './wire-errors';
import {
  declaredWireModels,
  type WireMember,
  type WireModel,
  WireRecord,
  wireModelOf,
} from './wire-model';
import { toValidatedDto } from './wire-validation';

/** One-sided bounds, which once were documented and not enforced; and a member for every rule. */
@WireRecord({ name: 'WireFieldsProbeLine' })
class WireFieldsProbeLineDto {
  @IntField({ required: true }) line?: number | null;
}

@WireRecord({ name: 'WireFieldsProbe' })
class WireFieldsProbeDto {
  @IntField({ min: 1 }) positive?: number | null;
  @IntField({ max: 10 }) up_to_ten?: number | null;
  @DecimalField({ min: 1 }) price?: number | null;
  @DecimalField({ max: 2 }) ratio?: number | null;
  @TextField({ required: true, maxLength: 3 }) code?: string | null;
  @IntField({ enum: [1, 2, 5] }) kind?: number | null;
  @IntField({ required: true, min: 0, max: 9, enum: [0, 9] }) edge?: number | null;
  @DecimalField({ exactMin: 0, exactMax: 0.2, scale: 4 }) rate?: number | null;
  @DecimalField({ greaterThan: 0, precision: 6, scale: 2 }) amount?: number | null;
  @DecimalField({ lessThan: -1.5 }) debit?: number | null;
  @DecimalField({ exactMin: -0.3, exactMax: 0.2 }) share?: number | null;
  @DecimalField({ scale: 0 }) whole?: number | null;
  @TextField({ required: true, enum: ['pending', 'approved', 'paid'] }) status?: string | null;
  @TextField({ enum: ['a', 'b'] }) choice?: string | null;
  @TextField({ minLength: 2, maxLength: 5, pattern: '^[A-Z]+$' }) ticker?: string | null;
  @TextField({ minLength: 1 }) named?: string | null;
  @TextField({ pattern: /\d/ }) with_digit?: string | null;
  @DateField({ earliest: '2000-01-01T00:00:00Z', latest: '2099-12-31T23:59:59.999Z' })
  due?: Date | null;
  @DateField({ required: true, earliest: new Date('2024-01-01T00:00:00+08:00') })
  since?: Date | null;
  @BooleanField({ required: true }) agreed?: boolean | null;
  @ListField(() => WireFieldsProbeLineDto, { minItems: 1, maxItems: 3 })
  lines?: WireFieldsProbeLineDto[] | null;
  @ListField(() => WireFieldsProbeLineDto, { required: true, maxItems: 0 })
  none?: WireFieldsProbeLineDto[] | null;
}

@Controller('probe')
class WireFieldsProbeController {
  @Post()
  take(@Body() probe: WireFieldsProbeDto): WireFieldsProbeDto {
    return probe;
  }
}

const PARAMETER = 'probe';

/** The messages validation gives one member of a record; `undefined` when it accepts the member. */
function refusalOf(model: WireModel, member: string, value: unknown): string[] | undefined {
  try {
    toValidatedDto(model.type, value === undefined ? {} : { [member]: value }, PARAMETER);
    return undefined;
  } catch (error) {
    if (!(error instanceof RequestValidationError)) throw error;
    return error.modelState[`${PARAMETER}.${member}`];
  }
}

const decimal = (text: string) => parseDecimal(text, NUMERAL) as ExactDecimal;

/** A value tried against a member, named for the failure message. */
interface Probe {
  readonly label: string;
  readonly value: unknown;
}

/** A value the document says the member admits, or refuses. */
interface Case extends Probe {
  readonly admitted: boolean;
}

// .NET's largest decimal: how far an unbounded decimal member reaches.
const DOTNET_DECIMAL_MAX = '79228162514264337593543950335';
const UNBOUNDED_TEXT = 100_000;

/** Exact decimal arithmetic, enough to step around a bound: a value in units of 10^-scale. */
function scaled(value: ExactDecimal, scale: number): bigint {
  const [whole, fraction = ''] = value.toString().replace('-', '').split('.');
  const units = BigInt(`${whole}${fraction.padEnd(scale, '0').slice(0, scale)}`);
  return value.negative ? -units : units;
}

function unscaled(units: bigint, scale: number): ExactDecimal {
  const digits = (units < 0n ? -units : units).toString().padStart(scale + 1, '0');
  const spelled = `${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
  return decimal(`${units < 0n ? '-' : ''}${spelled}`);
}

/** `value + count × 10^-scale`, exactly. */
const stepped = (value: ExactDecimal, count: bigint, scale: number) =>
  unscaled(scaled(value, scale) + count, scale);

/** The places of a step: 4 for 0.0001, 0 for 1. */
const placesOf = (step: number) => ExactDecimal.ofNumber(step).decimalPlaces();

/**
 * What the document says of a value, keyword by keyword, as a client reading the schema would judge
 * it; `required` is undefined for a record only answered. Numbers are compared exactly.
 */
function documentAdmits(
  property: SchemaObject,
  value: unknown,
  required: boolean | undefined,
): boolean {
  if (value === undefined) return required !== true;
  if (property.anyOf)
    return (property.anyOf as SchemaObject[]).some((branch) =>
      documentAdmits(branch, value, undefined),
    );
  if (value === null) return property.nullable === true && (property.enum?.includes(null) ?? true);
  if (property.enum && !property.enum.some((listed) => isDeepStrictEqual(listed, value))) {
    // An exact decimal is listed as the number it is.
    if (!(value instanceof ExactDecimal)) return false;
    if (
      !property.enum.some(
        (listed) =>
          typeof listed === 'number' && ExactDecimal.ofNumber(listed).compare(value) === 0,
      )
    )
      return false;
  }
  switch (property.type) {
    case 'integer':
    case 'number': {
      const exact =
        property.type === 'integer'
          ? typeof value === 'number' && Number.isInteger(value)
            ? ExactDecimal.ofNumber(value)
            : undefined
          : value instanceof ExactDecimal
            ? value
            : undefined;
      if (!exact) return false;
      const { minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf } = property;
      if (minimum !== undefined) {
        const order = exact.compare(ExactDecimal.ofNumber(minimum));
        if (order < 0 || (order === 0 && exclusiveMinimum === true)) return false;
      }
      if (maximum !== undefined) {
        const order = exact.compare(ExactDecimal.ofNumber(maximum));
        if (order > 0 || (order === 0 && exclusiveMaximum === true)) return false;
      }
      if (multipleOf !== undefined) {
        const places = placesOf(multipleOf);
        if (exact.decimalPlaces() > places) return false;
        const step = scaled(ExactDecimal.ofNumber(multipleOf), places);
        if (scaled(exact, places) % step !== 0n) return false;
      }
      return true;
    }
    case 'string': {
      const extensions = property as Record<string, unknown>;
      if (property.format === 'date-time') {
        if (!(value instanceof Date)) return false;
        const earliest = extensions['x-earliest'] as string | undefined;
        const latest = extensions['x-latest'] as string | undefined;
        return (
          (earliest === undefined || value.getTime() >= Date.parse(earliest)) &&
          (latest === undefined || value.getTime() <= Date.parse(latest))
        );
      }
      if (typeof value !== 'string') return false;
      const { minLength, maxLength, pattern } = property;
      return (
        (minLength === undefined || value.length >= minLength) &&
        (maxLength === undefined || value.length <= maxLength) &&
        (pattern === undefined || new RegExp(pattern, 'u').test(value))
      );
    }
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return (
        Array.isArray(value) &&
        (property.minItems === undefined || value.length >= property.minItems) &&
        (property.maxItems === undefined || value.length <= property.maxItems)
      );
    default:
      throw new Error(`no reading of the schema type ${String(property.type)}`);
  }
}

/** Numbers around each documented bound and step: just inside, just outside, and far out. */
function numberProbes(property: SchemaObject): Probe[] {
  const integer = property.type === 'integer';
  // A decimal steps by its own scale, or by the finest fraction a column stores.
  const places = integer ? 0 : placesOf(property.multipleOf ?? 10 ** -DECIMAL_SCALE);
  const valueOf = (exact: ExactDecimal) => (integer ? exact.toNumber() : exact);
  const probes: Probe[] = [];
  const add = (label: string, exact: ExactDecimal) =>
    probes.push({ label: `${label}: ${exact.toString()}`, value: valueOf(exact) });
  const sides = [
    { keyword: 'minimum', bound: property.minimum, out: -1n },
    { keyword: 'maximum', bound: property.maximum, out: 1n },
  ];
  for (const { keyword, bound, out } of sides) {
    if (bound === undefined) {
      const far = integer
        ? ExactDecimal.ofNumber(Number(out) * Number.MAX_SAFE_INTEGER)
        : decimal(`${out < 0n ? '-' : ''}${DOTNET_DECIMAL_MAX}`);
      add(`no ${keyword}`, far);
      continue;
    }
    const exact = ExactDecimal.ofNumber(bound);
    add(keyword, exact);
    add(`inside ${keyword}`, stepped(exact, -out, places));
    add(`outside ${keyword}`, stepped(exact, out, places));
    if (!integer) {
      // A hair either side, past what a double tells apart: bounds are compared exactly.
      const fine = Math.min(20, 27 - exact.wholeDigits());
      add(`a hair inside ${keyword}`, stepped(exact, -out, fine));
      add(`a hair outside ${keyword}`, stepped(exact, out, fine));
    }
  }
  if (property.multipleOf !== undefined) {
    // Off the step by a tenth of it, beside a value the range admits.
    const anchor = probes.find(({ value }) => documentAdmits(property, value, undefined));
    const base =
      anchor === undefined
        ? decimal('0')
        : integer
          ? ExactDecimal.ofNumber(anchor.value as number)
          : (anchor.value as ExactDecimal);
    add('a step further', stepped(base, 10n, places + 1));
    add('a tenth of a step further', stepped(base, 1n, places + 1));
  }
  for (const listed of property.enum ?? []) {
    if (typeof listed !== 'number') continue;
    add('listed', ExactDecimal.ofNumber(listed));
    add('beside a listed value', ExactDecimal.ofNumber(listed + 1));
    add('beside a listed value', ExactDecimal.ofNumber(listed - 1));
  }
  return probes;
}

/** Text around each documented length, pattern and listed value. */
function textProbes(property: SchemaObject): Probe[] {
  const { minLength, maxLength, pattern } = property;
  const probes: Probe[] = [];
  const add = (label: string, text: string) =>
    probes.push({
      label: `${label}: ${JSON.stringify(text.length > 12 ? `${text.slice(0, 12)}…` : text)} (${text.length})`,
      value: text,
    });
  // Letters a pattern may ask for, in the lengths documented.
  const filler = (length: number) => 'X'.repeat(length);
  if (maxLength === undefined) add('no maxLength', filler(UNBOUNDED_TEXT));
  else {
    add('maxLength', filler(maxLength));
    add('past maxLength', filler(maxLength + 1));
  }
  if (minLength !== undefined) {
    add('minLength', filler(minLength));
    if (minLength > 0) add('short of minLength', filler(minLength - 1));
  }
  for (const listed of property.enum ?? []) {
    if (typeof listed !== 'string') continue;
    add('listed', listed);
    for (const other of [listed.toUpperCase(), `${listed}x`, listed.slice(0, -1), `${listed} `])
      if (other !== listed) add('not listed', other);
  }
  if (pattern !== undefined) {
    const expression = new RegExp(pattern, 'u');
    const lengths = { minLength: minLength ?? 0, maxLength: Math.min(maxLength ?? 20, 20) };
    const matching = fc
      .sample(fc.stringMatching(expression), { seed: 7, numRuns: 200 })
      .filter((text) => text.length >= lengths.minLength && text.length <= lengths.maxLength);
    const others = fc
      .sample(fc.string(lengths), { seed: 7, numRuns: 200 })
      .filter((text) => !expression.test(text));
    for (const text of matching.slice(0, 3)) add('matching', text);
    for (const text of others.slice(0, 3)) add('not matching', text);
  }
  return probes;
}

function dateProbes(property: SchemaObject): Probe[] {
  const extensions = property as Record<string, unknown>;
  const probes: Probe[] = [{ label: 'a date', value: new Date(Date.UTC(2024, 0, 2)) }];
  for (const [keyword, out] of [
    ['x-earliest', -1],
    ['x-latest', 1],
  ] as const) {
    const bound = extensions[keyword] as string | undefined;
    if (bound === undefined) continue;
    const instant = Date.parse(bound);
    probes.push({ label: `${keyword} ${bound}`, value: new Date(instant) });
    probes.push({ label: `a millisecond outside ${keyword}`, value: new Date(instant + out) });
  }
  return probes;
}

/** Lists of bare items, around the documented counts; an item's own rules are keyed elsewhere. */
function listProbes(property: SchemaObject): Probe[] {
  const counts = new Set([0, 1]);
  for (const count of [property.minItems, property.maxItems])
    if (count !== undefined)
      for (const near of [count - 1, count, count + 1]) if (near >= 0) counts.add(near);
  return [...counts].map((count) => ({
    label: `a list of ${count}`,
    value: Array.from({ length: count }, () => ({})),
  }));
}

/**
 * The values tried against a member: absence and null, then values around every rule its schema
 * states.
 */
function probesOf(property: SchemaObject, required: boolean | undefined): Probe[] {
  const presence: Probe[] = [
    ...(required === undefined ? [] : [{ label: 'absent', value: undefined }]),
    { label: 'null', value: null },
  ];
  if (property.anyOf)
    return [
      ...presence,
      ...(property.anyOf as SchemaObject[]).flatMap((branch) =>
        probesOf(branch, undefined).slice(1),
      ),
    ];
  switch (property.type) {
    case 'integer':
    case 'number':
      return [...presence, ...numberProbes(property)];
    case 'string':
      return [
        ...presence,
        ...(property.format === 'date-time' ? dateProbes(property) : textProbes(property)),
      ];
    case 'boolean':
      return [...presence, { label: 'true', value: true }];
    case 'array':
      return [...presence, ...listProbes(property)];
    default:
      throw new Error(`no probes for the schema type ${String(property.type)}`);
  }
}

/**
 * What the document promises about one member, as values and whether each is admitted; `required`
 * is undefined for a record only answered, whose schema requires every member as always written.
 */
function documentedCases(property: SchemaObject, required: boolean | undefined): Case[] {
  return probesOf(property, required).map((probe) => ({
    ...probe,
    admitted: documentAdmits(property, probe.value, required),
  }));
}

/** The keywords that state a rule: each must refuse a probe that no other keyword refuses. */
const RULE_KEYWORDS = [
  'minimum',
  'maximum',
  'multipleOf',
  'enum',
  'minLength',
  'maxLength',
  'pattern',
  'x-earliest',
  'x-latest',
  'minItems',
  'maxItems',
] as const;

/**
 * The rule keywords that no probe tries: none that the keyword, alone over the member's type,
 * refuses. Every probe gets the same verdict from the document and from validation, so a keyword a
 * probe tries is one validation enforces, or one the others make redundant.
 */
function keywordsNotTried(property: SchemaObject, cases: readonly Case[]): string[] {
  const schemas = property.anyOf ? (property.anyOf as SchemaObject[]) : [property];
  return schemas.flatMap((schema) =>
    RULE_KEYWORDS.filter((keyword) => {
      const stated = (schema as Record<string, unknown>)[keyword];
      if (stated === undefined) return false;
      const alone = {
        type: schema.type,
        format: schema.format,
        [keyword]: stated,
        ...(keyword === 'minimum' && { exclusiveMinimum: schema.exclusiveMinimum }),
        ...(keyword === 'maximum' && { exclusiveMaximum: schema.exclusiveMaximum }),
      } as SchemaObject;
      return !cases.some(
        ({ value }) =>
          value !== null && value !== undefined && !documentAdmits(alone, value, undefined),
      );
    }),
  );
}

/**
 * The keywords the cases above turn into values. A keyword stating another rule needs its probes and
 * its reading in documentAdmits before a decorator may document it.
 */
const CHECKED_KEYWORDS = new Set([
  'anyOf',
  'type',
  'format',
  'nullable',
  'exclusiveMinimum',
  'exclusiveMaximum',
  ...RULE_KEYWORDS,
  // Shape, not rules: the item schema, the XML name, a query parameter's default and example, that
  // requests' values of the member are not read (the codecs' suites check that), and the words of a
  // decimal's or a date's description.
  'description',
  'items',
  'xml',
  'default',
  'example',
  'readOnly',
]);

const declared = declaredWireModels().map((model) => [model.schemaName, model] as const);
const members = declaredWireModels().flatMap((model) =>
  model.members.map((member) => [`${model.schemaName}.${member.name}`, model, member] as const),
);

describe('field decorators: what the OpenAPI document states is what validation enforces', () => {
  const apps: INestApplication[] = [];
  let schemas: Record<string, SchemaObject> = {};
  /** Records no request body names: their schemas describe answers only. */
  const answeredOnly = new Set<string>();

  beforeAll(async () => {
    const config = loadAppConfig({ DATABASE_URL: 'sqlite::memory:', DEMO_DATA: 'false' });
    const probeModule = await Test.createTestingModule({
      controllers: [WireFieldsProbeController],
    }).compile();
    apps.push(await createApp(config, { logger: false }), probeModule.createNestApplication());
    for (const app of apps) {
      await app.init();
      // The events' payloads too, as the AsyncAPI document takes their schemas from it.
      const document = createOpenApiDocument(
        app,
        config,
        'test',
        declaredIntegrationEvents().map(({ payload }) => payload),
      );
      const components = document.components?.schemas ?? {};
      schemas = { ...schemas, ...(components as Record<string, SchemaObject>) };
      const requests = JSON.stringify(
        Object.values(document.paths).flatMap((item) =>
          Object.values(item as Record<string, OperationObject>).map((operation) =>
            requestBodyOf(document, operation),
          ),
        ),
      );
      // A request body names its record, whose own records it names in turn.
      const named = (name: string): boolean =>
        requests.includes(`/${name}"`) ||
        Object.entries(schemas).some(
          ([owner, schema]) =>
            owner !== name && JSON.stringify(schema).includes(`/${name}"`) && named(owner),
        );
      for (const name of Object.keys(components))
        if (!named(name) && !name.endsWith('Input')) answeredOnly.add(name);
      // A query string's record is documented as its operation's query parameters. A query string
      // has no null: a parameter sent empty is read as null, as validation then sees it.
      for (const item of Object.values(document.paths)) {
        for (const { parameters = [] } of Object.values(item) as OperationObject[]) {
          const query = (parameters as ParameterObject[]).filter(
            (parameter) => parameter.in === 'query',
          );
          const names = query.map(({ name }) => name).join();
          const model = declaredWireModels().find(
            ({ members }) => members.map(({ name }) => name).join() === names,
          );
          if (!model || query.length === 0) continue;
          schemas[model.schemaName] = {
            type: 'object',
            properties: Object.fromEntries(
              query.map(({ name, schema }) => [
                name,
                { ...(schema as SchemaObject), nullable: true },
              ]),
            ),
            required: query.filter(({ required }) => required).map(({ name }) => name),
          };
        }
      }
    }
  });

  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  it.each(declared)('%s documents exactly its members', (name, model) => {
    const schema = schemas[name];
    expect(Object.keys(schema?.properties ?? {})).toEqual(model.members.map(({ name }) => name));
  });

  it.each(members)('%s admits what its schema states', (_, model, member: WireMember) => {
    // A record a request may carry is stated for requests by its schema, or by its `<Name>Input` twin
    // when answers carry it too; a record only answered states no request's rules for absence.
    const schema = schemas[`${model.schemaName}Input`] ?? schemas[model.schemaName];
    const property = schema.properties?.[member.name] as SchemaObject;
    expect(Object.keys(property).filter((keyword) => !CHECKED_KEYWORDS.has(keyword))).toEqual([]);
    const required = answeredOnly.has(model.schemaName)
      ? undefined
      : (schema.required?.includes(member.name) ?? false);
    const cases = documentedCases(property, required);
    const enforced = cases.map((entry) => ({
      ...entry,
      admitted: refusalOf(model, member.name, entry.value) === undefined,
    }));
    expect(enforced).toEqual(cases);
    // Both ways: every rule the schema states is tried by a value it refuses.
    expect(keywordsNotTried(property, cases)).toEqual([]);
  });

  it('refuses a value past a one-sided bound, in the voice of the legacy messages', () => {
    const probe = wireModelOf(WireFieldsProbeDto);
    expect(refusalOf(probe, 'positive', -5)).toEqual(['The field positive must be at least 1.']);
    expect(refusalOf(probe, 'up_to_ten', 11)).toEqual(['The field up_to_ten must be at most 10.']);
    expect(refusalOf(probe, 'price', decimal('0.4'))).toEqual([
      'The field price must be at least 1.',
    ]);
    expect(refusalOf(probe, 'ratio', decimal('2.6'))).toEqual([
      'The field ratio must be at most 2.',
    ]);
    expect(refusalOf(probe, 'code', 'abcd')).toEqual([
      'The field code must be a string with a maximum length of 3.',
    ]);
    expect(refusalOf(probe, 'code', undefined)).toEqual(['The code field is required.']);
  });
});
