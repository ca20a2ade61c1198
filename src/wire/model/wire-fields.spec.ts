import { Body, Controller, type INestApplication, Post } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { type OperationObject, type ParameterObject, type SchemaObject } from '@nestjs/swagger';
import { createApp } from '../../app.factory';
import { loadAppConfig } from '../../config/app-config';
import { declaredIntegrationEvents } from '../../events/integration-event';
import { createOpenApiDocument } from '../../openapi/openapi-document';
import { type ExactDecimal, NUMERAL, parseDecimal } from '../values/exact-decimal';
import { DECIMAL_SCALE, DecimalField, IntField, TextField } from './wire-fields';
import { RequestValidationError } from './wire-errors';
import {
  declaredWireModels,
  type WireMember,
  type WireModel,
  WireRecord,
  wireModelOf,
} from './wire-model';
import { toValidatedDto } from './wire-validation';

/** One-sided bounds, which once were documented and not enforced. */
@WireRecord({ name: 'WireFieldsProbe' })
class WireFieldsProbeDto {
  @IntField({ min: 1 }) positive?: number | null;
  @IntField({ max: 10 }) up_to_ten?: number | null;
  @DecimalField({ min: 1 }) price?: number | null;
  @DecimalField({ max: 2 }) ratio?: number | null;
  @TextField({ required: true, maxLength: 3 }) code?: string | null;
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

/** A value the document says the member admits, or refuses. */
interface Case {
  readonly label: string;
  readonly value: unknown;
  readonly admitted: boolean;
}

// .NET's largest decimal: how far an unbounded decimal member reaches.
const DOTNET_DECIMAL_MAX = '79228162514264337593543950335';
const UNBOUNDED_TEXT = 100_000;

/** Each side of a documented number range, tried just inside and just outside; unbounded, far out. */
function rangeCases(property: SchemaObject): Case[] {
  const integer = property.type === 'integer';
  // A decimal steps by the finest fraction a column stores.
  const step = integer ? 1 : 10 ** -DECIMAL_SCALE;
  const spelled = (n: number) => (integer ? String(n) : n.toFixed(DECIMAL_SCALE));
  const valueOf = (n: number) => (integer ? n : decimal(spelled(n)));
  const sides = [
    { keyword: 'minimum', bound: property.minimum, exclusive: property.exclusiveMinimum, out: -1 },
    { keyword: 'maximum', bound: property.maximum, exclusive: property.exclusiveMaximum, out: 1 },
  ];
  return sides.flatMap(({ keyword, bound, exclusive, out }): Case[] => {
    if (bound === undefined) {
      const far = integer
        ? out * Number.MAX_SAFE_INTEGER
        : decimal(`${out < 0 ? '-' : ''}${DOTNET_DECIMAL_MAX}`);
      return [{ label: `no ${keyword}: ${String(far)}`, value: far, admitted: true }];
    }
    const inside = exclusive ? bound - out * step : bound;
    const outside = exclusive ? bound : bound + out * step;
    const stated = `${keyword} ${bound}${exclusive ? ' exclusive' : ''}`;
    return [
      { label: `${stated}: ${spelled(inside)}`, value: valueOf(inside), admitted: true },
      { label: `${stated}: ${spelled(outside)}`, value: valueOf(outside), admitted: false },
    ];
  });
}

/**
 * What the document promises about one member, as values and whether each is admitted; `required`
 * is undefined for a record only answered, whose schema requires every member as always written.
 */
function documentedCases(property: SchemaObject, required: boolean | undefined): Case[] {
  const presence: Case[] = [
    ...(required === undefined ? [] : [{ label: 'absent', value: undefined, admitted: !required }]),
    { label: 'null', value: null, admitted: property.nullable === true },
  ];
  if (property.anyOf) {
    const branches = property.anyOf as SchemaObject[];
    return [
      ...presence.slice(0, -1),
      { label: 'null', value: null, admitted: branches.every(({ nullable }) => nullable) },
      ...branches.flatMap((branch) => documentedCases(branch, undefined).slice(1)),
    ];
  }
  switch (property.type) {
    case 'integer':
    case 'number':
      return [...presence, ...rangeCases(property)];
    case 'string': {
      if (property.format === 'date-time')
        return [
          ...presence,
          { label: 'a date', value: new Date(Date.UTC(2024, 0, 2)), admitted: true },
        ];
      const length = property.maxLength;
      if (length === undefined) {
        const label = `no maxLength: ${UNBOUNDED_TEXT} characters`;
        return [...presence, { label, value: 'x'.repeat(UNBOUNDED_TEXT), admitted: true }];
      }
      return [
        ...presence,
        { label: `maxLength ${length}: ${length}`, value: 'x'.repeat(length), admitted: true },
        {
          label: `maxLength ${length}: ${length + 1}`,
          value: 'x'.repeat(length + 1),
          admitted: false,
        },
      ];
    }
    case 'boolean':
      return [...presence, { label: 'true', value: true, admitted: true }];
    case 'array':
      return [...presence, { label: 'an empty list', value: [], admitted: true }];
    default:
      throw new Error(`no cases for the schema type ${String(property.type)}`);
  }
}

/**
 * The keywords the cases above turn into values. A keyword stating another rule (enum, pattern,
 * minLength…) needs its cases here before a decorator may document it.
 */
const CHECKED_KEYWORDS = new Set([
  'anyOf',
  'type',
  'format',
  'nullable',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'maxLength',
  // Shape, not rules: the item schema, the XML name, a query parameter's default and example.
  'items',
  'xml',
  'default',
  'example',
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
          Object.values(item as Record<string, { requestBody?: unknown }>).map(
            ({ requestBody }) => requestBody,
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
