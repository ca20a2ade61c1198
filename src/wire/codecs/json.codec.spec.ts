import { RequirementAcquisitionDto } from '../../requirement/dto/requirement-acquisition.dto';
import { RequirementDto } from '../../requirement/dto/requirement.dto';
import { TransactionDto } from '../../transaction/dto/transaction.dto';
import { ExactDecimal } from '../values/exact-decimal';
import { UnreadableValue } from '../values/unreadable-value';
import { JsonCodec } from './json.codec';
import { MAX_DOCUMENT_DEPTH } from './wire-codec';
import { setServiceTimeZone } from '../values/wire-date';
import { MalformedBodyError } from '../model/wire-errors';
import { wireModelOf } from '../model/wire-model';
import { toValidatedDto } from '../model/wire-validation';

const codec = new JsonCodec();
const transactionModel = wireModelOf(TransactionDto);
const requirementModel = wireModelOf(RequirementDto);
const acquisitionModel = wireModelOf(RequirementAcquisitionDto);

const ACQUISITION_MEMBERS = [
  'requirement_id',
  'requirement_type_id',
  'required',
  'requirement_description',
  'stamp',
  'submitted',
];

/** `{"a":{"a":…1…}}` with `levels` objects. */
const nestedObjects = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

/** A bound record with its exact decimals spelled out, for comparison. */
const plain = (record: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(record).map(([name, value]) => [
      name,
      value instanceof ExactDecimal ? value.toString() : value,
    ]),
  );

describe('JsonCodec', () => {
  afterEach(() => setServiceTimeZone('UTC'));

  describe('decode', () => {
    it.each([
      ['[{"requirement_id":1}],"Requirements":null', null],
      ['null,"REQUIREMENTS":[{"requirement_id":2}]', [{ requirement_id: 2 }]],
      ['[{"requirement_id":1}],"Requirements":[{"requirement_id":3}]', [{ requirement_id: 3 }]],
    ])('keeps the later of a list given twice: requirements %s', (members, requirements) => {
      const bound = codec.decode(`{"requirements":${members}}`, transactionModel);
      expect(bound.requirements).toEqual(requirements);
    });

    it.each([
      ['"x"', 'x'],
      ['1.5', '1.5'],
      // Past a double's exactness the lenient reader keeps the numeral as written.
      ['1.00000000000000001', '1.00000000000000001'],
    ])('quotes a value a list cannot hold as sent: requirements %s', (sent, quoted) => {
      const bound = codec.decode(`{"financetype":"Cash","requirements":${sent}}`, transactionModel);
      expect(() => toValidatedDto(TransactionDto, bound, 'transaction')).toThrow(
        expect.objectContaining({
          modelState: {
            'transaction.requirements': [`The value '${quoted}' is not valid for requirements.`],
          },
        }),
      );
    });

    it('matches member names ignoring case, keeps the later of a repeated member, drops unknown ones', () => {
      const bound = codec.decode(
        JSON.stringify({
          financetype: 'Cash',
          FinanceType: 'Bank',
          FINANCETYPE: 'Loan',
          loanterm: '20',
          totalpayments: 5,
          TotalPayments: 7.25,
          nickname: 'x',
          locked: null,
        }),
        transactionModel,
      );
      expect(plain(bound)).toEqual({
        financetype: 'Loan',
        loanterm: 20,
        TotalPayments: '7.25',
        locked: null,
      });
    });

    it('binds members of the records inside a list by the item model, null items included', () => {
      const bound = codec.decode(
        JSON.stringify({
          financetype: 'Cash',
          requirements: [
            { requirement_id: 11, Requirement_Id: 99, extra: true, submitted: true },
            null,
            { requirement_id: '12' },
          ],
        }),
        transactionModel,
      );
      expect(bound.requirements).toEqual([
        { requirement_id: 99, submitted: true },
        null,
        { requirement_id: 12 },
      ]);
    });

    it.each<[string, string | undefined, Record<string, unknown>]>([
      ['{"loanterm":08,"brokername":"x","clientname":"y"}', 'brokername', { clientname: 'y' }],
      ['{"loanterm":08,"branch":"North","brokername":"x"}', 'branch', { brokername: 'x' }],
      ['{"brokername":"x","loanterm":08}', undefined, { brokername: 'x' }],
    ])(
      'loses the member after one the reader failed on, as Json.NET did: %s',
      (text, lostName, others) => {
        const { loanterm, ...rest } = codec.decode(text, transactionModel);
        expect(loanterm).toBeInstanceOf(UnreadableValue);
        expect((loanterm as UnreadableValue).lostName).toBe(lostName);
        expect(rest).toEqual(others);
      },
    );

    it.each([
      ['""', null],
      ['[""]', [null]],
      ['["",{"requirement_id":5},null]', [null, { requirement_id: 5 }, null]],
    ])('reads an empty string as null for the list and for an item: %s', (list, expected) => {
      const bound = codec.decode(`{"requirements":${list}}`, transactionModel);
      expect(bound.requirements).toEqual(expected);
    });

    it.each([
      ['an array', '[{"financetype":"Cash"}]'],
      ['a string', '"Cash"'],
      ['a number', '42'],
      ['null', 'null'],
      ['not JSON at all', '{financetype: Cash}'],
      ['truncated JSON', '{"financetype":"Cash"'],
      ['an empty text', ''],
    ])('refuses %s with MalformedBodyError', (_, text) => {
      expect(() => codec.decode(text, transactionModel)).toThrow(MalformedBodyError);
    });

    it(`reads a document ${MAX_DOCUMENT_DEPTH} levels deep and refuses one level more`, () => {
      expect(codec.decode(nestedObjects(MAX_DOCUMENT_DEPTH), transactionModel)).toEqual({});
      expect(() => codec.decode(nestedObjects(MAX_DOCUMENT_DEPTH + 1), transactionModel)).toThrow(
        MalformedBodyError,
      );
    });

    it('refuses a very deep document cleanly, even inside an unknown member', () => {
      const deep = `{"financetype":"Cash","ignored":${'['.repeat(50000)}${']'.repeat(50000)}}`;
      expect(() => codec.decode(deep, transactionModel)).toThrow(MalformedBodyError);
    });

    it('does not let __proto__ or constructor keys reach Object.prototype or the bound record', () => {
      const bound = codec.decode(
        '{"financetype":"Cash","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},' +
          '"requirements":[{"requirement_id":1,"__proto__":{"polluted":true}}]}',
        transactionModel,
      );
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(Object.getPrototypeOf(bound)).toBe(Object.prototype);
      expect(Object.keys(bound)).toEqual(['financetype', 'requirements']);
      expect((bound as Record<string, unknown>).polluted).toBeUndefined();
      const item = (bound.requirements as Record<string, unknown>[])[0];
      expect(item).toEqual({ requirement_id: 1 });
      expect(item.polluted).toBeUndefined();
    });
  });

  describe('decodeList', () => {
    it('binds every record of a JSON array', () => {
      const records = codec.decodeList(
        '[{"requirement_type_id":1,"Description":"x"},{"requirement_type_id":2,"description":"y"}]',
        requirementModel,
      );
      expect(records).toEqual([
        { requirement_type_id: 1, description: 'x' },
        { requirement_type_id: 2, description: 'y' },
      ]);
    });

    it('refuses a document that is not an array, or a record that is not an object', () => {
      expect(() => codec.decodeList('{"requirement_type_id":1}', requirementModel)).toThrow(
        MalformedBodyError,
      );
      expect(() => codec.decodeList('[{"requirement_type_id":1}, 7]', requirementModel)).toThrow(
        /Record 2/,
      );
    });
  });

  describe('encode', () => {
    it('writes every member, in declaration order, null for anything missing', () => {
      const text = codec.encode(acquisitionModel, { submitted: true, requirement_id: 5 });
      expect(text).toBe(
        '{"requirement_id":5,"requirement_type_id":null,"required":null,' +
          '"requirement_description":null,"stamp":null,"submitted":true}',
      );
    });

    it('writes every member of the seed Transaction in the seed order, then the added row_version', () => {
      const written = JSON.parse(codec.encode(transactionModel, {})) as Record<string, unknown>;
      const keys = Object.keys(written);
      expect(keys).toHaveLength(50);
      expect(keys.slice(0, 3)).toEqual(['transaction_id', 'property_id', 'reservation_id']);
      expect(keys.indexOf('TotalPayments')).toBe(29);
      expect(keys.slice(-4)).toEqual(['preparedby_userid', 'date_added', 'stamp', 'row_version']);
      expect(Object.values(written).every((value) => value === null)).toBe(true);
    });

    it('writes only model members, never other properties of the record', () => {
      const written = JSON.parse(
        codec.encode(acquisitionModel, { requirement_id: 1, row_version: 3, secret: 'x' }),
      ) as Record<string, unknown>;
      expect(written).not.toHaveProperty('row_version');
      expect(written).not.toHaveProperty('secret');
    });

    it('keeps false, zero and empty text as they are', () => {
      const written = JSON.parse(
        codec.encode(acquisitionModel, { requirement_id: 0, required: '', submitted: false }),
      ) as Record<string, unknown>;
      expect(written).toMatchObject({ requirement_id: 0, required: '', submitted: false });
    });

    it('writes dates in the service zone with an explicit offset', () => {
      const record = { stamp: new Date('2026-03-01T10:11:12.500Z') };
      expect(JSON.parse(codec.encode(acquisitionModel, record))).toMatchObject({
        stamp: '2026-03-01T10:11:12.5+00:00',
      });
      setServiceTimeZone('Asia/Manila');
      expect(JSON.parse(codec.encode(acquisitionModel, record))).toMatchObject({
        stamp: '2026-03-01T18:11:12.5+08:00',
      });
    });

    it('writes lists as nested arrays of complete records, an empty list as []', () => {
      const text = codec.encode(requirementModel, [
        {
          description: 'Cash',
          requirement_type_id: 1,
          Acquisition: [{ requirement_id: 11, stamp: new Date('2026-01-15T01:00:00Z') }],
        },
        { requirement_type_id: 3, Acquisition: [] },
        { requirement_type_id: 4 },
      ]);
      const written = JSON.parse(text) as Record<string, unknown>[];
      expect(written).toEqual([
        {
          Acquisition: [
            {
              requirement_id: 11,
              requirement_type_id: null,
              required: null,
              requirement_description: null,
              stamp: '2026-01-15T01:00:00+00:00',
              submitted: null,
            },
          ],
          requirement_type_id: 1,
          description: 'Cash',
          stamp: null,
        },
        { Acquisition: [], requirement_type_id: 3, description: null, stamp: null },
        { Acquisition: null, requirement_type_id: 4, description: null, stamp: null },
      ]);
      expect(Object.keys(written[0])).toEqual([
        'Acquisition',
        'requirement_type_id',
        'description',
        'stamp',
      ]);
      expect(Object.keys((written[0].Acquisition as object[])[0])).toEqual(ACQUISITION_MEMBERS);
    });

    it('writes decimals as plain JSON numbers', () => {
      const text = codec.encode(transactionModel, {
        downpayment: 570000.1234,
        sellingprice: 99999999999.9999,
      });
      expect(text).toContain('"sellingprice":99999999999.9999');
      expect(text).toContain('"downpayment":570000.1234');
    });
  });

  describe('encodeError', () => {
    it('writes problem details with the legacy Message and ModelState', () => {
      const body = JSON.parse(
        codec.encodeError({
          status: 400,
          code: 'invalid_request',
          title: 'Invalid request',
          message: 'The request is invalid.',
          modelState: { 'transaction.financetype': ['The financetype field is required.'] },
        }),
      ) as Record<string, unknown>;
      expect(body).toEqual({
        type: 'urn:property-sales:problem:invalid_request',
        title: 'Invalid request',
        status: 400,
        detail: 'The request is invalid.',
        Message: 'The request is invalid.',
        ModelState: { 'transaction.financetype': ['The financetype field is required.'] },
      });
    });

    it('leaves ModelState out when there is none', () => {
      const body = JSON.parse(
        codec.encodeError({
          status: 500,
          code: 'internal_error',
          title: 'Internal error',
          message: 'An error has occurred.',
        }),
      ) as Record<string, unknown>;
      expect(body).toMatchObject({ status: 500, Message: 'An error has occurred.' });
      expect(body).not.toHaveProperty('ModelState');
    });
  });
});
