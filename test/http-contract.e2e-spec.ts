import { CATALOGUE, transactionRecord } from './support/fixtures';
import { expectNoLeak, expectProblem, rawRequest } from './support/http-assertions';
import { describeOnEachDatabase, describeOnSqlite, type SuiteContext } from './support/test-app';

const UNSUPPORTED_TEXT_PLAIN =
  "The request entity's media type 'text/plain' is not supported for this resource.";

/** A body UpdateAgents reads and validates, for transaction 1 of the seeded data. */
const updateBody = (overrides: Record<string, unknown> = {}) =>
  JSON.stringify(transactionRecord(1, overrides));

/** Routes that answer 200 with a body once the suite's data is seeded. */
const READ_ROUTES = [
  '/api/Requirement/GetRequirements',
  '/api/Transaction/GetTransaction/1',
  '/api/Transaction/GetAgentHistory/1',
];

describeOnEachDatabase('HTTP contract', (context: SuiteContext) => {
  beforeAll(async () => {
    await context.running.seed({ requirements: CATALOGUE, transactions: [transactionRecord(1)] });
  });

  describe('response negotiation', () => {
    it.each([
      ['no Accept', undefined, 'application/json'],
      ['*/*', '*/*', 'application/json'],
      ['application/json', 'application/json', 'application/json'],
      ['text/json', 'text/json', 'text/json'],
      ['text/*', 'text/*', 'text/json'],
      ['upper case', 'TEXT/JSON', 'text/json'],
      ['a higher q for text/json', 'application/json;q=0.5, text/json;q=0.9', 'text/json'],
      // As Web API 5.2.3 chose: the first listed on a tie, and q=0 excludes nothing.
      ['a tie, text/json listed first', 'text/json, application/json', 'text/json'],
      ['q=0 for application/json', 'application/json;q=0, */*;q=0.1', 'application/json'],
      ['only types never written', 'image/png, application/pdf', 'application/json'],
      ['every type refused with q=0', 'application/json;q=0, text/json;q=0', 'application/json'],
      ['a wildcard below a preferred unknown', 'image/png, */*;q=0.1', 'application/json'],
      ['application/xml', 'application/xml', 'application/xml'],
      ['text/xml', 'text/xml', 'text/xml'],
      ['a tie between XML and JSON', 'application/xml, application/json', 'application/json'],
      ['a higher q for XML', 'application/json;q=0.5, application/xml', 'application/xml'],
      [
        'a browser',
        'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
        'application/xml',
      ],
    ])('Accept: %s', async (_, accept, expected) => {
      for (const route of READ_ROUTES) {
        const call = context.http.get(route);
        if (accept !== undefined) call.set('Accept', accept);
        const response = await call;
        expect({ route, status: response.status }).toEqual({ route, status: 200 });
        expect(response.headers['content-type']).toBe(`${expected}; charset=utf-8`);
        if (expected.endsWith('/json'))
          expect(() => JSON.parse(response.text) as unknown).not.toThrow();
        else expect(response.text).toMatch(/^<(?:ArrayOf)?\w+ xmlns:i=/);
      }
    });

    it('writes the same JSON for application/json and text/json', async () => {
      for (const route of READ_ROUTES) {
        const json = await context.http.get(route).set('Accept', 'application/json').expect(200);
        const text = await context.http.get(route).set('Accept', 'text/json').expect(200);
        expect(text.text).toBe(json.text);
      }
    });
  });

  describe('errors', () => {
    it('writes JSON errors in the negotiated JSON type, as problem details only when asked for', async () => {
      for (const [accept, mediaType] of [
        [undefined, 'application/json'],
        ['*/*', 'application/json'],
        ['application/json', 'application/json'],
        ['text/json', 'text/json'],
        ['image/png', 'application/json'],
        ['application/problem+json', 'application/problem+json'],
        ['application/json, application/problem+json', 'application/json'],
      ]) {
        const call = context.http.get('/api/Transaction/GetTransaction/999');
        if (accept !== undefined) call.set('Accept', accept);
        const body = expectProblem(await call, 404, { mediaType });
        expect(body.type).toMatch(/transaction_not_found$/);
        expect(body.detail).toBe(body.Message);
      }
    });

    it('answers an invalid body of each request type in the legacy error type, problem details only by name', async () => {
      // An invalid body in each format, and the error type the legacy answered it without Accept.
      const invalid = [
        ['application/json', '{"brokerid":"x"}', 'application/json'],
        ['text/json', '{"brokerid":"x"}', 'text/json'],
        ['application/xml', '<Transaction><loanterm>0</loanterm></Transaction>', 'application/xml'],
        ['text/xml', '<Transaction><loanterm>0</loanterm></Transaction>', 'text/xml'],
        ['application/x-www-form-urlencoded', 'brokerid=x', 'application/json'],
      ] as const;
      for (const [contentType, body, withoutAccept] of invalid) {
        const post = (accept?: string) =>
          rawRequest(context.running.baseUrl, {
            method: 'POST',
            path: '/api/Transaction/UpdateAgents',
            headers: { 'Content-Type': contentType, ...(accept && { Accept: accept }) },
            body,
          });
        for (const [accept, mediaType] of [
          [undefined, withoutAccept],
          ['*/*', 'application/json'],
          ['application/json', 'application/json'],
          ['application/problem+json', 'application/problem+json'],
        ] as const) {
          const response = await post(accept);
          const label = `${contentType}, Accept ${accept ?? '(none)'}`;
          expect({
            label,
            status: response.status,
            type: response.headers['content-type'],
          }).toEqual({ label, status: 400, type: `${mediaType}; charset=utf-8` });
          if (mediaType.endsWith('xml')) {
            expect(response.text).toMatch(
              /^<Error><Message>The request is invalid\.<\/Message><ModelState>/,
            );
          } else {
            const problem = expectProblem(response, 400, { mediaType });
            expect(problem).toMatchObject({ status: 400, Message: 'The request is invalid.' });
          }
        }
      }
    });

    it('writes an error in XML when XML is asked for, or when the request was XML and nothing else is asked', async () => {
      const byAccept = await context.http
        .get('/api/Transaction/GetTransaction/999')
        .set('Accept', 'application/xml');
      expect(byAccept.status).toBe(404);
      expect(byAccept.headers['content-type']).toBe('application/xml; charset=utf-8');
      expect(byAccept.text).toMatch(/^<Error><Message>[^<]+<\/Message><\/Error>$/);
      const xmlBody = (accept?: string) => {
        const call = context.http
          .post('/api/Transaction/UpdateAgents')
          .set('Content-Type', 'text/xml')
          .send('<Transaction><brokerid>x</brokerid></Transaction>');
        return accept === undefined ? call : call.set('Accept', accept);
      };
      // Without an Accept that matches a type written here, the request's own type, as Web API chose.
      for (const accept of [undefined, 'image/png']) {
        const response = await xmlBody(accept);
        expect(response.status).toBe(400);
        expect(response.headers['content-type']).toBe('text/xml; charset=utf-8');
        expect(response.text).toMatch(
          /^<Error><Message>The request is invalid\.<\/Message><ModelState>/,
        );
        expectNoLeak(response.text);
      }
      // */* matches JSON first: it is not "no Accept".
      expectProblem(await xmlBody('*/*'), 400);
      expectProblem(await xmlBody('application/json'), 400);
      // A GET names XML by its Content-Type alone too, for errors as for success.
      for (const [path, status] of [
        ['/api/Transaction/GetTransaction/999', 404],
        ['/api/Transaction/UpdateAgents', 405],
      ] as const) {
        const response = await context.http.get(path).set('Content-Type', 'application/xml');
        expect(response.status).toBe(status);
        expect(response.headers['content-type']).toBe('application/xml; charset=utf-8');
        expect(response.text).toMatch(/^<Error><Message>[^<]+<\/Message><\/Error>$/);
        expectProblem(
          await context.http.get(path).set('Content-Type', 'application/xml').set('Accept', '*/*'),
          status,
        );
      }
    });

    it('answers an unknown path with 404 and the legacy message', async () => {
      for (const path of [
        '/api/Nothing/Here',
        '/api/Transaction/Nothing',
        '/api/Transaction/GetTransaction',
        '/api/Transaction/GetTransaction/1/extra',
        '/Requirement/GetRequirements',
        '/',
      ]) {
        const body = expectProblem(await context.http.get(path), 404);
        expect(body.Message).toMatch(
          /^No HTTP resource was found that matches the request URI '.*'\.$/,
        );
        expect(body.Message).toContain(path);
      }
    });

    it('answers an unknown path with 404 whatever the method', async () => {
      expectProblem(await context.http.delete('/api/Nothing/Here'), 404);
      expectProblem(
        await context.http
          .post('/api/Nothing/Here')
          .set('Content-Type', 'application/json')
          .send('{}'),
        404,
      );
    });

    it('answers a known path with the wrong method with 405 and an Allow header', async () => {
      const cases: Array<[string, string, string]> = [
        ['GET', '/api/Transaction/UpdateAgents', 'POST'],
        ['PUT', '/api/Transaction/UpdateAgents', 'POST'],
        ['DELETE', '/api/Requirement/GetRequirements', 'GET'],
        ['POST', '/api/Requirement/GetRequirements', 'GET'],
        ['PUT', '/api/Transaction/GetTransaction/1', 'GET'],
        ['DELETE', '/api/Transaction/GetAgentHistory/1', 'GET'],
        ['GET', '/api/transaction/updateagents', 'POST'],
      ];
      for (const [method, path, allowed] of cases) {
        const response = await rawRequest(context.running.baseUrl, { method, path });
        const body = expectProblem(response, 405);
        expect(body.Message).toBe(
          `The requested resource does not support http method '${method}'.`,
        );
        const allow = String(response.headers.allow)
          .split(',')
          .map((name) => name.trim());
        expect(allow).toContain(allowed);
        expect(allow).not.toContain(method);
      }
    });

    it('refuses a body of an unsupported media type with 415 and the legacy message', async () => {
      const response = await context.http
        .post('/api/Transaction/UpdateAgents')
        .set('Content-Type', 'text/plain')
        .send(updateBody({ brokerid: 99 }));
      const body = expectProblem(response, 415);
      expect(body.Message).toBe(UNSUPPORTED_TEXT_PLAIN);
      expect(body.detail).toBe(UNSUPPORTED_TEXT_PLAIN);
      const stored = await context.http.get('/api/Transaction/GetTransaction/1').expect(200);
      expect(stored.body.brokerid).toBe(11);
    });

    it('names the media type in 415 whatever its parameters', async () => {
      const response = await context.http
        .post('/api/Transaction/UpdateAgents')
        .set('Content-Type', 'text/plain; charset=utf-8')
        .send(updateBody());
      expect(expectProblem(response, 415).Message).toBe(UNSUPPORTED_TEXT_PLAIN);
    });

    it('refuses a body without a Content-Type with 415', async () => {
      const response = await rawRequest(context.running.baseUrl, {
        method: 'POST',
        path: '/api/Transaction/UpdateAgents',
        body: updateBody({ brokerid: 99 }),
      });
      const body = expectProblem(response, 415);
      expect(body.Message).toBe(
        "The request contains an entity body but no Content-Type header. The inferred media type 'application/octet-stream' is not supported for this resource.",
      );
      const stored = await context.http.get('/api/Transaction/GetTransaction/1').expect(200);
      expect(stored.body.brokerid).toBe(11);
    });

    it('reads JSON bodies of both JSON types, with or without a charset', async () => {
      for (const contentType of [
        'application/json',
        'application/json; charset=utf-8',
        'text/json',
        'text/json; charset=UTF-8',
        'Application/JSON',
      ]) {
        // Missing transaction_id and financetype: a 400 naming them shows the body was read.
        const response = await context.http
          .post('/api/Transaction/UpdateAgents')
          .set('Content-Type', contentType)
          .send('{"brokerid":5}');
        // Without an Accept header, the error comes in the request's own JSON type.
        const body = expectProblem(response, 400, {
          mediaType: contentType.split(';')[0].toLowerCase(),
        });
        expect(Object.keys(body.ModelState as object).sort()).toEqual([
          'transaction.financetype',
          'transaction.transaction_id',
        ]);
      }
    });

    it('reads JSON and XML bodies as UTF-8 or UTF-16 only, refusing bytes that are not text in them', async () => {
      const name = 'José Müller';
      const json = updateBody({ brokerid: 31, brokername: name });
      // Latin-1 bytes, with or without their charset: the legacy read them as UTF-8 and refused them.
      for (const contentType of ['application/json', 'application/json; charset=iso-8859-1']) {
        const response = await rawRequest(context.running.baseUrl, {
          method: 'POST',
          path: '/api/Transaction/UpdateAgents',
          headers: { 'Content-Type': contentType },
          body: Buffer.from(json, 'latin1'),
        });
        const body = expectProblem(response, 400);
        expect({ contentType, keys: Object.keys(body.ModelState as object) }).toEqual({
          contentType,
          keys: ['transaction'],
        });
      }
      const unchanged = await context.http.get('/api/Transaction/GetTransaction/1').expect(200);
      expect(unchanged.body.brokername).not.toBe(name);
      // The same text in UTF-16, by its charset, is stored as sent.
      const utf16 = await rawRequest(context.running.baseUrl, {
        method: 'POST',
        path: '/api/Transaction/UpdateAgents',
        headers: { 'Content-Type': 'application/json; charset=utf-16' },
        body: Buffer.from(json, 'utf16le'),
      });
      expect(utf16.status).toBe(204);
      const stored = await context.http.get('/api/Transaction/GetTransaction/1').expect(200);
      expect(stored.body.brokername).toBe(name);
      // An XML declaration naming another encoding than the body's is refused, as the legacy did.
      const xml = await context.http
        .post('/api/Transaction/UpdateAgents')
        .set('Content-Type', 'application/xml')
        .set('Accept', 'application/json')
        .send(
          '<?xml version="1.0" encoding="utf-16"?><Transaction><transaction_id>1</transaction_id><financetype>Cash</financetype></Transaction>',
        );
      expect(Object.keys(expectProblem(xml, 400).ModelState as object)).toEqual(['transaction']);
    });

    it('reads a Content-Type as the legacy did: white space around the slash, parameters without a value', async () => {
      // Each as the legacy answered it.
      for (const [contentType, status] of [
        ['application/json; charset', 204],
        ['application/json;charset', 204],
        ['application / json', 204],
        ['text/ json; a; b=c; d', 204],
        ['application/json; a="b;c"', 204],
        ['application/json;', 415],
        ['application/json; charset=', 415],
        ['application/json charset=utf-8', 415],
      ] as const) {
        const response = await rawRequest(context.running.baseUrl, {
          method: 'POST',
          path: '/api/Transaction/UpdateAgents',
          headers: { 'Content-Type': contentType },
          body: updateBody({ brokerid: 21 }),
        });
        expect({ contentType, status: response.status }).toEqual({ contentType, status });
      }
      const xml = await context.http
        .get('/api/Requirement/GetRequirements')
        .set('Content-Type', 'text / xml; charset')
        .expect(200);
      expect(xml.headers['content-type']).toBe('text/xml; charset=utf-8');
    });

    it('answers malformed JSON with 400, reported on the transaction parameter', async () => {
      for (const text of [
        '{"transaction_id":1,',
        '{"transaction_id": 1 "financetype": "x"}',
        'not json',
        '[1,2]',
      ]) {
        const response = await context.http
          .post('/api/Transaction/UpdateAgents')
          .set('Content-Type', 'application/json')
          .send(text);
        const body = expectProblem(response, 400);
        expect(body.Message).toBe('The request is invalid.');
        expect(Object.keys(body.ModelState as object)).toEqual(['transaction']);
      }
    });

    it('answers an empty body with 400', async () => {
      const withType = await rawRequest(context.running.baseUrl, {
        method: 'POST',
        path: '/api/Transaction/UpdateAgents',
        headers: { 'Content-Type': 'application/json' },
        body: '',
      });
      expect(Object.keys(expectProblem(withType, 400).ModelState as object)).toEqual([
        'transaction',
      ]);
      const withoutAnything = await rawRequest(context.running.baseUrl, {
        method: 'POST',
        path: '/api/Transaction/UpdateAgents',
      });
      expect(Object.keys(expectProblem(withoutAnything, 400).ModelState as object)).toEqual([
        'transaction',
      ]);
    });

    it('never lets internal detail reach a client, whatever arrives', async () => {
      const post = (contentType: string, text: string) =>
        rawRequest(context.running.baseUrl, {
          method: 'POST',
          path: '/api/Transaction/UpdateAgents',
          headers: { 'Content-Type': contentType, Accept: 'application/json' },
          body: text,
        });
      const responses = [
        await context.http.get('/api/Transaction/GetTransaction/%E0%A4%A'),
        await context.http.get('/api/Transaction/GetTransaction/99999999999999999999'),
        await context.http.get("/api/Transaction/GetTransaction/1'%20OR%20'1'='1"),
        await context.http.get('/api/Transaction/GetAgentHistory/-0x1'),
        await post('application/json', `{"a":${'['.repeat(10000)}${']'.repeat(10000)}}`),
        await post(
          'application/json',
          updateBody().replace('"discount":50000', '"discount":1e400'),
        ),
        await post('application/json', '{"transaction_id":"1; DROP TABLE transaction"}'),
        await post('application/json', updateBody({ brokerid: { $gt: 1 } })),
        await post('application/json', updateBody({ brokername: 'x'.repeat(4001) })),
        await post('application/json', updateBody({ transaction_id: 2147483648 })),
        await post(';;;', updateBody()),
        await post('application/json', '\u0000\u0001\u0002'),
        await post(
          'application/xml',
          '<!DOCTYPE t [<!ENTITY x SYSTEM "file:///etc/passwd">]><Transaction><brokername>&x;</brokername></Transaction>',
        ),
        await post(
          'application/xml',
          '<!DOCTYPE t [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><Transaction><brokername>&b;</brokername></Transaction>',
        ),
        await post('application/xml', '<Transaction><brokerid>1</brokerid>'),
      ];
      for (const response of responses) {
        expect(response.status).toBeGreaterThanOrEqual(400);
        expect(response.status).toBeLessThan(500);
        expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
        expectNoLeak(response.text);
        expect(response.text).not.toContain('root:');
      }
    });
  });

  describe('paths', () => {
    it('matches paths case-insensitively, as ASP.NET', async () => {
      const canonical = await context.http.get('/api/Requirement/GetRequirements').expect(200);
      for (const path of [
        '/API/REQUIREMENT/GETREQUIREMENTS',
        '/api/requirement/getrequirements',
        '/Api/Requirement/GetRequirements',
      ]) {
        const response = await context.http.get(path).expect(200);
        expect(response.text).toBe(canonical.text);
      }
      await context.http.get('/api/transaction/gettransaction/1').expect(200);
      await context.http.get('/API/TRANSACTION/GETAGENTHISTORY/1').expect(200);
    });

    it('ignores one trailing segment on both legacy routes, as the route template api/{controller}/{action}/{id}', async () => {
      const canonical = await context.http.get('/api/Requirement/GetRequirements').expect(200);
      // Any segment text, as the legacy answered each.
      for (const path of [
        '/api/Requirement/GetRequirements/5',
        '/api/requirement/getrequirements/x',
        '/api/Requirement/GetRequirements/a%20b/',
        '/api/Requirement/GetRequirements/5?x=1',
        '/api/Requirement/GetRequirements/%zz',
        '/api/Requirement/GetRequirements/%',
        '/api/Requirement/GetRequirements/99999999999999999999',
        '/api/Requirement/GetRequirements/a;b:c*~+',
        '/api/Requirement/GetRequirements/%C3%A9',
        '/api/Requirement/GetRequirements/...',
      ]) {
        const response = await rawRequest(context.running.baseUrl, { method: 'GET', path });
        expect({ path, status: response.status }).toEqual({ path, status: 200 });
        expect(response.text).toBe(canonical.text);
      }
      for (const [segment, brokerid] of [
        ['1', 31],
        ['abc', 32],
        ['%41b%63', 33],
        ['-1.5', 34],
        ['%zz', 35],
      ] as const) {
        await context.http
          .post(`/api/Transaction/UpdateAgents/${segment}`)
          .set('Content-Type', 'application/json')
          .send(updateBody({ brokerid }))
          .expect(204);
        const stored = await context.http.get('/api/Transaction/GetTransaction/1').expect(200);
        expect(stored.body.brokerid).toBe(brokerid);
      }
      // Two segments match no route, an escaped slash making two as well, as the legacy read it; the
      // wrong method on one segment is still 405.
      await context.http.get('/api/Requirement/GetRequirements/5/6').expect(404);
      await context.http.get('/api/Requirement/GetRequirements/5%2F6').expect(404);
      const wrongMethod = await context.http.get('/api/Transaction/UpdateAgents/1').expect(405);
      expect(wrongMethod.headers.allow).toBe('POST');
    });

    it('resolves dot segments and reads backslashes as slashes before routing, as the legacy host did', async () => {
      const get = (path: string) => rawRequest(context.running.baseUrl, { method: 'GET', path });
      const canonical = await context.http.get('/api/Requirement/GetRequirements').expect(200);
      // Each as the legacy answered it.
      for (const [path, status] of [
        ['/api/Requirement/GetRequirements/5/..', 200],
        ['/api/Requirement/GetRequirements/5/.', 200],
        ['/api/Requirement/GetRequirements/%2e', 200],
        ['/api/Requirement/GetRequirements/a%2F..', 200],
        ['/api/x/../Requirement/./GetRequirements', 200],
        ['/api/Requirement/GetRequirements/%2E%2E/GetRequirements', 200],
        ['/api\\Requirement\\GetRequirements\\5', 200],
        ['/api/Requirement/GetRequirements%5C5', 200],
        ['/api/Requirement/GetRequirements/..', 404],
        ['/api/Requirement/GetRequirements/.%2E', 404],
        ['/api/Requirement/GetRequirements/a\\b', 404],
      ] as const) {
        const response = await get(path);
        expect({ path, status: response.status }).toEqual({ path, status });
        if (status === 200) expect(response.text).toBe(canonical.text);
      }
      for (const path of [
        '/api/Transaction/GetTransaction/1/x/..',
        '/api/Transaction%2FGetTransaction/1%2F',
      ]) {
        const response = await get(path);
        expect({ path, status: response.status }).toEqual({ path, status: 200 });
        expect(JSON.parse(response.text)).toMatchObject({ transaction_id: 1 });
      }
      const post = (path: string, brokerid: number) =>
        rawRequest(context.running.baseUrl, {
          method: 'POST',
          path,
          headers: { 'Content-Type': 'application/json' },
          body: updateBody({ brokerid }),
        });
      expect((await post('/api/Transaction/UpdateAgents/1/..', 41)).status).toBe(204);
      expect((await post('/api/Transaction/x/../UpdateAgents\\7', 42)).status).toBe(204);
      expect((await post('/api/Transaction/UpdateAgents/..', 43)).status).toBe(404);
      const stored = await context.http.get('/api/Transaction/GetTransaction/1').expect(200);
      expect(stored.body.brokerid).toBe(42);
    });

    it('accepts UpdateAgents on a lower-case path', async () => {
      await context.http
        .post('/api/transaction/updateagents')
        .set('Content-Type', 'application/json')
        .send(updateBody({ brokerid: 12 }))
        .expect(204);
      const stored = await context.http.get('/api/Transaction/GetTransaction/1').expect(200);
      expect(stored.body.brokerid).toBe(12);
    });
  });
});

describeOnSqlite(
  'HTTP contract with an empty API_PREFIX',
  (context: SuiteContext) => {
    it('serves the routes at the root', async () => {
      const response = await context.http.get('/Requirement/GetRequirements').expect(200);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.text).toBe('[]');
      await context.http.get('/requirement/getrequirements').expect(200);
      expectProblem(await context.http.get('/Transaction/GetTransaction/1'), 404);
      const wrongMethod = await context.http.get('/Transaction/UpdateAgents');
      expectProblem(wrongMethod, 405);
      expect(wrongMethod.headers.allow).toContain('POST');
    });

    it('no longer serves them under /api', async () => {
      expectProblem(await context.http.get('/api/Requirement/GetRequirements'), 404);
      expectProblem(
        await context.http
          .post('/api/Transaction/UpdateAgents')
          .set('Content-Type', 'application/json')
          .send(updateBody()),
        404,
      );
    });
  },
  { API_PREFIX: '' },
);

describeOnSqlite(
  'HTTP contract with API_PREFIX=/v1/sales/',
  (context: SuiteContext) => {
    it('serves the routes under the prefix, without its slashes, case-insensitively', async () => {
      const response = await context.http.get('/v1/sales/Requirement/GetRequirements').expect(200);
      expect(response.text).toBe('[]');
      await context.http.get('/V1/SALES/requirement/getrequirements').expect(200);
      const wrongMethod = await context.http.get('/v1/sales/Transaction/UpdateAgents');
      expectProblem(wrongMethod, 405);
      expect(wrongMethod.headers.allow).toContain('POST');
      const unknown = expectProblem(
        await context.http.get('/v1/sales/Transaction/GetTransaction/7'),
        404,
      );
      expect(unknown.type).toMatch(/transaction_not_found$/);
    });

    it('serves nothing under the default prefix or at the root', async () => {
      for (const path of [
        '/api/Requirement/GetRequirements',
        '/Requirement/GetRequirements',
        '/v1/Requirement/GetRequirements',
        '/sales/Requirement/GetRequirements',
      ]) {
        expectProblem(await context.http.get(path), 404);
      }
    });
  },
  { API_PREFIX: '/v1/sales/' },
);

describeOnSqlite(
  'HTTP contract with BODY_LIMIT=1kb',
  (context: SuiteContext) => {
    const post = (text: string, chunked = false) =>
      rawRequest(context.running.baseUrl, {
        method: 'POST',
        path: '/api/Transaction/UpdateAgents',
        headers: { 'Content-Type': 'application/json' },
        body: text,
        chunked,
      });
    const padded = (size: number) => {
      const text = JSON.stringify({
        transaction_id: 5,
        financetype: 'Cash',
        submitted_requirements: '',
      });
      return text.replace(
        '"submitted_requirements":""',
        `"submitted_requirements":"${'x'.repeat(size - text.length)}"`,
      );
    };

    it('reads a body within the limit', async () => {
      const text = padded(1000);
      expect(Buffer.byteLength(text)).toBe(1000);
      // The body was read and validated: transaction 5 does not exist.
      const body = expectProblem(await post(text), 404);
      expect(body.type).toMatch(/transaction_not_found$/);
    });

    it('refuses a body over the limit with 413, with or without a Content-Length', async () => {
      const body = expectProblem(await post(padded(2048)), 413);
      expect(body.status).toBe(413);
      expectProblem(await post(padded(4096), true), 413);
      // The service keeps serving afterwards.
      await context.http.get('/api/Requirement/GetRequirements').expect(200);
    });
  },
  { BODY_LIMIT: '1kb' },
);
