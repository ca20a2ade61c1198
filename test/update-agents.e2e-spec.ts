import { type Response } from 'supertest';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { describeOnEachDatabase } from './support/test-app';
import {
  accepted,
  type AcceptedCase,
  ACCEPTED_CASES,
  between,
  AGENT_FIELDS,
  type AgentValues,
  agentsOf,
  changesOf,
  BODY_FORMATS,
  type BodyFormat,
  expectNoContent,
  getAgentHistoryPath,
  getTransactionPath,
  type ModelState,
  notValid,
  refused,
  type RefusedCase,
  REFUSED_CASES,
  TransactionProbe,
  transactionBody,
  UPDATE_AGENTS,
  type WireBody,
  withMarker,
} from './support/update-agents-cases';

/** A different, valid value for every member of the fixture that is not an agent or the id. */
const EVERY_OTHER_MEMBER_CHANGED: WireBody = {
  property_id: 99999,
  reservation_id: 1,
  unit_id: 'Z9-L9',
  developer_id: 1,
  developer: 'Another Developer',
  subdivision: 'Another Subdivision',
  block: '9',
  lot: '9',
  client_id: 1,
  coborrower_id: null,
  requirement_type_id: 2,
  submitted_requirements: '',
  financetype: 'Bank Financing',
  interestrate: 1.5,
  loanterm: 5,
  sellingprice: 1,
  downpayment: 1,
  dp_payableinmonths: 0,
  reservation: 100000000,
  discount: 0,
  miscellaneous: -1,
  TotalPayments: 0.0001,
  clientname: 'Someone Else',
  coborrowername: null,
  requirementtypename: 'Bank Financing',
  requirements: [
    {
      requirement_id: 21,
      requirement_type_id: 2,
      required: 'Required',
      requirement_description: 'Bank letter of guarantee',
      stamp: '2026-03-01T00:00:00Z',
      submitted: true,
    },
  ],
  requirements_complete: true,
  reservation_paid: false,
  reservationdate: null,
  status: 'Cancelled',
  locked: true,
  preparedby_userid: 'someone.else',
  date_added: '2020-01-01T00:00:00Z',
  stamp: '2020-01-01T00:00:00Z',
};

/** JSON bodies whose values have types Json.NET converted: numeric strings, numbers for text. */
const JSON_ACCEPTED_CASES: readonly AcceptedCase[] = [
  accepted('"12" on brokerid, stored as 12', { brokerid: '12' }, { brokerid: 12 }),
  accepted(
    '"-2147483648" on brokerid, stored as a number',
    { brokerid: '-2147483648' },
    { brokerid: -2147483648 },
  ),
  accepted('"2850000.50" on sellingprice', { sellingprice: '2850000.50' }),
  accepted('"99999999999.9999" on discount', { discount: '99999999999.9999' }),
  accepted('"20" on loanterm', { loanterm: '20' }),
  accepted('"11" as a requirement_id', { requirements: [{ requirement_id: '11' }] }),
  accepted(
    'a number on an agent name, stored as its text',
    { brokername: 12345 },
    { brokername: '12345' },
  ),
  accepted('an empty agent name, stored empty', { managername: '' }),
  accepted('true and false literals', { reservation_paid: false, requirements_complete: true }),
  accepted('"0.9999" on sellingprice, rounded to 1', { sellingprice: '0.9999' }),
  accepted('"1,000.5" on sellingprice, with a thousands separator', { sellingprice: '1,000.5' }),
  accepted('"1.23456" on discount', { discount: '1.23456' }),
  accepted('"" for a nullable number, date and boolean', {
    loanterm: '',
    reservationdate: '',
    reservation_paid: '',
  }),
  accepted('1 and 0 on booleans', { reservation_paid: 1, requirements_complete: 0 }),
  accepted('Microsoft dates, also inside requirements', {
    reservationdate: '/Date(1245398693390)/',
    date_added: '/Date(1245398693390+0800)/',
    requirements: [{ requirement_id: 11, stamp: '/Date(1245398693390-0500)/' }],
  }),
  accepted("the dates .NET's DateTime.Parse reads", {
    reservationdate: '01/02/2024',
    date_added: '2024-01-02 10:00:00',
    stamp: 'Tue, 02 Jan 2024 10:00:00 GMT',
  }),
  accepted('5.0 and 1e2 on integers, read as the whole numbers they are', {
    loanterm: 5.0,
    dp_payableinmonths: 1e2,
  }),
];

const JSON_REFUSED_CASES: readonly RefusedCase[] = [
  refused(
    '"2147483648" on brokerid',
    { brokerid: '2147483648' },
    notValid('brokerid', '2147483648'),
  ),
  refused('"1.5" on brokerid', { brokerid: '1.5' }, notValid('brokerid', '1.5')),
  refused('"12a" on loanterm', { loanterm: '12a' }, notValid('loanterm', '12a')),
  refused(
    '"0.4999" on sellingprice',
    { sellingprice: '0.4999' },
    between('sellingprice', 1, 100000000),
  ),
  refused('"101" on loanterm', { loanterm: '101' }, between('loanterm', 1, 100)),
  refused(
    '"5e2" on discount: no exponent in a string',
    { discount: '5e2' },
    notValid('discount', '5e2'),
  ),
  refused('"1" on a boolean', { reservation_paid: '1' }, notValid('reservation_paid', '1')),
  refused(
    'a number on a date',
    { reservationdate: 1245398693390 },
    notValid('reservationdate', '1245398693390'),
  ),
];

/** The smallest body UpdateAgents accepts: the two required members, and the given ones. */
const minimalBody = (id: number, members: WireBody = {}): WireBody => ({
  transaction_id: id,
  financetype: 'Cash',
  ...members,
});

const changeOf = (record: WireBody, field: string) =>
  changesOf(record).find((change) => change.field === field);

/** How an error response to a body in `format` must read. */
function expectError(format: BodyFormat, response: Response, status: number): void {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toBe(format.errorContentType);
  expect(format.readError(response.text).message).toEqual(expect.any(String));
}

function expectInvalid(format: BodyFormat, response: Response, modelState: ModelState): void {
  expectError(format, response, 400);
  expect(format.readError(response.text)).toEqual({
    message: 'The request is invalid.',
    modelState,
  });
}

describeOnEachDatabase('POST Transaction/UpdateAgents', (context) => {
  const probe = new TransactionProbe(context);

  describe.each(BODY_FORMATS.map((format, index) => ({ ...format, firstId: (index + 1) * 1000 })))(
    'with a $name body',
    (format) => {
      const VALIDATED = format.firstId + 1;
      const EVERYTHING = format.firstId + 2;
      const PARTIAL = format.firstId + 3;
      const UNCHANGED = format.firstId + 4;
      const HISTORY = format.firstId + 5;
      const LOCKED = format.firstId + 6;
      const IF_MATCH = format.firstId + 7;
      const IF_MATCH_RACE = format.firstId + 8;
      const CONCURRENT = format.firstId + 9;
      const NAMES = format.firstId + 10;
      const NEVER_CHANGED = format.firstId + 11;
      const ECHOED = format.firstId + 12;
      const UNKNOWN = format.firstId + 99;

      const post = (body: WireBody, headers: Record<string, string> = {}) =>
        context.http
          .post(UPDATE_AGENTS)
          .set('Content-Type', format.contentType)
          .set(headers)
          .send(format.encode(body));

      beforeAll(async () => {
        const unlocked = [
          VALIDATED,
          EVERYTHING,
          PARTIAL,
          UNCHANGED,
          HISTORY,
          IF_MATCH,
          IF_MATCH_RACE,
          CONCURRENT,
          NAMES,
          NEVER_CHANGED,
          ECHOED,
        ];
        await context.running.seed({
          requirements: CATALOGUE,
          transactions: [
            ...unlocked.map((id) => transactionRecord(id)),
            transactionRecord(LOCKED, { locked: true, status: 'Closed' }),
          ],
        });
      });

      describe('validation, the same for every format', () => {
        it.each(ACCEPTED_CASES)('accepts $title', async ({ patch, stored }) => {
          const body = transactionBody(VALIDATED, withMarker(patch));
          await probe.expectApplied(VALIDATED, () => post(body), agentsOf(body, stored));
        });

        it.each(REFUSED_CASES)(
          'refuses $title with 400 and changes nothing',
          async ({ patch, modelState, unreadable }) => {
            const body = transactionBody(VALIDATED, withMarker(patch));
            const response = await probe.expectUnchanged(VALIDATED, () => post(body));
            expectInvalid(format, response, format.refusal(modelState, unreadable, body));
          },
        );

        it('validates the body before looking the transaction up', async () => {
          const response = await post(transactionBody(UNKNOWN, { loanterm: 0 }));
          expectInvalid(format, response, {
            'transaction.loanterm': ['The field loanterm must be between 1 and 100.'],
          });
        });
      });

      describe('the agent chain', () => {
        it('guards the test: the changed body differs from the fixture in every other member', () => {
          const others = Object.keys(transactionRecord(EVERYTHING)).filter(
            (field) => field !== 'transaction_id' && !AGENT_FIELDS.includes(field),
          );
          expect(Object.keys(EVERY_OTHER_MEMBER_CHANGED).sort()).toEqual(others.sort());
          for (const field of others) {
            expect({ field, value: EVERY_OTHER_MEMBER_CHANGED[field] }).not.toEqual({
              field,
              value: (transactionRecord(EVERYTHING) as WireBody)[field],
            });
          }
        });

        it('writes all fourteen agent members and ignores every other member, whatever it says', async () => {
          const agents: AgentValues = {
            brokerid: 111,
            directorid: 121,
            directorid_recruit: 122,
            managerid: 131,
            managerid_recruit: 132,
            salesagentid: 141,
            salesagentid_recruit: 142,
            brokername: 'New Broker',
            directorname: 'New Director',
            directorname_recruit: 'New Director Recruit',
            managername: 'New Manager',
            managername_recruit: 'New Manager Recruit',
            salesagentname: 'New Sales Agent',
            salesagentname_recruit: 'New Sales Agent Recruit',
          };
          const body = { transaction_id: EVERYTHING, ...EVERY_OTHER_MEMBER_CHANGED, ...agents };
          const after = await probe.expectApplied(EVERYTHING, () => post(body), agents);
          expect(changesOf(after.history.at(-1)!)).toHaveLength(14);
          // `locked: true` in that body was ignored: the transaction still takes changes.
          await probe.expectApplied(
            EVERYTHING,
            () => post(minimalBody(EVERYTHING, { brokerid: 112 })),
            { brokerid: 112 },
          );
        });

        it('writes only the agent members present; an absent member keeps its stored value', async () => {
          await probe.expectApplied(
            PARTIAL,
            () => post(minimalBody(PARTIAL, { brokerid: 500, managername: 'Only Manager' })),
            { brokerid: 500, managername: 'Only Manager' },
          );
          await probe.expectApplied(
            PARTIAL,
            () => post(minimalBody(PARTIAL, { salesagentname_recruit: 'Only Recruit' })),
            { salesagentname_recruit: 'Only Recruit' },
          );
        });

        it('writes a member sent as null as null, and a later value over that null', async () => {
          await probe.expectApplied(
            PARTIAL,
            () =>
              post(minimalBody(PARTIAL, { directorid_recruit: null, directorname_recruit: null })),
            { directorid_recruit: null, directorname_recruit: null },
          );
          const after = await probe.expectApplied(
            PARTIAL,
            () => post(minimalBody(PARTIAL, { directorid_recruit: 23 })),
            { directorid_recruit: 23 },
          );
          expect(changesOf(after.history.at(-1)!)).toEqual([
            { field: 'directorid_recruit', before: null, after: 23 },
          ]);
        });

        it('clears the whole chain when every agent member is sent as null', async () => {
          const nulls: AgentValues = Object.fromEntries(AGENT_FIELDS.map((field) => [field, null]));
          await probe.expectApplied(PARTIAL, () => post(transactionBody(PARTIAL, nulls)), nulls);
        });

        it('answers 204 with the current ETag and changes nothing (no stamp, no new ETag, no history) when nothing differs', async () => {
          for (const body of [
            transactionBody(UNCHANGED),
            minimalBody(UNCHANGED),
            minimalBody(UNCHANGED, { brokerid: 11, brokername: 'Ramon Dela Cruz' }),
          ]) {
            const response = await probe.expectUnchanged(UNCHANGED, () => post(body));
            expectNoContent(response);
          }
          const { history } = await probe.snapshot(UNCHANGED);
          expect(history).toEqual([]);
        });

        it('reads a Transaction echoed back with a row_version as without it, whatever that holds', async () => {
          const { transaction } = await probe.snapshot(ECHOED);
          const echoed = [
            transaction.row_version,
            1,
            2147483648,
            'not a number',
            '',
            null,
            { v: 2 },
          ];
          for (const [index, row_version] of echoed.entries()) {
            const brokerid = 600 + index;
            await probe.expectApplied(
              ECHOED,
              () => post(transactionBody(ECHOED, { brokerid, row_version })),
              { brokerid },
            );
          }
        });

        it(`binds member names ${format.caseSensitiveNames ? 'case-sensitively' : 'case-insensitively'}`, async () => {
          const body = minimalBody(NAMES, { Brokerid: 7001, BROKERNAME: 'Upper Case' });
          if (format.caseSensitiveNames) {
            await probe.expectApplied(NAMES, () => post({ ...body, managerid: 7002 }), {
              managerid: 7002,
            });
            const response = await probe.expectUnchanged(NAMES, () =>
              post({ transaction_id: NAMES, FinanceType: 'Cash', brokerid: 7003 }),
            );
            expectInvalid(format, response, {
              'transaction.financetype': ['The financetype field is required.'],
            });
          } else {
            await probe.expectApplied(NAMES, () => post(body), {
              brokerid: 7001,
              brokername: 'Upper Case',
            });
          }
        });
      });

      describe('history', () => {
        it('lists one record per changing call, oldest first, with each change as text', async () => {
          const calls = [
            minimalBody(HISTORY, { brokerid: 101, brokername: 'First Broker' }),
            minimalBody(HISTORY, { brokerid: 101, brokername: 'First Broker' }),
            minimalBody(HISTORY, { managerid: null, brokername: 'Second Broker' }),
            minimalBody(HISTORY, { salesagentid_recruit: 2147483647 }),
          ];
          for (const body of calls) expectNoContent(await post(body));

          const response = await context.http.get(getAgentHistoryPath(HISTORY)).expect(200);
          expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
          const history = response.body as WireBody[];
          expect(history).toHaveLength(3);
          expect(history.map((record) => record.transaction_id)).toEqual([
            HISTORY,
            HISTORY,
            HISTORY,
          ]);
          expect(history.map(changesOf)).toEqual([
            [
              { field: 'brokerid', before: 11, after: 101 },
              { field: 'brokername', before: 'Ramon Dela Cruz', after: 'First Broker' },
            ],
            [
              { field: 'brokername', before: 'First Broker', after: 'Second Broker' },
              { field: 'managerid', before: 31, after: null },
            ],
            [{ field: 'salesagentid_recruit', before: 42, after: 2147483647 }],
          ]);
          const { transaction } = await probe.snapshot(HISTORY);
          expect(transaction).toMatchObject({
            brokerid: 101,
            brokername: 'Second Broker',
            managerid: null,
            salesagentid_recruit: 2147483647,
          });
        });

        it('answers an empty list for a transaction never changed, and 404 for an unknown one', async () => {
          const response = await context.http.get(getAgentHistoryPath(NEVER_CHANGED)).expect(200);
          expect(response.body).toEqual([]);
          await context.http.get(getAgentHistoryPath(UNKNOWN)).expect(404);
        });
      });

      describe('refusals by state', () => {
        it('answers 409 for a locked transaction and changes nothing', async () => {
          for (const body of [
            transactionBody(LOCKED, { locked: false, brokerid: 9, brokername: 'Sneaky' }),
            minimalBody(LOCKED, { brokerid: null }),
          ]) {
            const response = await probe.expectUnchanged(LOCKED, () => post(body));
            expectError(format, response, 409);
          }
          const { transaction, history } = await probe.snapshot(LOCKED);
          expect(transaction).toMatchObject({ locked: true, brokerid: 11, status: 'Closed' });
          expect(history).toEqual([]);
        });

        it('answers 404 for an unknown transaction_id and creates nothing', async () => {
          const response = await post(transactionBody(UNKNOWN, { brokerid: 1 }));
          expectError(format, response, 404);
          await context.http.get(getTransactionPath(UNKNOWN)).expect(404);
        });
      });

      describe('If-Match', () => {
        it('applies with the current ETag, then refuses the old one with 412 and changes nothing', async () => {
          const first = await probe.snapshot(IF_MATCH);
          expect(first.etag).toMatch(/^"[^"]+"$/);
          const second = await probe.expectApplied(
            IF_MATCH,
            () => post(minimalBody(IF_MATCH, { brokerid: 201 }), { 'If-Match': first.etag }),
            { brokerid: 201 },
          );
          expect(second.etag).not.toBe(first.etag);

          const stale = await probe.expectUnchanged(IF_MATCH, () =>
            post(minimalBody(IF_MATCH, { brokerid: 202 }), { 'If-Match': first.etag }),
          );
          expectError(format, stale, 412);

          await probe.expectApplied(
            IF_MATCH,
            () => post(minimalBody(IF_MATCH, { brokerid: 203 }), { 'If-Match': second.etag }),
            { brokerid: 203 },
          );
        });

        it('applies with If-Match: * and with a list that holds the current ETag', async () => {
          await probe.expectApplied(
            IF_MATCH,
            () => post(minimalBody(IF_MATCH, { brokerid: 204 }), { 'If-Match': '*' }),
            { brokerid: 204 },
          );
          const { etag } = await probe.snapshot(IF_MATCH);
          await probe.expectApplied(
            IF_MATCH,
            () =>
              post(minimalBody(IF_MATCH, { brokerid: 205 }), {
                'If-Match': `"no-such-tag", ${etag}`,
              }),
            { brokerid: 205 },
          );
        });

        it("refuses another transaction's ETag with 412", async () => {
          const { etag } = await probe.snapshot(NEVER_CHANGED);
          const response = await probe.expectUnchanged(IF_MATCH, () =>
            post(minimalBody(IF_MATCH, { brokerid: 206 }), { 'If-Match': etag }),
          );
          expectError(format, response, 412);
        });

        it('applies without If-Match', async () => {
          await probe.expectApplied(
            IF_MATCH,
            () => post(minimalBody(IF_MATCH, { brokerid: 207 })),
            { brokerid: 207 },
          );
        });

        it('lets exactly one of several concurrent calls holding the same ETag win', async () => {
          const { etag } = await probe.snapshot(IF_MATCH_RACE);
          const responses = await Promise.all(
            Array.from({ length: 10 }, (_, index) =>
              post(minimalBody(IF_MATCH_RACE, { brokerid: 300 + index }), { 'If-Match': etag }),
            ),
          );
          const statuses = responses.map((response) => response.status).sort();
          expect(statuses).toEqual([204, ...Array<number>(9).fill(412)]);
          const winner = responses.findIndex((response) => response.status === 204);
          const { transaction, history } = await probe.snapshot(IF_MATCH_RACE);
          expect(transaction.brokerid).toBe(300 + winner);
          expect(history.map(changesOf)).toEqual([
            [{ field: 'brokerid', before: 11, after: 300 + winner }],
          ]);
        });
      });

      describe('concurrency', () => {
        it('loses no update among 20 concurrent calls, and the history chains in commit order', async () => {
          const calls = Array.from({ length: 20 }, (_, index) =>
            minimalBody(CONCURRENT, { brokerid: 1000 + index, brokername: `Broker ${index}` }),
          );
          const responses = await Promise.all(calls.map((body) => post(body)));
          expect(responses.map((response) => response.status)).toEqual(Array<number>(20).fill(204));

          const { transaction, history } = await probe.snapshot(CONCURRENT);
          expect(history).toHaveLength(20);
          let brokerid: string | number | null = 11;
          let brokername: string | number | null = 'Ramon Dela Cruz';
          for (const record of history) {
            const id = changeOf(record, 'brokerid');
            const name = changeOf(record, 'brokername');
            expect(id?.before).toBe(brokerid);
            expect(name?.before).toBe(brokername);
            // Each record is one whole call: its id and name belong together.
            expect(name?.after).toBe(`Broker ${Number(id?.after) - 1000}`);
            brokerid = id!.after;
            brokername = name!.after;
          }
          const applied = history.map((record) => changeOf(record, 'brokerid')!.after).sort();
          expect(applied).toEqual(calls.map((body) => body.brokerid).sort());
          expect(transaction.brokerid).toBe(brokerid);
          expect(transaction.brokername).toBe(brokername);
          // Each record holds the version its call left, one apart in commit order, the last the
          // transaction's; each 204 named its own call's version.
          const first = history[0].row_version as number;
          const versions = history.map((record) => record.row_version);
          expect(versions).toEqual(Array.from({ length: 20 }, (_, index) => first + index));
          expect(transaction.row_version).toBe(first + 19);
          const answered = responses
            .map((response) => Number(/^"\d+\.(\d+)"$/.exec(String(response.headers.etag))?.[1]))
            .sort((a, b) => a - b);
          expect(answered).toEqual(versions);
        });
      });

      describe('persistence', () => {
        it('keeps the changed values, the ETag and the history across a restart', async () => {
          const before = await Promise.all(
            [HISTORY, CONCURRENT, PARTIAL].map((id) => probe.snapshot(id)),
          );
          await context.restart();
          const after = await Promise.all(
            [HISTORY, CONCURRENT, PARTIAL].map((id) => probe.snapshot(id)),
          );
          expect(after).toEqual(before);
          await probe.expectApplied(
            HISTORY,
            () => post(minimalBody(HISTORY, { brokerid: 102 }), { 'If-Match': before[0].etag }),
            { brokerid: 102 },
          );
        });
      });
    },
  );

  describe('JSON only', () => {
    const CASES = 9001;
    const RAW = 9002;
    const AMOUNTS = 9003;
    const HEADERS = 9004;
    const TARGET = 9005;
    /** Booleans bind as 1 in SQL: a transaction_id of `true` must not reach transaction 1. */
    const FIRST = 1;
    const JSON_FORMAT = BODY_FORMATS[0];

    /** `The value '…' is not valid for field.`, whatever placeholder stands for a structured value. */
    const shape = (field: string) =>
      new RegExp(`^The value '.{0,110}' is not valid for ${field}\\.$`);

    const postJson = (text: string, contentType = 'application/json') =>
      context.http.post(UPDATE_AGENTS).set('Content-Type', contentType).send(text);

    const EXACT_AMOUNTS = {
      interestrate: 0.0001,
      sellingprice: 99999999.9999,
      downpayment: 1.0001,
      reservation: 12345.6789,
      discount: 99999999999.9999,
      miscellaneous: -99999999999.9999,
      TotalPayments: 595000.1234,
    };

    beforeAll(async () => {
      await context.running.seed({
        requirements: CATALOGUE,
        transactions: [
          transactionRecord(CASES),
          transactionRecord(RAW),
          transactionRecord(AMOUNTS, EXACT_AMOUNTS),
          transactionRecord(HEADERS),
          transactionRecord(TARGET),
          transactionRecord(FIRST),
        ],
      });
    });

    describe('numbers, strings and booleans as Json.NET read them', () => {
      it.each(JSON_ACCEPTED_CASES)('accepts $title', async ({ patch, stored }) => {
        const body = transactionBody(CASES, withMarker(patch));
        await probe.expectApplied(
          CASES,
          () => postJson(JSON.stringify(body)),
          agentsOf(body, stored),
        );
      });

      it.each(JSON_REFUSED_CASES)('refuses $title', async ({ patch, modelState }) => {
        const body = transactionBody(CASES, withMarker(patch));
        const response = await probe.expectUnchanged(CASES, () => postJson(JSON.stringify(body)));
        expectInvalid(JSON_FORMAT, response, modelState);
      });
    });

    describe('nesting', () => {
      it.each([
        {
          title: 'an array on brokerid',
          patch: { brokerid: [] },
          key: 'transaction.brokerid',
          field: 'brokerid',
        },
        {
          title: 'an object on brokerid',
          patch: { brokerid: { value: 1 } },
          key: 'transaction.brokerid',
          field: 'brokerid',
        },
        {
          title: 'an object on financetype',
          patch: { financetype: {} },
          key: 'transaction.financetype',
          field: 'financetype',
        },
        {
          title: 'an array on brokername',
          patch: { brokername: ['a'] },
          key: 'transaction.brokername',
          field: 'brokername',
        },
        // Json.NET read the object's first member as the list's first item, and failed there.
        {
          title: 'an object for requirements',
          patch: { requirements: { requirement_id: 11 } },
          key: 'transaction.requirements.requirement_id',
          field: 'requirements',
        },
        {
          title: 'a string for requirements',
          patch: { requirements: 'x' },
          key: 'transaction.requirements',
          field: 'requirements',
        },
      ])(
        'refuses $title with one legacy message on its key',
        async ({ patch, key, field }: { patch: WireBody; key: string; field: string }) => {
          const body = transactionBody(CASES, withMarker(patch));
          const response = await probe.expectUnchanged(CASES, () => postJson(JSON.stringify(body)));
          expectError(JSON_FORMAT, response, 400);
          const { modelState } = JSON_FORMAT.readError(response.text);
          expect(modelState).toEqual({ [key]: [expect.stringMatching(shape(field))] });
          expect(response.text).not.toContain('[object Object]');
        },
      );

      it('refuses a number where a requirements item belongs, on the list or the item', async () => {
        const body = transactionBody(CASES, withMarker({ requirements: [5] }));
        const response = await probe.expectUnchanged(CASES, () => postJson(JSON.stringify(body)));
        expectError(JSON_FORMAT, response, 400);
        const modelState = JSON_FORMAT.readError(response.text).modelState as ModelState;
        expect(Object.keys(modelState)).toHaveLength(1);
        expect(Object.keys(modelState)[0]).toMatch(/^transaction\.requirements(\[0\])?$/);
      });

      it('ignores an unknown member holding nested objects and arrays', async () => {
        const body = transactionBody(
          CASES,
          withMarker({ extra: { a: [1, { b: { c: [true, null, 'x'] } }], brokerid: 'not me' } }),
        );
        await probe.expectApplied(CASES, () => postJson(JSON.stringify(body)), agentsOf(body));
      });
    });

    describe('transaction_id of another JSON type', () => {
      it.each([
        { title: 'true', value: true, target: FIRST },
        { title: 'an array holding an existing id', value: [TARGET], target: TARGET },
        { title: 'an empty array', value: [], target: TARGET },
        { title: 'an object', value: { transaction_id: TARGET }, target: TARGET },
      ])(
        'refuses $title with 400, and changes no transaction',
        async ({ value, target }: { value: unknown; target: number }) => {
          const body = minimalBody(0, { transaction_id: value, brokerid: 600 });
          const response = await probe.expectUnchanged(target, () =>
            postJson(JSON.stringify(body)),
          );
          expectError(JSON_FORMAT, response, 400);
          expect(JSON_FORMAT.readError(response.text).modelState).toEqual({
            'transaction.transaction_id': [expect.stringMatching(shape('transaction_id'))],
          });
        },
      );
    });

    describe('documents that are not one JSON object', () => {
      const deep = `{"transaction_id":${RAW},"financetype":"Cash","brokerid":5,"x":${'['.repeat(10000)}${']'.repeat(10000)}}`;
      it.each([
        { title: 'an empty body', text: '' },
        { title: 'an unterminated object', text: `{"transaction_id":${RAW},"brokerid":5` },
        {
          title: 'an array',
          text: `[{"transaction_id":${RAW},"financetype":"Cash","brokerid":5}]`,
        },
        { title: 'null', text: 'null' },
        { title: 'a number', text: '42' },
        { title: 'a string', text: '"transaction"' },
        { title: 'a 10000-level nesting', text: deep },
      ])('refuses $title with 400 on the transaction key, leaking nothing', async ({ text }) => {
        const response = await probe.expectUnchanged(RAW, () => postJson(text));
        expectError(JSON_FORMAT, response, 400);
        const { message, modelState } = JSON_FORMAT.readError(response.text);
        expect(message).toBe('The request is invalid.');
        expect(modelState).toEqual({ transaction: [expect.stringMatching(/\S/)] });
        expect(response.text).not.toMatch(/SyntaxError|\n\s+at |JSON\.parse|Maximum call stack/);
      });

      it.each([
        {
          title: 'comments',
          text: `{/* a */"transaction_id":${RAW}, // b\n"financetype":"Cash",`,
          brokerid: 501,
        },
        {
          title: 'a trailing comma',
          text: `{"transaction_id":${RAW},"financetype":"Cash",`,
          brokerid: 502,
        },
        {
          title: 'single quotes',
          text: `{'transaction_id':${RAW},'financetype':'Cash',`,
          brokerid: 503,
        },
        {
          title: 'unquoted names',
          text: `{transaction_id:${RAW},financetype:'Cash',`,
          brokerid: 504,
        },
      ])("reads Json.NET's lenient syntax: $title", async ({ text, brokerid }) => {
        await probe.expectApplied(RAW, () => postJson(`${text}"brokerid":${brokerid},}`), {
          brokerid,
        });
      });

      it.each([
        { title: '0x1A', text: '0x1A', value: 26 },
        { title: '012, octal', text: '012', value: 10 },
        { title: '1e2', text: '1e2', value: 100 },
      ])("reads the integer literal $title as Json.NET's reader did", async ({ text, value }) => {
        await probe.expectApplied(
          RAW,
          () => postJson(`{"transaction_id":${RAW},"financetype":"Cash","brokerid":${text}}`),
          { brokerid: value },
        );
        await probe.expectApplied(
          RAW,
          () => postJson(`{"transaction_id":${RAW},"financetype":"Cash","brokerid":1}`),
          { brokerid: 1 },
        );
      });

      it('ignores what follows the object, as Web API read one value', async () => {
        await probe.expectApplied(
          RAW,
          () => postJson(`{"transaction_id":${RAW},"financetype":"Cash","brokerid":404} x`),
          { brokerid: 404 },
        );
      });

      it('keeps the exact value of a long numeral for the range: 0.50000000000000001 rounds to 1', async () => {
        await probe.expectApplied(
          RAW,
          () =>
            postJson(
              `{"transaction_id":${RAW},"financetype":"Cash","brokerid":405,"sellingprice":0.50000000000000001}`,
            ),
          { brokerid: 405 },
        );
        const response = await probe.expectUnchanged(RAW, () =>
          postJson(
            `{"transaction_id":${RAW},"financetype":"Cash","brokerid":406,"sellingprice":0.5000000000000000}`,
          ),
        );
        expectInvalid(JSON_FORMAT, response, between('sellingprice', 1, 100000000));
      });

      it('takes the last of repeated members, as Json.NET', async () => {
        await probe.expectApplied(
          RAW,
          () =>
            postJson(
              `{"transaction_id":${RAW},"brokerid":400,"financetype":"Cash","brokerid":401}`,
            ),
          { brokerid: 401 },
        );
      });

      it('accepts a body that starts with a UTF-8 byte order mark', async () => {
        await probe.expectApplied(
          RAW,
          () => postJson(`\uFEFF{"transaction_id":${RAW},"financetype":"Cash","brokerid":402}`),
          { brokerid: 402 },
        );
      });

      it('refuses a number too large for any decimal on the member and, as Json.NET, the record', async () => {
        const text = `{"transaction_id":${RAW},"financetype":"Cash","brokerid":403,"discount":1e400}`;
        const response = await probe.expectUnchanged(RAW, () => postJson(text));
        expectError(JSON_FORMAT, response, 400);
        expect(
          Object.keys(JSON_FORMAT.readError(response.text).modelState as ModelState).sort(),
        ).toEqual(['transaction', 'transaction.discount']);
      });

      it('answers a 400 as problem details that also carry the legacy members, keyed exactly', async () => {
        const body = transactionBody(CASES, withMarker({ loanterm: 0 }));
        const response = await postJson(JSON.stringify(body));
        expect(response.status).toBe(400);
        // RFC 9457 lets a problem carry extension members beyond these.
        expect(response.body).toMatchObject({
          type: expect.any(String),
          title: expect.any(String),
          status: 400,
          detail: expect.any(String),
          Message: 'The request is invalid.',
          ModelState: { 'transaction.loanterm': ['The field loanterm must be between 1 and 100.'] },
        });
        expect(Object.keys(response.body.ModelState as ModelState)).toEqual([
          'transaction.loanterm',
        ]);
      });
    });

    describe('amounts', () => {
      it('reads seeded four-digit amounts back exactly, and UpdateAgents leaves them alone', async () => {
        const read = await context.http.get(getTransactionPath(AMOUNTS)).expect(200);
        expect(read.body).toMatchObject(EXACT_AMOUNTS);
        for (const [field, value] of Object.entries(EXACT_AMOUNTS)) {
          expect(read.text).toContain(`"${field}":${value}`);
        }
        const body = transactionBody(AMOUNTS, {
          brokerid: 12,
          interestrate: 9.9999,
          sellingprice: 1.0001,
          downpayment: 99999999.9999,
          reservation: 1,
          discount: -99999999999.9999,
          miscellaneous: 99999999999.9999,
          TotalPayments: 0.0001,
        });
        await probe.expectApplied(AMOUNTS, () => postJson(JSON.stringify(body)), agentsOf(body));
        const after = await context.http.get(getTransactionPath(AMOUNTS)).expect(200);
        expect(after.body).toMatchObject(EXACT_AMOUNTS);
      });
    });

    describe('media types and routes', () => {
      it.each([
        'application/json; charset=utf-8',
        'text/json; charset=utf-8',
        'application/json;charset=UTF-8',
        'Application/JSON',
      ])('accepts Content-Type %s, reading UTF-8 names exactly', async (contentType) => {
        const name = `Niño Ñuñez ${contentType}`;
        await probe.expectApplied(
          HEADERS,
          () => postJson(JSON.stringify(minimalBody(HEADERS, { brokername: name })), contentType),
          { brokername: name },
        );
      });

      it('refuses a JSON body labelled text/plain with 415 and changes nothing', async () => {
        const text = JSON.stringify(minimalBody(HEADERS, { brokerid: 77 }));
        const response = await probe.expectUnchanged(HEADERS, () => postJson(text, 'text/plain'));
        expect(response.status).toBe(415);
        expect(response.body).toMatchObject({
          Message:
            "The request entity's media type 'text/plain' is not supported for this resource.",
        });
      });

      it('refuses a body without a Content-Type with 415 and changes nothing', async () => {
        const before = await probe.snapshot(HEADERS);
        const response = await fetch(`${context.running.baseUrl}${UPDATE_AGENTS}`, {
          method: 'POST',
          body: new TextEncoder().encode(JSON.stringify(minimalBody(HEADERS, { brokerid: 78 }))),
        });
        expect(response.status).toBe(415);
        await response.arrayBuffer();
        expect(await probe.snapshot(HEADERS)).toEqual(before);
      });

      it('matches the path case-insensitively', async () => {
        await probe.expectApplied(
          HEADERS,
          () =>
            context.http
              .post('/api/transaction/updateagents')
              .set('Content-Type', 'application/json')
              .send(JSON.stringify(minimalBody(HEADERS, { brokerid: 79 }))),
          { brokerid: 79 },
        );
      });

      it('answers GET with 405 and Allow: POST', async () => {
        const response = await context.http.get(UPDATE_AGENTS);
        expect(response.status).toBe(405);
        expect(response.headers.allow).toBe('POST');
      });
    });
  });
});
