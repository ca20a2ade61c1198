import { CATALOGUE, transactionRecord } from './support/fixtures';
import { expectProblem, type HttpResult, rawRequest } from './support/http-assertions';
import { describeOnEachDatabase, type SuiteContext } from './support/test-app';
import { AGENT_ID_FIELDS } from './support/update-agents-cases';
import { child, childNames, inspectXml } from './support/xml-inspection';

type Json = Record<string, unknown>;

interface Page {
  readonly transactions: Json[];
  readonly next_cursor: string | null;
}

const LIST = '/api/Transaction/ListTransactions';
const AGENT = 777;
const STATUSES = ['Approved', 'Pending', 'Cancelled'];
const FIRST_ID = 1001;
const COUNT = 60;

/**
 * Sixty transactions: statuses in turn, finance types by parity, every fifth naming AGENT in one column
 * of its chain (in turn through the seven), one naming it in two; stamps shared by four transactions
 * each, so the (stamp, transaction_id) order has ties to break; ids given out of stamp order.
 */
const FIXTURE = Array.from({ length: COUNT }, (_, index) => {
  const id = FIRST_ID + index;
  const agentColumn =
    index % 5 === 0 ? AGENT_ID_FIELDS[(index / 5) % AGENT_ID_FIELDS.length] : null;
  const minute = (COUNT - 1 - index) >> 2;
  return transactionRecord(id, {
    status: STATUSES[index % STATUSES.length],
    financetype: index % 2 === 0 ? 'Cash' : 'Bank Financing',
    ...(agentColumn && { [agentColumn]: AGENT }),
    ...(index === 7 && { managerid: AGENT, salesagentid_recruit: AGENT }),
    stamp: new Date(Date.UTC(2026, 0, 1, 8, minute, 0)).toISOString(),
    ...(index % 3 === 1 && { requirements: [] }),
  });
});

const idsOf = (records: readonly Json[]) => records.map((record) => record.transaction_id);
const stampOf = (record: Json) => new Date(record.stamp as string).getTime();
/** The contract's two orders: by id, or by stamp then id. */
const byId = (records: readonly Json[]) =>
  [...records].sort((a, b) => (a.transaction_id as number) - (b.transaction_id as number));
const byStamp = (records: readonly Json[]) =>
  [...records].sort(
    (a, b) =>
      stampOf(a) - stampOf(b) || (a.transaction_id as number) - (b.transaction_id as number),
  );
const namesAgent = (record: Json) => AGENT_ID_FIELDS.some((column) => record[column] === AGENT);

describeOnEachDatabase('ListTransactions', (context: SuiteContext) => {
  beforeAll(() => context.running.seed({ requirements: CATALOGUE, transactions: FIXTURE }));

  const list = (query: string) => context.http.get(`${LIST}${query === '' ? '' : '?'}${query}`);

  /** Every page of a listing, following next_cursor; `between` runs after each page. */
  async function walk(
    query: string,
    between: (page: Page, index: number) => Promise<void> = () => Promise.resolve(),
  ): Promise<Page[]> {
    const pages: Page[] = [];
    let cursor: string | null = null;
    do {
      const parameters = [query, cursor && `cursor=${cursor}`].filter(Boolean).join('&');
      const response = await list(parameters).expect(200);
      const page = response.body as Page;
      // The Link header names the same next page as the body.
      if (page.next_cursor) {
        expect(response.headers.link).toBe(
          `<${LIST}?${new URLSearchParams([...new URLSearchParams(query), ['cursor', page.next_cursor]]).toString()}>; rel="next"`,
        );
      } else {
        expect(response.headers.link).toBeUndefined();
      }
      pages.push(page);
      await between(page, pages.length - 1);
      cursor = page.next_cursor;
    } while (cursor);
    return pages;
  }

  const listed = (pages: readonly Page[]) => pages.flatMap((page) => page.transactions);

  it('walks every transaction in transaction_id order, without gaps or repeats', async () => {
    const pages = await walk('limit=7');
    expect(pages.map((page) => page.transactions.length)).toEqual([7, 7, 7, 7, 7, 7, 7, 7, 4]);
    expect(idsOf(listed(pages))).toEqual(idsOf(byId(FIXTURE)));
  });

  it('lists each transaction as GetTransaction answers it, checklist included', async () => {
    const { body } = await list('limit=3').expect(200);
    const page = body as Page;
    expect(page.transactions).toHaveLength(3);
    for (const transaction of page.transactions) {
      const one = await context.http
        .get(`/api/Transaction/GetTransaction/${transaction.transaction_id as number}`)
        .expect(200);
      expect(transaction).toEqual(one.body);
      // Its row_version is the version GetTransaction's ETag names.
      expect(one.headers.etag).toBe(
        `"${String(transaction.transaction_id)}.${String(transaction.row_version)}"`,
      );
    }
    expect((page.transactions[0].requirements as Json[]).length).toBe(2);
    expect(page.transactions[1].requirements).toEqual([]);
  });

  it('answers 50 by default, and the largest page at the cap', async () => {
    expect(((await list('').expect(200)).body as Page).transactions).toHaveLength(50);
    const capped = (await list('limit=500').expect(200)).body as Page;
    expect(capped.transactions).toHaveLength(COUNT);
    expect(capped.next_cursor).toBeNull();
  });

  it.each<[string, string, (record: Json) => boolean]>([
    ['status', 'status=Pending', (record) => record.status === 'Pending'],
    [
      'financetype',
      'financetype=Bank%20Financing',
      (record) => record.financetype === 'Bank Financing',
    ],
    ['agent_id in any column of the chain', `agent_id=${AGENT}`, namesAgent],
    [
      'status, financetype and agent_id together',
      `status=Approved&financetype=Cash&agent_id=${AGENT}`,
      (record) =>
        record.status === 'Approved' && record.financetype === 'Cash' && namesAgent(record),
    ],
  ])('filters by %s, paging by transaction_id', async (_, query, holds) => {
    const expected = byId(FIXTURE.filter(holds));
    expect(expected.length).toBeGreaterThan(0);
    const pages = await walk(`${query}&limit=3`);
    expect(idsOf(listed(pages))).toEqual(idsOf(expected));
  });

  it('matches status and financetype exactly, letter case and spaces included', async () => {
    for (const query of ['status=pending', 'status=Pending%20', 'financetype=CASH']) {
      expect((await list(query).expect(200)).body).toEqual({ transactions: [], next_cursor: null });
    }
  });

  it('lists an agent named in two roles of one chain once', async () => {
    const ids = idsOf(listed(await walk(`agent_id=${AGENT}&limit=2`)));
    expect(ids.filter((id) => id === FIRST_ID + 7)).toHaveLength(1);
  });

  it.each<[string, string, (record: Json) => boolean]>([
    ['alone', '', () => true],
    ['with status', '&status=Cancelled', (record) => record.status === 'Cancelled'],
    ['with agent_id', `&agent_id=${AGENT}`, namesAgent],
  ])('orders changed_since %s by stamp, then transaction_id', async (_, filters, holds) => {
    const since = '2026-01-01T08:05:00Z';
    const expected = byStamp(
      FIXTURE.filter((record) => stampOf(record) >= Date.parse(since) && holds(record)),
    );
    const pages = await walk(`changed_since=${since}${filters}&limit=3`);
    expect(idsOf(listed(pages))).toEqual(idsOf(expected));
  });

  it('answers an empty page with 200, no items and a null cursor', async () => {
    for (const accept of ['application/json', 'application/xml']) {
      const response = await list('status=Nowhere').set('Accept', accept).expect(200);
      expect(response.headers.link).toBeUndefined();
      if (accept === 'application/json')
        expect(response.body).toEqual({ transactions: [], next_cursor: null });
      else
        expect(response.text).toBe(
          '<ArrayOfTransaction xmlns:i="http://www.w3.org/2001/XMLSchema-instance" ' +
            'xmlns="http://schemas.datacontract.org/2004/07/PropertySales.Models">' +
            '<next_cursor i:nil="true" /><transactions /></ArrayOfTransaction>',
        );
    }
  });

  it('writes a page in XML as ArrayOfTransaction, with the paging elements', async () => {
    const json = (await list('limit=2').expect(200)).body as Page;
    const response = await list('limit=2').set('Accept', 'application/xml').expect(200);
    expect(response.headers['content-type']).toBe('application/xml; charset=utf-8');
    const root = inspectXml(response.text);
    expect(root.name).toBe('ArrayOfTransaction');
    expect(root.attributes).toEqual([
      ['xmlns:i', 'http://www.w3.org/2001/XMLSchema-instance'],
      ['xmlns', 'http://schemas.datacontract.org/2004/07/PropertySales.Models'],
    ]);
    expect(childNames(root)).toEqual(['next_cursor', 'transactions']);
    expect(child(root, 'next_cursor').text).toBe(json.next_cursor);
    const items = child(root, 'transactions');
    expect(childNames(items)).toEqual(['Transaction', 'Transaction']);
    expect(child(items.children[0], 'transaction_id').text).toBe(String(FIRST_ID));
    expect(childNames(child(items.children[0], 'requirements'))).toEqual([
      'RequirementAcquisition',
      'RequirementAcquisition',
    ]);
  });

  it('negotiates text/json and answers 304 to the current ETag', async () => {
    const response = await list('limit=2').set('Accept', 'text/json').expect(200);
    expect(response.headers['content-type']).toBe('text/json; charset=utf-8');
    const etag = response.headers.etag;
    expect(etag).toMatch(/^"/);
    await list('limit=2').set('Accept', 'text/json').set('If-None-Match', etag).expect(304);
  });

  it('walks a changing set under changed_since: every transaction, each change once more', async () => {
    const since = '2026-01-01T08:00:00Z';
    const updated = new Set<unknown>();
    const walked = listed(
      await walk(`changed_since=${since}&limit=5`, async (page, index) => {
        // Between pages, one transaction already listed and one still ahead change their agents.
        if (index > 3) return;
        const behind = page.transactions[0].transaction_id as number;
        const ahead = FIRST_ID + index;
        for (const id of [behind, ahead]) {
          updated.add(id);
          await context.http
            .post('/api/Transaction/UpdateAgents')
            .set('Content-Type', 'application/json')
            .send(
              JSON.stringify({ transaction_id: id, financetype: 'Cash', brokerid: 9000 + index }),
            )
            .expect(204);
        }
      }),
    );
    // Keyset order holds across the whole walk: no row is listed before one listed earlier.
    for (let at = 1; at < walked.length; at++) {
      const [before, after] = [walked[at - 1], walked[at]];
      expect(
        stampOf(before) < stampOf(after) ||
          (stampOf(before) === stampOf(after) &&
            (before.transaction_id as number) < (after.transaction_id as number)),
      ).toBe(true);
    }
    // Every transaction is listed; only one changed after it was listed comes again, as it now is.
    expect(new Set(idsOf(walked))).toEqual(new Set(idsOf(FIXTURE)));
    const repeated = idsOf(walked).filter((id, at, all) => all.indexOf(id) !== at);
    expect(repeated.length).toBeGreaterThan(0);
    for (const id of repeated) expect(updated.has(id)).toBe(true);
    expect(new Set(repeated).size).toBe(repeated.length);
    // Listed again, a transaction carries a higher row_version: a consumer that seeds from the
    // listing keeps the higher one and skips the rest by the version alone.
    for (const id of repeated) {
      const [first, again] = walked.filter((record) => record.transaction_id === id);
      expect(again.row_version as number).toBeGreaterThan(first.row_version as number);
    }
    for (const id of updated) {
      const last = walked.findLast((record) => record.transaction_id === id)!;
      const now = await context.http.get(`/api/Transaction/GetTransaction/${id as number}`);
      expect(last).toEqual(now.body);
    }
  });

  it.each([
    ['a rel of its own', '/x>;rel="evil"', '/x%3E%3Brel=%22evil%22'],
    ['separators and brackets', '/a,b<c>{d}|e^f`g', '/a%2Cb%3Cc%3E%7Bd%7D%7Ce%5Ef%60g'],
    ['a % that starts no escape, beside one that does', '/%zz%41', '/%25zz%41'],
  ])(
    'percent-encodes in the Link header what a URI may not hold of the path as sent: %s',
    async (_, segment, encoded) => {
      // The legacy routing answers ListTransactions with one trailing segment, which the link repeats.
      const response = await rawRequest(context.running.baseUrl, {
        method: 'GET',
        path: `${LIST}${segment}?limit=2`,
      });
      expect(response.status).toBe(200);
      const { next_cursor: cursor } = JSON.parse(response.text) as Page;
      expect(response.headers.link).toBe(
        `<${LIST}${encoded}?limit=2&cursor=${cursor}>; rel="next"`,
      );
    },
  );

  describe('refuses bad parameters with 400 in ModelState, never 500', () => {
    const refusals: [string, string, string][] = [
      ['a limit over the cap', 'limit=501', 'query.limit'],
      ['a limit of 0', 'limit=0', 'query.limit'],
      ['a negative limit', 'limit=-5', 'query.limit'],
      ['a huge limit', 'limit=99999999999999999999', 'query.limit'],
      ['a non-numeric limit', 'limit=ten', 'query.limit'],
      ['a fractional limit', 'limit=2.5', 'query.limit'],
      ['a non-numeric agent_id', 'agent_id=abc', 'query.agent_id'],
      ['an agent_id past 32 bits', 'agent_id=2147483648', 'query.agent_id'],
      ['a date that is none', 'changed_since=yesterday', 'query.changed_since'],
      ['a date out of range', 'changed_since=2026-13-45T99:00:00Z', 'query.changed_since'],
      ['a cursor that is not base64url JSON', 'cursor=not-a-cursor', 'query.cursor'],
      [
        'a cursor of other JSON',
        `cursor=${Buffer.from('{"a":1}').toString('base64url')}`,
        'query.cursor',
      ],
      ['a cursor of null', `cursor=${Buffer.from('null').toString('base64url')}`, 'query.cursor'],
      [
        'a cursor with a key that is no id',
        `cursor=${Buffer.from('{"filter":[null,null,null,null],"after":[2147483648,null]}').toString('base64url')}`,
        'query.cursor',
      ],
      [
        'a cursor with an id that is not a number',
        `cursor=${Buffer.from('{"filter":[null,null,null,null],"after":["1 OR 1=1",null]}').toString('base64url')}`,
        'query.cursor',
      ],
    ];

    it.each(refusals)('%s', async (_, query, key) => {
      const body = expectProblem(await list(query), 400);
      expect(Object.keys(body.ModelState as Json)).toEqual([key]);
    });

    it('names the cap in the message, in JSON and in XML', async () => {
      const json = expectProblem(await list('limit=501'), 400);
      expect(json.ModelState).toEqual({
        'query.limit': ['The field limit must be between 1 and 500.'],
      });
      const xml = await list('limit=501').set('Accept', 'application/xml').expect(400);
      expect(xml.headers['content-type']).toBe('application/xml; charset=utf-8');
      expect(xml.text).toBe(
        '<Error><Message>The request is invalid.</Message><ModelState>' +
          '<query.limit>The field limit must be between 1 and 500.</query.limit></ModelState></Error>',
      );
    });

    it('refuses a cursor sent with other filters, or with another order', async () => {
      const { next_cursor: cursor } = (await list('status=Pending&limit=2').expect(200))
        .body as Page;
      expect(cursor).toEqual(expect.any(String));
      for (const query of [
        `status=Approved&cursor=${cursor}`,
        `cursor=${cursor}`,
        `status=Pending&agent_id=${AGENT}&cursor=${cursor}`,
        `status=Pending&changed_since=2026-01-01T00:00:00Z&cursor=${cursor}`,
      ]) {
        const body = expectProblem(await list(query), 400);
        expect(Object.keys(body.ModelState as Json)).toEqual(['query.cursor']);
      }
      const bySince = (
        (await list('changed_since=2026-01-01T00:00:00Z&limit=2').expect(200)).body as Page
      ).next_cursor;
      expectProblem(await list(`changed_since=2026-01-01T00:00:01Z&cursor=${bySince}`), 400);
      // Any change to the text of a cursor is refused or names another position, never a 500.
      for (let at = 0; at < cursor!.length; at++) {
        const tampered =
          cursor!.slice(0, at) + (cursor![at] === 'A' ? 'B' : 'A') + cursor!.slice(at + 1);
        expect((await list(`status=Pending&cursor=${tampered}`)).status).toBeLessThan(500);
      }
    });

    it('binds as Web API bound the URI: names in any case, the first of repeated ones', async () => {
      expect(
        ((await list('limit=2&limit=900').expect(200)).body as Page).transactions,
      ).toHaveLength(2);
      expect(((await list('LIMIT=3').expect(200)).body as Page).transactions).toHaveLength(3);
      const pending = (await list('Status=Pending&status=Approved&limit=500').expect(200))
        .body as Page;
      expect(new Set(pending.transactions.map((record) => record.status))).toEqual(
        new Set(['Pending']),
      );
    });

    it.each([
      'limit[]=1',
      'limit[a]=1',
      'agent_id=1&agent_id[x]=2',
      'status=%00',
      `status=${'x'.repeat(5000)}&financetype=${'y'.repeat(300)}`,
      "status=' OR 1=1 --",
      'financetype=%E2%80%AE',
      'changed_since=0001-01-01T00:00:00',
      'changed_since=9999-12-31T23:59:59.9999999Z',
      'changed_since=/Date(0)/',
      'cursor=',
      'cursor=%FF%FE',
      'limit=%',
      '&&&=&==',
      'agent_id=-2147483648&limit=1',
    ])('answers a hostile query string with 200 or 400, in the error shape: %#', async (query) => {
      const response: HttpResult = await list(query);
      if (response.status !== 200) expectProblem(response, 400);
      else
        expect(Object.keys(JSON.parse(response.text) as Json)).toEqual([
          'transactions',
          'next_cursor',
        ]);
    });
  });
});
