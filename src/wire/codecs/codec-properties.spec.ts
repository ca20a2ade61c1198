import fc from 'fast-check';
import { encodeForm, type FormListStyle } from '../../../test/support/client-encoding';
import { validRecord } from '../../../test/support/wire-arbitraries';
import { RequirementDto } from '../../requirement/dto/requirement.dto';
import { TransactionDto } from '../../transaction/dto/transaction.dto';
import { FormReader } from './form.codec';
import { JsonCodec } from './json.codec';
import { type WireReader } from './wire-codec';
import { MalformedBodyError, RequestValidationError } from '../model/wire-errors';
import {
  BooleanField,
  DateField,
  DecimalField,
  IntField,
  ListField,
  TextField,
} from '../model/wire-fields';
import { type WireClass, WireRecord, wireModelOf } from '../model/wire-model';
import { toValidatedDto } from '../model/wire-validation';
import { XmlCodec } from './xml.codec';

const json = new JsonCodec();
const xml = new XmlCodec('http://schemas.datacontract.org/2004/07/PropertySales.Models');
const form = new FormReader();
@WireRecord({ name: 'RuledSplit' })
class RuledSplitDto {
  @IntField({ required: true, enum: [1, 2, 3] }) agent_id?: number | null;
  @DecimalField({ exactMin: 0, exactMax: 1, scale: 2 }) share?: number | null;
}

/** A record with a member for every rule the field options declare. */
@WireRecord({ name: 'Ruled' })
class RuledDto {
  @DecimalField({ required: true, exactMin: 0, exactMax: 0.2, scale: 4 }) rate?: number | null;
  @DecimalField({ greaterThan: 0, precision: 6, scale: 2 }) amount?: number | null;
  @DecimalField({ lessThan: -0.5 }) debit?: number | null;
  @TextField({ required: true, enum: ['pending', 'approved', 'paid'] }) status?: string | null;
  @TextField({ minLength: 3, maxLength: 10, pattern: /^[A-Z0-9-]+$/ }) reference?: string | null;
  @TextField({ minLength: 2 }) note?: string | null;
  @DateField({ earliest: '2020-01-01T00:00:00Z', latest: '2030-12-31T23:59:59.999Z' })
  earned_on?: Date | null;
  @BooleanField({ required: true }) approved?: boolean | null;
  @ListField(() => RuledSplitDto, { required: true, minItems: 1, maxItems: 3 })
  splits?: RuledSplitDto[] | null;
}

const MODELS: Array<[string, WireClass]> = [
  ['Transaction', TransactionDto],
  ['Requirement', RequirementDto],
  ['a record of every rule', RuledDto],
];

/** Two records are the same when their canonical JSON is: every member, dates to the millisecond. */
const canonical = (type: WireClass, record: object) => json.encode(wireModelOf(type), record);

function readBack(reader: WireReader, text: string, type: WireClass): object {
  const model = wireModelOf(type);
  return toValidatedDto(type, reader.decode(text, model), model.parameterName);
}

describe.each(MODELS)('%s', (_, type) => {
  const model = wireModelOf(type);

  it('round-trips every valid record through XML exactly', () => {
    fc.assert(
      fc.property(validRecord(type), (record) => {
        expect(canonical(type, readBack(xml, xml.encode(model, record), type))).toBe(
          canonical(type, record),
        );
      }),
    );
  });

  it('round-trips every valid collection through an XML ArrayOf document exactly', () => {
    fc.assert(
      fc.property(fc.array(validRecord(type), { maxLength: 4 }), (records) => {
        const bound = xml.decodeList(xml.encode(model, records), model);
        const read = bound.map((record) => toValidatedDto(type, record, model.parameterName));
        expect(read.map((record) => canonical(type, record))).toEqual(
          records.map((record) => canonical(type, record)),
        );
      }),
      { numRuns: 50 },
    );
  });

  it.each<FormListStyle>(['brackets', 'dots'])(
    'round-trips every valid record through a form (%s) exactly',
    (style) => {
      fc.assert(
        fc.property(validRecord(type, { formSafe: true }), (record) => {
          const text = encodeForm(record, model, style);
          expect(canonical(type, readBack(form, text, type))).toBe(canonical(type, record));
        }),
      );
    },
  );

  it.each<[string, WireReader, (record: Record<string, unknown>) => string]>([
    ['XML', xml, (record) => xml.encode(model, record)],
    ['a form', form, (record) => encodeForm(record, model)],
    ['JSON', json, (record) => json.encode(model, record)],
  ])(
    'turns random or mutated %s into a record or a client error, never anything else',
    (_name, reader, encode) => {
      const mutated = fc
        .tuple(
          validRecord(type),
          fc.nat(),
          fc.nat({ max: 40 }),
          fc.string({ unit: 'binary', maxLength: 40 }),
        )
        .map(([record, at, cut, insert]) => {
          const text = encode(record);
          const position = at % (text.length + 1);
          return text.slice(0, position) + insert + text.slice(position + cut);
        });
      fc.assert(
        fc.property(fc.oneof(mutated, fc.string({ unit: 'binary', maxLength: 200 })), (text) => {
          try {
            readBack(reader, text, type);
          } catch (error) {
            if (!(error instanceof MalformedBodyError || error instanceof RequestValidationError))
              throw error;
          }
        }),
        { numRuns: 300 },
      );
    },
  );
});

/** A record with a member the service writes and never reads, such as a version. */
@WireRecord({ name: 'Versioned' })
class VersionedDto {
  @IntField({ required: true }) id?: number | null;
  @TextField() note?: string | null;
  @IntField({ readOnly: true }) row_version?: number | null;
}

describe('a read-only member', () => {
  const model = wireModelOf(VersionedDto);
  /** What a client might echo back there: the version it read, or anything else. */
  const echoed = fc.oneof(
    fc.integer(),
    fc.string({ maxLength: 20 }),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
  );
  const escapeXml = (text: string) =>
    text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

  it('is written in every format', () => {
    const record = { id: 7, note: null, row_version: 3 };
    expect(JSON.parse(json.encode(model, record))).toEqual(record);
    expect(xml.encode(model, record)).toContain('<row_version>3</row_version>');
  });

  it.each<[string, WireReader, (record: Record<string, unknown>, value: unknown) => string]>([
    [
      'JSON',
      json,
      (record, value) =>
        JSON.stringify({ ...JSON.parse(json.encode(model, record)), row_version: value }),
    ],
    [
      'XML',
      xml,
      (record, value) =>
        xml
          .encode(model, record)
          .replace(
            '<row_version i:nil="true" />',
            `<row_version>${escapeXml(String(value))}</row_version>`,
          ),
    ],
    [
      'a form',
      form,
      (record, value) =>
        `${encodeForm(record, model)}&row_version=${encodeURIComponent(String(value))}`,
    ],
  ])('is read from %s as absent, whatever it holds', (_, reader, encode) => {
    fc.assert(
      fc.property(validRecord(VersionedDto, { formSafe: true }), echoed, (record, value) => {
        const text = encode(record, value);
        expect(text).toContain('row_version');
        const read = readBack(reader, text, VersionedDto) as Record<string, unknown>;
        expect(read.row_version).toBeUndefined();
        expect(canonical(VersionedDto, read)).toBe(canonical(VersionedDto, record));
      }),
      { numRuns: 100 },
    );
  });

  it('is read from an answer, as the OpenAPI examples are', () => {
    expect(json.decodeAnswer('{"id":7,"row_version":3}', model)).toEqual({ id: 7, row_version: 3 });
  });
});
