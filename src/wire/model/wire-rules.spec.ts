import { Body, Controller, Post } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DocumentBuilder, type SchemaObject, SwaggerModule } from '@nestjs/swagger';
import { ValidateBy } from 'class-validator';
import { FormReader } from '../codecs/form.codec';
import { JsonCodec } from '../codecs/json.codec';
import { type WireReader } from '../codecs/wire-codec';
import { XmlCodec } from '../codecs/xml.codec';
import { ExactDecimal } from '../values/exact-decimal';
import {
  BooleanField,
  DATE_DESCRIPTION,
  DateField,
  DECIMAL_DESCRIPTION,
  DecimalField,
  IntField,
  ListField,
  TextField,
} from './wire-fields';
import { type ModelState, RequestValidationError } from './wire-errors';
import { WireRecord, wireModelOf } from './wire-model';
import { checkWireModels, toValidatedDto } from './wire-validation';

/*
 * Each rule a field option declares, as a module such as Commission uses it: enforced on what each
 * format reads (exact decimals from JSON numerals, XML text and form values alike), refused in the
 * legacy voice under the legacy key, and stated in the OpenAPI schema.
 */

@WireRecord({ name: 'CommissionSplit' })
class CommissionSplitDto {
  @IntField({ required: true }) agent_id?: number | null;
  @DecimalField({ exactMin: 0, exactMax: 1, scale: 2 }) share?: number | null;
}

@WireRecord({ name: 'Commission' })
class CommissionDto {
  @IntField({ required: true, min: 1 }) commission_id?: number | null;
  @DecimalField({ required: true, exactMin: 0, exactMax: 0.2, scale: 4 }) rate?: number | null;
  @DecimalField({ greaterThan: 0, precision: 15, scale: 4 }) amount?: number | null;
  @TextField({ required: true, enum: ['pending', 'approved', 'paid'] }) status?: string | null;
  @IntField({ enum: [1, 2, 3] }) tier?: number | null;
  @TextField({ minLength: 3, maxLength: 10, pattern: /^[A-Z0-9-]+$/ }) reference?: string | null;
  @DateField({ earliest: '2020-01-01T00:00:00Z', latest: '2030-12-31T23:59:59.999Z' })
  earned_on?: Date | null;
  @ListField(() => CommissionSplitDto, { minItems: 1, maxItems: 3 })
  splits?: CommissionSplitDto[] | null;
}

/** One-sided and other single rules, for their messages. */
@WireRecord({ name: 'RuleProbe' })
class RuleProbeDto {
  @DecimalField({ exactMin: -0.5 }) at_least?: number | null;
  @DecimalField({ exactMax: 1e21 }) at_most?: number | null;
  @DecimalField({ greaterThan: 0, lessThan: 1 }) open?: number | null;
  @DecimalField({ lessThan: 0 }) negative?: number | null;
  @DecimalField({ scale: 0 }) whole?: number | null;
  @DecimalField({ scale: 1 }) tenths?: number | null;
  @DecimalField({ precision: 3, scale: 3 }) fraction?: number | null;
  @DecimalField({ min: 1, max: 100 }) legacy?: number | null;
  @TextField({ minLength: 2 }) short?: string | null;
  @TextField({ pattern: 'é+' }) accented?: string | null;
  @DateField({ latest: new Date('2000-01-01T00:00:00Z') }) before?: Date | null;
  @DateField({ required: true }) due?: Date | null;
  @BooleanField({ required: true }) agreed?: boolean | null;
  @ListField(() => CommissionSplitDto, { maxItems: 1 }) one?: CommissionSplitDto[] | null;
  /** A module's own rule, which sees the value as its format read it. */
  @DecimalField()
  @ValidateBy({
    name: 'evenCents',
    validator: {
      validate: (value: unknown) =>
        value === null ||
        value === undefined ||
        (value instanceof ExactDecimal && value.decimalPlaces() <= 2),
      defaultMessage: () => 'The field cents must be in whole cents.',
    },
  })
  cents?: number | null;
}

/** A list that must be sent, even empty. */
@WireRecord({ name: 'RequiredList' })
class RequiredListDto {
  @ListField(() => CommissionSplitDto, { required: true }) some?: CommissionSplitDto[] | null;
}

const COMMISSION = wireModelOf(CommissionDto);
const PROBE = wireModelOf(RuleProbeDto);
const NAMESPACE = 'http://schemas.datacontract.org/2004/07/Commissions';

/** A JSON numeral, written unquoted; any other value is text, quoted in JSON. */
class Numeral {
  constructor(readonly text: string) {}
}
const numeral = (text: string) => new Numeral(text);
type Field = string | Numeral;

type Format = 'json' | 'xml' | 'form';
const FORMATS: readonly Format[] = ['json', 'xml', 'form'];

const READERS: Record<Format, WireReader> = {
  json: new JsonCodec(),
  xml: new XmlCodec(NAMESPACE),
  form: new FormReader(),
};

/** A body of scalar members in a format, as a client writes it. */
function bodyOf(format: Format, root: string, fields: Record<string, Field>): string {
  const entries = Object.entries(fields);
  const text = (value: Field) => (value instanceof Numeral ? value.text : value);
  switch (format) {
    case 'json':
      return `{${entries
        .map(
          ([name, value]) =>
            `"${name}":${value instanceof Numeral ? value.text : JSON.stringify(value)}`,
        )
        .join(',')}}`;
    case 'xml':
      return `<${root} xmlns="${NAMESPACE}">${entries
        .map(([name, value]) => `<${name}>${text(value)}</${name}>`)
        .join('')}</${root}>`;
    case 'form':
      return new URLSearchParams(
        entries.map(([name, value]): [string, string] => [name, text(value)]),
      ).toString();
  }
}

/** The DTO the body becomes, or the ModelState it is refused with. */
function read(
  format: Format,
  type: typeof CommissionDto | typeof RuleProbeDto | typeof RequiredListDto,
  body: string,
): { dto?: Record<string, unknown>; modelState?: ModelState } {
  const model = wireModelOf(type);
  try {
    const bound = READERS[format].decode(body, model);
    return {
      dto: toValidatedDto(model.type, bound, model.parameterName) as Record<string, unknown>,
    };
  } catch (error) {
    if (error instanceof RequestValidationError) return { modelState: error.modelState };
    throw error;
  }
}

const VALID: Record<string, Field> = {
  commission_id: numeral('7'),
  rate: numeral('0.05'),
  status: 'pending',
};

/** A Commission with `fields` over a valid one. */
const commission = (format: Format, fields: Record<string, Field>) =>
  read(format, CommissionDto, bodyOf(format, COMMISSION.name, { ...VALID, ...fields }));

/** The one member of a rule probe. */
const probe = (format: Format, fields: Record<string, Field>) =>
  read(
    format,
    RuleProbeDto,
    bodyOf(format, PROBE.name, {
      due: '2024-01-01T00:00:00Z',
      agreed: 'true',
      ...fields,
    }),
  );

describe.each(FORMATS)('wire rules in %s', (format) => {
  it.each([
    ['0', 0],
    ['0.2', 0.2],
    ['0.20000', 0.2],
    ['0.1234', 0.1234],
    ['2e-1', 0.2],
  ])('accepts the rate %s, between 0 and 0.2 with four decimal places', (spelled, value) => {
    const text = format === 'xml' && spelled.includes('e') ? '0.2' : spelled;
    expect(commission(format, { rate: numeral(text) }).dto?.rate).toBe(value);
  });

  it.each([
    ['0.2000000000000000001', 'The field rate must be between 0 and 0.2.'],
    ['0.2001', 'The field rate must be between 0 and 0.2.'],
    ['-0.0001', 'The field rate must be between 0 and 0.2.'],
    ['-0.0000000000000000001', 'The field rate must be between 0 and 0.2.'],
    ['0.12345', 'The field rate must have at most 4 decimal places.'],
    ['0.00001', 'The field rate must have at most 4 decimal places.'],
  ])('refuses the rate %s: %s', (spelled, message) => {
    expect(commission(format, { rate: numeral(spelled) }).modelState).toEqual({
      'commission.rate': [message],
    });
  });

  it('holds an amount to greater than 0 and DECIMAL(15,4)', () => {
    expect(commission(format, { amount: numeral('0.0001') }).dto?.amount).toBe(0.0001);
    expect(commission(format, { amount: numeral('99999999999.9999') }).dto?.amount).toBe(
      99999999999.9999,
    );
    expect(commission(format, { amount: numeral('0') }).modelState).toEqual({
      'commission.amount': ['The field amount must be greater than 0.'],
    });
    expect(commission(format, { amount: numeral('100000000000') }).modelState).toEqual({
      'commission.amount': [
        'The field amount must have at most 11 digits before the decimal point.',
      ],
    });
  });

  it('takes a status listed, exactly as listed', () => {
    expect(commission(format, { status: 'paid' }).dto?.status).toBe('paid');
    for (const status of ['Paid', 'paid ', 'cancelled'])
      expect(commission(format, { status }).modelState).toEqual({
        'commission.status': ['The field status must be one of pending, approved, paid.'],
      });
  });

  it('requires the status before it compares it', () => {
    const withoutStatus = { ...VALID };
    delete withoutStatus.status;
    const body = bodyOf(format, COMMISSION.name, withoutStatus);
    expect(read(format, CommissionDto, body).modelState).toEqual({
      'commission.status': ['The status field is required.'],
    });
  });

  it('takes a tier listed', () => {
    expect(commission(format, { tier: numeral('3') }).dto?.tier).toBe(3);
    expect(commission(format, { tier: numeral('4') }).modelState).toEqual({
      'commission.tier': ['The field tier must be one of 1, 2, 3.'],
    });
  });

  it('holds a reference to its lengths and pattern', () => {
    expect(commission(format, { reference: 'AB-12' }).dto?.reference).toBe('AB-12');
    expect(commission(format, { reference: 'AB' }).modelState).toEqual({
      'commission.reference': [
        'The field reference must be a string with a minimum length of 3 and a maximum length of 10.',
      ],
    });
    expect(commission(format, { reference: 'ABCDEFGHIJK' }).modelState).toEqual({
      'commission.reference': [
        'The field reference must be a string with a minimum length of 3 and a maximum length of 10.',
      ],
    });
    expect(commission(format, { reference: 'ab-12' }).modelState).toEqual({
      'commission.reference': [
        "The field reference must match the regular expression '^[A-Z0-9-]+$'.",
      ],
    });
  });

  it('holds a date to its range, compared as instants', () => {
    expect(commission(format, { earned_on: '2020-01-01T08:00:00+08:00' }).dto?.earned_on).toEqual(
      new Date('2020-01-01T00:00:00Z'),
    );
    expect(commission(format, { earned_on: '2030-12-31T23:59:59.999Z' }).dto?.earned_on).toEqual(
      new Date('2030-12-31T23:59:59.999Z'),
    );
    for (const earned_on of ['2020-01-01T07:59:59.999+08:00', '2031-01-01T00:00:00Z'])
      expect(commission(format, { earned_on }).modelState).toEqual({
        'commission.earned_on': [
          'The field earned_on must be between 2020-01-01T00:00:00.000Z and 2030-12-31T23:59:59.999Z.',
        ],
      });
  });

  it('gives the one-sided and single rules their messages', () => {
    const refusals: [Record<string, Field>, string, string][] = [
      [
        { at_least: numeral('-0.5000000000000000001') },
        'at_least',
        'The field at_least must be at least -0.5.',
      ],
      [
        { at_most: numeral('1000000000000000000000.1') },
        'at_most',
        'The field at_most must be at most 1000000000000000000000.',
      ],
      [
        { open: numeral('1') },
        'open',
        'The field open must be between 0 exclusive and 1 exclusive.',
      ],
      [{ negative: numeral('0') }, 'negative', 'The field negative must be less than 0.'],
      [{ whole: numeral('1.5') }, 'whole', 'The field whole must be a whole number.'],
      [
        { tenths: numeral('1.25') },
        'tenths',
        'The field tenths must have at most 1 decimal place.',
      ],
      [
        { fraction: numeral('1') },
        'fraction',
        'The field fraction must have at most 0 digits before the decimal point.',
      ],
      [{ legacy: numeral('0.5') }, 'legacy', 'The field legacy must be between 1 and 100.'],
      [{ legacy: numeral('100.5000001') }, 'legacy', 'The field legacy must be between 1 and 100.'],
      [{ short: 'x' }, 'short', 'The field short must be a string with a minimum length of 2.'],
      [{ accented: 'e' }, 'accented', "The field accented must match the regular expression 'é+'."],
      [
        { before: '2000-01-01T00:00:00.001Z' },
        'before',
        'The field before must be no later than 2000-01-01T00:00:00.000Z.',
      ],
      [{ cents: numeral('1.005') }, 'cents', 'The field cents must be in whole cents.'],
    ];
    for (const [fields, member, message] of refusals)
      expect(probe(format, fields).modelState).toEqual({ [`ruleProbe.${member}`]: [message] });
    // The legacy [Range] still rounds half to even before comparing: 0.5 is 0, 100.5 is 100.
    expect(probe(format, { legacy: numeral('100.5') }).dto?.legacy).toBe(100.5);
    expect(probe(format, { whole: numeral('2.000') }).dto?.whole).toBe(2);
    expect(probe(format, { accented: 'née' }).dto?.accented).toBe('née');
    expect(probe(format, { cents: numeral('1.50') }).dto?.cents).toBe(1.5);
  });

  it('requires dates and booleans declared required', () => {
    expect(read(format, RuleProbeDto, bodyOf(format, PROBE.name, {})).modelState).toEqual({
      'ruleProbe.due': ['The due field is required.'],
      'ruleProbe.agreed': ['The agreed field is required.'],
    });
  });
});

/** A Commission with splits, as each format writes a list of records. */
function withSplits(format: Format, splits: readonly Record<string, string>[]): string {
  switch (format) {
    case 'json':
      return JSON.stringify({
        commission_id: 7,
        rate: 0.05,
        status: 'pending',
        splits: splits.map((split) =>
          Object.fromEntries(Object.entries(split).map(([name, value]) => [name, Number(value)])),
        ),
      });
    case 'xml':
      return `<Commission xmlns="${NAMESPACE}"><commission_id>7</commission_id><rate>0.05</rate><status>pending</status><splits>${splits
        .map(
          (split) =>
            `<CommissionSplit>${Object.entries(split)
              .map(([name, value]) => `<${name}>${value}</${name}>`)
              .join('')}</CommissionSplit>`,
        )
        .join('')}</splits></Commission>`;
    case 'form':
      return [
        'commission_id=7&rate=0.05&status=pending',
        ...splits.flatMap((split, index) =>
          Object.entries(split).map(([name, value]) => `splits[${index}].${name}=${value}`),
        ),
      ].join('&');
  }
}

describe.each(['json', 'xml'] as const)('list rules in %s', (format) => {
  it('counts the items of a list', () => {
    expect(read(format, CommissionDto, withSplits(format, [])).modelState).toEqual({
      'commission.splits': [
        'The field splits must be a list with a minimum length of 1 and a maximum length of 3.',
      ],
    });
    const four = Array.from({ length: 4 }, (_, index) => ({ agent_id: String(index + 1) }));
    expect(read(format, CommissionDto, withSplits(format, four)).modelState).toEqual({
      'commission.splits': [
        'The field splits must be a list with a minimum length of 1 and a maximum length of 3.',
      ],
    });
  });
});

describe('a required list', () => {
  const requiredList = (format: Format, body: string) => read(format, RequiredListDto, body);

  it('is present, and may be empty where the format can say so', () => {
    const required = { 'requiredList.some': ['The some field is required.'] };
    expect(requiredList('json', '{}').modelState).toEqual(required);
    expect(requiredList('json', '{"some":null}').modelState).toEqual(required);
    expect(requiredList('json', '{"some":[]}').dto).toEqual({ some: [] });
    expect(requiredList('xml', `<RequiredList xmlns="${NAMESPACE}"/>`).modelState).toEqual(
      required,
    );
    expect(
      requiredList('xml', `<RequiredList xmlns="${NAMESPACE}"><some/></RequiredList>`).dto,
    ).toEqual({ some: [] });
    // A form cannot send an empty list: a required one takes at least an item.
    expect(requiredList('form', '').modelState).toEqual(required);
    expect(requiredList('form', 'some[0].agent_id=1').dto).toEqual({ some: [{ agent_id: 1 }] });
  });
});

describe.each(FORMATS)('the rules of list items in %s', (format) => {
  it("validates each item by its own model's rules, keyed by its index", () => {
    const splits = [
      { agent_id: '1', share: '0.25' },
      { agent_id: '2', share: '1.5' },
      { agent_id: '3', share: '0.125' },
    ];
    expect(read(format, CommissionDto, withSplits(format, splits)).modelState).toEqual({
      'commission.splits[1].share': ['The field share must be between 0 and 1.'],
      'commission.splits[2].share': ['The field share must have at most 2 decimal places.'],
    });
    const valid = read(format, CommissionDto, withSplits(format, splits.slice(0, 1)));
    expect(valid.dto?.splits).toEqual([{ agent_id: 1, share: 0.25 }]);
  });
});

describe('wire rules in the OpenAPI document', () => {
  let schemas: Record<string, SchemaObject>;

  beforeAll(async () => {
    @Controller('commission')
    class CommissionController {
      @Post()
      create(@Body() commission: CommissionDto): CommissionDto {
        return commission;
      }

      @Post('probe')
      probe(@Body() probe: RuleProbeDto): RuleProbeDto {
        return probe;
      }

      @Post('list')
      list(@Body() list: RequiredListDto): RequiredListDto {
        return list;
      }
    }
    const testing = await Test.createTestingModule({
      controllers: [CommissionController],
    }).compile();
    const app = testing.createNestApplication();
    await app.init();
    const document = SwaggerModule.createDocument(app, new DocumentBuilder().build());
    schemas = document.components!.schemas as Record<string, SchemaObject>;
    await app.close();
  });

  it('states each rule of a member with its keyword', () => {
    const properties = schemas.Commission.properties as Record<string, SchemaObject>;
    expect(properties.rate).toEqual({
      type: 'number',
      format: 'decimal',
      description: DECIMAL_DESCRIPTION,
      nullable: false,
      minimum: 0,
      exclusiveMinimum: false,
      maximum: 0.2,
      exclusiveMaximum: false,
      multipleOf: 0.0001,
    });
    expect(properties.amount).toEqual({
      type: 'number',
      format: 'decimal',
      description: DECIMAL_DESCRIPTION,
      nullable: true,
      minimum: 0,
      exclusiveMinimum: true,
      maximum: 99999999999.9999,
      exclusiveMaximum: false,
      multipleOf: 0.0001,
    });
    expect(properties.status).toEqual({
      type: 'string',
      nullable: false,
      enum: ['pending', 'approved', 'paid'],
    });
    // A member that may be null lists null among its values, as OpenAPI 3.0.3 reads `nullable`.
    expect(properties.tier).toEqual({
      type: 'integer',
      format: 'int32',
      nullable: true,
      minimum: -2147483648,
      maximum: 2147483647,
      enum: [1, 2, 3, null],
    });
    expect(properties.reference).toEqual({
      type: 'string',
      nullable: true,
      minLength: 3,
      maxLength: 10,
      pattern: '^[A-Z0-9-]+$',
    });
    expect(properties.earned_on).toEqual({
      type: 'string',
      format: 'date-time',
      description: DATE_DESCRIPTION,
      nullable: true,
      'x-earliest': '2020-01-01T00:00:00.000Z',
      'x-latest': '2030-12-31T23:59:59.999Z',
    });
    expect(properties.splits).toMatchObject({
      type: 'array',
      nullable: true,
      minItems: 1,
      maxItems: 3,
    });
    expect(schemas.Commission.required).toEqual(['commission_id', 'rate', 'status']);
  });

  it('states the tighter bound where several apply, and a required list', () => {
    const properties = schemas.RuleProbe.properties as Record<string, SchemaObject>;
    // precision 3, scale 3: below 1 in magnitude.
    expect(properties.fraction).toMatchObject({
      minimum: -0.999,
      maximum: 0.999,
      multipleOf: 0.001,
    });
    // The legacy [Range] keeps its rounded reading: half a unit further each side.
    expect(properties.legacy).toMatchObject({
      minimum: 0.5,
      exclusiveMinimum: true,
      maximum: 100.5,
      exclusiveMaximum: false,
    });
    expect(properties.whole).toMatchObject({ multipleOf: 1 });
    expect(schemas.RuleProbe.required).toEqual(['due', 'agreed']);
    expect(schemas.RequiredList.properties?.some).toMatchObject({ type: 'array', nullable: false });
    expect(schemas.RequiredList.required).toEqual(['some']);
  });
});

describe('a declaration the wire cannot honour', () => {
  /** Applies a field decorator to a fresh class's member, as a declaration does. */
  const declare = (decorator: PropertyDecorator) => () => {
    class Declared {}
    decorator(Declared.prototype, 'member');
  };

  it.each([
    ['range bounds are whole numbers (got 0.5)', DecimalField({ min: 0.5 })],
    ['min (5) is above max (1)', IntField({ min: 5, max: 1 })],
    ['min and max are the legacy [Range]', DecimalField({ min: 0, exactMax: 0.2 })],
    ['give exactMin or greaterThan, not both', DecimalField({ exactMin: 0, greaterThan: 0 })],
    ['give exactMax or lessThan, not both', DecimalField({ exactMax: 1, lessThan: 1 })],
    ['its bounds 1 and 1 leave no value', DecimalField({ greaterThan: 1, exactMax: 1 })],
    ['exactMin is a finite number', DecimalField({ exactMin: Number.NaN })],
    ['precision goes with scale', DecimalField({ precision: 6 })],
    ['precision is from 1', DecimalField({ precision: 20, scale: 4 })],
    ['precision is from 1', DecimalField({ precision: 2, scale: 4 })],
    ['scale is a count', DecimalField({ scale: -1 })],
    ['scale is at most 28', DecimalField({ scale: 29 })],
    ['enum lists at least one value', IntField({ enum: [] })],
    ['enum lists a value twice', IntField({ enum: [1, 1] })],
    ['the enum value 1.5 is not a 32-bit integer', IntField({ enum: [1.5] })],
    ['the enum value 4 is outside min and max', IntField({ max: 3, enum: [1, 4] })],
    [
      "the enum value 'paid' breaks minLength or maxLength",
      TextField({ maxLength: 3, enum: ['paid', 'open'] }),
    ],
    ["the enum value 'Paid' does not match", TextField({ pattern: /^[a-z]+$/, enum: ['Paid'] })],
    ['minLength (5) is above maxLength (2)', TextField({ minLength: 5, maxLength: 2 })],
    [
      'a read-only member is never read from a request',
      IntField({ readOnly: true, required: true }),
    ],
    ['the pattern /^a$/i carries the flag(s) i', TextField({ pattern: /^a$/i })],
    ['the pattern is not a regular expression', TextField({ pattern: '(' })],
    // Each tests what clients send: one whose time can grow faster than the text stops the start.
    [
      'the pattern /^(a+)+$/u can take more than linear time on some text: a+ can reach itself',
      TextField({ pattern: '^(a+)+$' }),
    ],
    [
      'the pattern /^\\d*\\d*x$/u can take more than linear time on some text: \\d* and \\d* can trade',
      // eslint-disable-next-line regexp/no-super-linear-backtracking -- the pattern the start refuses
      TextField({ pattern: /^\d*\d*x$/ }),
    ],
    [
      'the pattern /\\s+$/u can take more than linear time on some text: \\s+ is tried again at every position',
      TextField({ pattern: '\\s+$' }),
    ],
    [
      'earliest is an ISO 8601 date and time with its offset',
      DateField({ earliest: '2020-01-01' }),
    ],
    ["latest is not a date .NET's DateTime holds", DateField({ latest: new Date(Number.NaN) })],
    [
      'earliest (2021-01-01T00:00:00.000Z) is after latest (2020-01-01T00:00:00.000Z)',
      DateField({ earliest: '2021-01-01T00:00:00Z', latest: '2020-01-01T00:00:00Z' }),
    ],
    ['minItems is a count', ListField(() => CommissionSplitDto, { minItems: -1 })],
    [
      'minItems (2) is above maxItems (1)',
      ListField(() => CommissionSplitDto, { minItems: 2, maxItems: 1 }),
    ],
  ])('refuses it: %s', (problem, decorator) => {
    expect(declare(decorator)).toThrow(`Declared.member: ${problem}`);
  });
});

describe('the rules of these models at start', () => {
  it('finds nothing amiss in models declared with field options and a module rule', () => {
    expect(() =>
      checkWireModels([COMMISSION, PROBE, wireModelOf(CommissionSplitDto)]),
    ).not.toThrow();
  });
});
