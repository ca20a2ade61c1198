import { CATALOGUE, transactionRecord } from './support/fixtures';
import {
  expectProblem,
  SEED_ACQUISITION_MEMBERS,
  SEED_TRANSACTION_MEMBERS,
} from './support/http-assertions';
import { describeOnEachDatabase, type SuiteContext } from './support/test-app';

type Json = Record<string, unknown>;

/** The seed's members in its order, then the one this service adds. */
const TRANSACTION_MEMBERS = [...SEED_TRANSACTION_MEMBERS, 'row_version'];

const getTransaction = (context: SuiteContext, id: number | string) =>
  context.http.get(`/api/Transaction/GetTransaction/${id}`);

const updateAgents = (context: SuiteContext, body: object) =>
  context.http
    .post('/api/Transaction/UpdateAgents')
    .set('Content-Type', 'application/json')
    .send(JSON.stringify(body));

/** Transaction 2: only what the import requires, every other member absent. */
const MINIMAL = { transaction_id: 2, financetype: 'Bank Financing' };

/** Transaction 3: amounts at the edges of DECIMAL(15,4), and explicit nulls. */
const AMOUNTS = transactionRecord(3, {
  interestrate: 12.3456,
  sellingprice: 100000000,
  downpayment: 570000.1234,
  reservation: 1,
  discount: -12345.6789,
  miscellaneous: 0.0001,
  TotalPayments: 99999999999.9999,
  coborrower_id: null,
  coborrowername: null,
  reservationdate: null,
  requirements: [],
});

/**
 * Transaction 4: a checklist listed out of order, across types, whose items carry text that differs
 * from the catalogue (the catalogue is what a reader sees) and a date without an offset.
 */
const CHECKLIST = transactionRecord(4, {
  reservationdate: '2026-01-11T14:00:00',
  requirements: [
    {
      requirement_id: 21,
      requirement_type_id: 9,
      required: 'Stale',
      requirement_description: 'Stale text',
      stamp: '2026-03-05T08:00:00Z',
      submitted: false,
    },
    { requirement_id: 12, submitted: true, stamp: '2026-03-04T08:00:00.5+08:00' },
    { requirement_id: 11, submitted: null, stamp: null },
  ],
});

describeOnEachDatabase('GET Transaction/GetTransaction and GetAgentHistory', (context) => {
  beforeAll(async () => {
    await context.running.seed({
      requirements: CATALOGUE,
      transactions: [transactionRecord(1), MINIMAL, AMOUNTS, CHECKLIST],
    });
  });

  describe('GetTransaction', () => {
    it('answers 200 with every member of seed 2.1, in the seed order, then row_version', async () => {
      const response = await getTransaction(context, 1).expect(200);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      const body = response.body as Json;
      expect(Object.keys(body)).toEqual(TRANSACTION_MEMBERS);
      for (const item of body.requirements as Json[])
        expect(Object.keys(item)).toEqual(SEED_ACQUISITION_MEMBERS);
    });

    it('reads back what was stored, dates in UTC written +00:00', async () => {
      const expected: Json = {
        ...transactionRecord(1),
        reservationdate: '2026-01-11T06:00:00+00:00',
        date_added: '2026-01-11T06:05:00+00:00',
        stamp: '2026-02-20T08:45:00+00:00',
        // Imported once: its first version.
        row_version: 1,
        requirements: [
          {
            requirement_id: 11,
            requirement_type_id: 1,
            required: 'Required',
            requirement_description: 'Valid ID',
            stamp: '2026-02-02T02:30:00+00:00',
            submitted: true,
          },
          {
            requirement_id: 12,
            requirement_type_id: 1,
            required: 'Optional',
            requirement_description: 'Proof of billing',
            stamp: null,
            submitted: false,
          },
        ],
      };
      const response = await getTransaction(context, 1).expect(200);
      expect(response.body).toEqual(expected);
    });

    it('writes null for every missing value, and an empty checklist as []', async () => {
      const response = await getTransaction(context, 2).expect(200);
      const body = response.body as Json;
      expect(Object.keys(body)).toEqual(TRANSACTION_MEMBERS);
      const expected = Object.fromEntries(
        SEED_TRANSACTION_MEMBERS.map((name) => [name, null] as [string, unknown]),
      );
      expect(body).toEqual({ ...expected, ...MINIMAL, requirements: [], row_version: 1 });
      expect(response.text).toContain('"coborrowername":null');
    });

    it('reads amounts back exactly, as JSON numbers', async () => {
      const response = await getTransaction(context, 3).expect(200);
      const body = response.body as Json;
      expect(body).toMatchObject({
        interestrate: 12.3456,
        sellingprice: 100000000,
        downpayment: 570000.1234,
        reservation: 1,
        discount: -12345.6789,
        miscellaneous: 0.0001,
        TotalPayments: 99999999999.9999,
        coborrower_id: null,
        coborrowername: null,
        reservationdate: null,
        requirements: [],
      });
      expect(response.text).toContain('"TotalPayments":99999999999.9999');
      expect(response.text).toContain('"downpayment":570000.1234');
      expect(response.text).toContain('"discount":-12345.6789');
    });

    it('joins the checklist with the catalogue, ordered by requirement_id', async () => {
      const body = (await getTransaction(context, 4).expect(200)).body as Json;
      expect(body.requirements).toEqual([
        {
          requirement_id: 11,
          requirement_type_id: 1,
          required: 'Required',
          requirement_description: 'Valid ID',
          stamp: null,
          submitted: null,
        },
        {
          requirement_id: 12,
          requirement_type_id: 1,
          required: 'Optional',
          requirement_description: 'Proof of billing',
          stamp: '2026-03-04T00:00:00.5+00:00',
          submitted: true,
        },
        {
          requirement_id: 21,
          requirement_type_id: 2,
          required: 'Required',
          requirement_description: 'Bank letter of guarantee',
          stamp: '2026-03-05T08:00:00+00:00',
          submitted: false,
        },
      ]);
      // A date sent without an offset was read in the service zone, UTC here.
      expect(body.reservationdate).toBe('2026-01-11T14:00:00+00:00');
    });

    it('sends a strong ETag and answers If-None-Match with 304', async () => {
      const first = await getTransaction(context, 1).expect(200);
      const etag = first.headers.etag;
      expect(etag).toMatch(/^"[^"]+"$/);
      const again = await getTransaction(context, 1).expect(200);
      expect(again.headers.etag).toBe(etag);
      const notModified = await getTransaction(context, 1).set('If-None-Match', etag).expect(304);
      expect(notModified.text).toBe('');
      // no-cache addresses caches; the service still validates (Node.js fetch sends both headers).
      await getTransaction(context, 1)
        .set('If-None-Match', etag)
        .set('Cache-Control', 'no-cache')
        .set('Pragma', 'no-cache')
        .expect(304);
      await getTransaction(context, 1).set('If-None-Match', '"something-else"').expect(200);
      // Another transaction has another tag.
      const other = await getTransaction(context, 2).expect(200);
      expect(other.headers.etag).not.toBe(etag);
    });

    it('answers 404 in problem details for an unknown id', async () => {
      for (const id of [999, 0, -1, 2147483647]) {
        const body = expectProblem(await getTransaction(context, id), 404);
        expect(body.type).toMatch(/transaction_not_found$/);
        expect(body.Message).toContain(String(id));
      }
    });

    it('answers 400 for an id that is not a 32-bit integer', async () => {
      for (const id of ['abc', '2147483648', '-2147483649', '1.5', '1e3', '0x10']) {
        const body = expectProblem(await getTransaction(context, id), 400);
        expect(JSON.stringify(body.ModelState)).toContain(id);
      }
    });
  });

  describe('GetAgentHistory', () => {
    const history = async (id: number) =>
      (await context.http.get(`/api/Transaction/GetAgentHistory/${id}`).expect(200)).body as Json[];

    it('answers [] for a transaction whose agents never changed', async () => {
      const response = await context.http.get('/api/Transaction/GetAgentHistory/2').expect(200);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.text).toBe('[]');
    });

    it('answers 404 for an unknown transaction, and 400 for a bad id', async () => {
      const body = expectProblem(
        await context.http.get('/api/Transaction/GetAgentHistory/999'),
        404,
      );
      expect(body.type).toMatch(/transaction_not_found$/);
      expectProblem(await context.http.get('/api/Transaction/GetAgentHistory/abc'), 400);
    });

    it('lists each change, oldest first, after UpdateAgents calls', async () => {
      const before = await getTransaction(context, 1).expect(200);
      await updateAgents(context, transactionRecord(1, { brokerid: 12 })).expect(204);
      await updateAgents(context, {
        transaction_id: 1,
        financetype: 'Cash',
        managerid: 35,
        managername: 'Lea Bautista',
      }).expect(204);

      const entries = await history(1);
      expect(entries).toHaveLength(2);
      for (const entry of entries) {
        expect(Object.keys(entry)).toEqual([
          'assignment_id',
          'transaction_id',
          'stamp',
          'changed_by',
          'changes',
          'row_version',
        ]);
        expect(entry.transaction_id).toBe(1);
        expect(entry.stamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?\+00:00$/);
        expect(Array.isArray(entry.changes)).toBe(true);
      }
      expect(entries[0].assignment_id as number).toBeLessThan(entries[1].assignment_id as number);
      expect(Date.parse(entries[0].stamp as string)).toBeLessThanOrEqual(
        Date.parse(entries[1].stamp as string),
      );
      const describeChanges = (entry: Json) =>
        (entry.changes as Json[])
          .map(
            (change) => `${String(change.field)}:${String(change.before)}>${String(change.after)}`,
          )
          .sort();
      expect(describeChanges(entries[0])).toEqual(['brokerid:11>12']);
      expect(describeChanges(entries[1])).toEqual([
        'managerid:31>35',
        'managername:Paolo Reyes>Lea Bautista',
      ]);

      // The transaction's stamp is the time of the last change; its version counts both changes,
      // and its ETag names that version.
      const after = await getTransaction(context, 1).expect(200);
      expect(after.body).toMatchObject({
        brokerid: 12,
        managerid: 35,
        managername: 'Lea Bautista',
        row_version: ((before.body as Json).row_version as number) + 2,
      });
      expect(after.body.stamp).toBe(entries[1].stamp);
      expect(before.headers.etag).toBe(`"1.${String((before.body as Json).row_version)}"`);
      expect(after.headers.etag).toBe(`"1.${String((after.body as Json).row_version)}"`);
      // Each entry records the version its change left: the last is the transaction's.
      expect(entries.map((entry) => entry.row_version)).toEqual([
        ((after.body as Json).row_version as number) - 1,
        (after.body as Json).row_version,
      ]);
      await getTransaction(context, 1).set('If-None-Match', before.headers.etag).expect(200);
    });

    it('keeps other transactions out of a history', async () => {
      expect(await history(3)).toEqual([]);
      await updateAgents(context, transactionRecord(3, { salesagentid: 77 })).expect(204);
      const entries = await history(3);
      expect(entries).toHaveLength(1);
      expect(entries[0].transaction_id).toBe(3);
      expect(await history(1)).toHaveLength(2);
    });
  });
});

describeOnEachDatabase(
  'GET Transaction/GetTransaction with APP_TIMEZONE=Asia/Manila',
  (context) => {
    beforeAll(async () => {
      await context.running.seed({ requirements: CATALOGUE, transactions: [CHECKLIST] });
    });

    it('writes every date in the service zone, +08:00', async () => {
      const body = (await getTransaction(context, 4).expect(200)).body as Json;
      expect(body).toMatchObject({
        date_added: '2026-01-11T14:05:00+08:00',
        stamp: '2026-02-20T16:45:00+08:00',
      });
      expect((body.requirements as Json[]).map((item) => item.stamp)).toEqual([
        null,
        '2026-03-04T08:00:00.5+08:00',
        '2026-03-05T16:00:00+08:00',
      ]);
    });

    it('reads a date without an offset in the service zone', async () => {
      const body = (await getTransaction(context, 4).expect(200)).body as Json;
      expect(body.reservationdate).toBe('2026-01-11T14:00:00+08:00');
    });

    it('writes history stamps in the service zone too', async () => {
      await updateAgents(context, { transaction_id: 4, financetype: 'Cash', brokerid: 15 }).expect(
        204,
      );
      const response = await context.http.get('/api/Transaction/GetAgentHistory/4').expect(200);
      const [entry] = response.body as Json[];
      expect(entry.stamp).toMatch(/\+08:00$/);
      const transaction = (await getTransaction(context, 4).expect(200)).body as Json;
      expect(transaction.stamp).toBe(entry.stamp);
    });
  },
  { APP_TIMEZONE: 'Asia/Manila' },
);
