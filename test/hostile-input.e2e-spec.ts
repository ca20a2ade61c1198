import { connect } from 'node:net';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { expectNoLeak } from './support/http-assertions';
import { describeOnEachDatabase, describeOnSqlite } from './support/test-app';

const UPDATE = '/api/Transaction/UpdateAgents';
const LIMIT_BYTES = 64 * 1024;
const BILLION_LAUGHS =
  '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">' +
  Array.from(
    { length: 9 },
    (_, level) => `<!ENTITY lol${level + 1} "${`&lol${level || ''};`.repeat(10)}">`,
  ).join('') +
  ']><Transaction><financetype>&lol9;</financetype></Transaction>';

/** Bodies that must each get a 4xx, quickly, and leave the service healthy and its data unchanged. */
const HOSTILE: Array<[string, string, string, number]> = [
  [
    'JSON nested far past any member',
    'application/json',
    `{"financetype":${'['.repeat(20_000)}${']'.repeat(20_000)}}`,
    400,
  ],
  [
    'a JSON document of arrays only',
    'application/json',
    `${'['.repeat(15_000)}${']'.repeat(15_000)}`,
    400,
  ],
  [
    'JSON cut off inside a member',
    'application/json',
    '{"transaction_id":1,"financetype":"Cash',
    400,
  ],
  ['an empty JSON body', 'application/json', '', 400],
  ['entity expansion (billion laughs)', 'application/xml', BILLION_LAUGHS, 400],
  [
    'an external entity',
    'text/xml',
    '<!DOCTYPE t [<!ENTITY x SYSTEM "file:///etc/passwd">]><Transaction>&x;</Transaction>',
    400,
  ],
  [
    'XML nested far past any member',
    'application/xml',
    `<Transaction>${'<a>'.repeat(4_000)}${'</a>'.repeat(4_000)}</Transaction>`,
    400,
  ],
  [
    'a second XML root',
    'application/xml',
    '<Transaction><financetype>Cash</financetype></Transaction><Transaction/>',
    400,
  ],
  [
    'XML with trailing garbage',
    'text/xml',
    '<Transaction><financetype>Cash</financetype></Transaction>trailing',
    400,
  ],
  ['an empty XML body', 'application/xml', '', 400],
  [
    'a foreign XML root',
    'application/xml',
    '<Requirement><financetype>Cash</financetype></Requirement>',
    400,
  ],
  // Any number of pairs binds, as in the legacy, in time linear in the body; these lack the
  // members required.
  [
    '5,000 unknown form keys',
    'application/x-www-form-urlencoded',
    Array.from({ length: 5000 }, (_, n) => `k${n}=1`).join('&'),
    400,
  ],
  [
    'a form key with a [ left open',
    'application/x-www-form-urlencoded',
    `transaction_id=1&financetype=Cash&requirements${'['.repeat(20_000)}=1`,
    400,
  ],
  [
    'form keys nested far past any member',
    'application/x-www-form-urlencoded',
    `requirements${'[0]'.repeat(500)}=1`,
    400,
  ],
  ['an empty form', 'application/x-www-form-urlencoded', '', 400],
  [
    'a JSON body over the limit',
    'application/json',
    `{"financetype":"${'x'.repeat(LIMIT_BYTES)}"}`,
    413,
  ],
  [
    'an XML body over the limit',
    'application/xml',
    `<Transaction><financetype>${'x'.repeat(LIMIT_BYTES)}</financetype></Transaction>`,
    413,
  ],
  [
    'a form over the limit',
    'application/x-www-form-urlencoded',
    `financetype=${'x'.repeat(LIMIT_BYTES)}`,
    413,
  ],
  // Read as UTF-8, as Web API fell back to it: the empty Transaction is then invalid.
  ['an unknown charset', 'application/json; charset=x-unknown', '{}', 400],
];

describeOnEachDatabase(
  'hostile request bodies',
  (context) => {
    let before: string;

    beforeAll(async () => {
      await context.running.seed({ requirements: CATALOGUE, transactions: [transactionRecord(1)] });
      before = (await context.http.get('/api/Transaction/GetTransaction/1').expect(200)).text;
    });

    it.each(HOSTILE)('refuses %s', async (_, contentType, body, status) => {
      const started = Date.now();
      const response = await context.http.post(UPDATE).set('Content-Type', contentType).send(body);
      expect(response.status).toBe(status);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(response.text).not.toMatch(/at .*\.(js|ts):\d+|node_modules|Error:/);
    });

    it.each([
      [
        'JSON',
        'application/json',
        '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"transaction_id":1,"financetype":"Cash"}',
      ],
      [
        'XML',
        'application/xml',
        '<Transaction><__proto__><polluted>yes</polluted></__proto__><constructor><prototype><polluted>yes</polluted></prototype></constructor><toString>1</toString><hasOwnProperty>1</hasOwnProperty><transaction_id>1</transaction_id><financetype>Cash</financetype></Transaction>',
      ],
      [
        'a form',
        'application/x-www-form-urlencoded',
        '__proto__[polluted]=yes&constructor[prototype][polluted]=yes&__proto__.polluted=yes&toString=1&transaction_id=1&financetype=Cash',
      ],
    ])(
      'ignores prototype-named members in %s, and pollutes nothing',
      async (_, contentType, body) => {
        await context.http.post(UPDATE).set('Content-Type', contentType).send(body).expect(204);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false);
      },
    );

    it('leaves the service answering and the data unchanged after all of them', async () => {
      expect((await context.http.get('/api/Transaction/GetTransaction/1').expect(200)).text).toBe(
        before,
      );
    });
  },
  { BODY_LIMIT: `${LIMIT_BYTES}b` },
);

/** Bodies within the default size limit whose shape alone would make them costly to read. */
const COSTLY: Array<[string, string, string, string]> = [
  [
    'an XML body of 200,000 empty elements',
    'application/xml',
    `<Transaction>${'<a/>'.repeat(200_000)}</Transaction>`,
    'The request body holds more than 65536 elements.',
  ],
  [
    'an XML element with 50,000 attributes',
    'application/xml',
    `<Transaction${Array.from({ length: 50_000 }, (_, n) => ` a${n}=""`).join('')}/>`,
    'The request body has an element with more than 16 attributes.',
  ],
  [
    'a JSON body of 80,000 members',
    'application/json',
    `{${Array.from({ length: 80_000 }, (_, n) => `"k${n}":0`).join(',')}}`,
    'The request body holds more than 65536 members and items.',
  ],
  [
    'a JSON list of 300,000 empty records',
    'application/json',
    `{"transaction_id":1,"financetype":"Cash","requirements":[${'{},'.repeat(300_000)}{}]}`,
    'The request body holds more than 65536 members and items.',
  ],
];

describeOnEachDatabase('costly request bodies within the size limit', (context) => {
  let before: string;

  beforeAll(async () => {
    await context.running.seed({ requirements: CATALOGUE, transactions: [transactionRecord(1)] });
    before = (await context.http.get('/api/Transaction/GetTransaction/1').expect(200)).text;
  });

  it.each(COSTLY)('refuses %s as past a quota, quickly', async (_, contentType, body, reason) => {
    const started = Date.now();
    const response = await context.http
      .post(UPDATE)
      .set('Content-Type', contentType)
      .set('Accept', 'application/json')
      .send(body)
      .expect(400);
    // Over the wire and through the test's own client; the body alone costs far less.
    expect(Date.now() - started).toBeLessThan(1000);
    expect(response.body).toMatchObject({
      Message: 'The request is invalid.',
      ModelState: { transaction: [reason] },
    });
  });

  it('leaves the data unchanged', async () => {
    expect((await context.http.get('/api/Transaction/GetTransaction/1').expect(200)).text).toBe(
      before,
    );
  });
});

/** Sends bytes as they are, and resolves with all the service sent back once it closes the connection. */
function exchangeBytes(baseUrl: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

const JSON_BODY = '{"transaction_id":1,"financetype":"Cash","brokername":"Unread"}';

/** Requests Node's HTTP parser cannot read, each a status and the words its answer must say. */
const UNPARSABLE: Array<[string, string, number, RegExp]> = [
  [
    'a method in lower case',
    `post ${UPDATE} HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: ${JSON_BODY.length}\r\n\r\n${JSON_BODY}`,
    400,
    /case-sensitive/,
  ],
  ['a method HTTP does not define', `FOO ${UPDATE} HTTP/1.1\r\nHost: a\r\n\r\n`, 400, /method/],
  [
    'both Content-Length and Transfer-Encoding',
    `POST ${UPDATE} HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n${JSON_BODY.length.toString(16)}\r\n${JSON_BODY}\r\n0\r\n\r\n`,
    400,
    /must not come with Content-Length/,
  ],
  [
    'Transfer-Encoding before Content-Length',
    `POST ${UPDATE} HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n${JSON_BODY.length.toString(16)}\r\n${JSON_BODY}\r\n0\r\n\r\n`,
    400,
    /must not come with Transfer-Encoding/,
  ],
  [
    'a Transfer-Encoding that does not end in chunked',
    `POST ${UPDATE} HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip\r\n\r\n${JSON_BODY}`,
    400,
    /must end in chunked/,
  ],
  [
    'a head past the size Node reads',
    `GET /api/Requirement/GetRequirements HTTP/1.1\r\nHost: a\r\nX-Padding: ${'p'.repeat(20_000)}\r\n\r\n`,
    431,
    /head is larger/,
  ],
  ['a request line that is not HTTP', 'HELLO\r\n\r\n', 400, /not one HTTP defines/],
  [
    'a Content-Length that is not a number',
    `POST ${UPDATE} HTTP/1.1\r\nHost: a\r\nContent-Length: 5x\r\n\r\n`,
    400,
    /must be one number/,
  ],
];

describeOnSqlite("requests Node's HTTP parser refuses", (context) => {
  beforeAll(async () => {
    await context.running.seed({ requirements: CATALOGUE, transactions: [transactionRecord(1)] });
  });

  it.each(UNPARSABLE)(
    'answers %s with a JSON error saying why, and closes the connection',
    async (_, bytes, status, says) => {
      const answer = await exchangeBytes(context.running.baseUrl, bytes);
      const [head, body] = answer.split('\r\n\r\n');
      expect(head).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(head).toMatch(/\r\nContent-Type: application\/json; charset=utf-8\r\n/);
      expect(head).toMatch(/\r\nConnection: close(\r\n|$)/);
      expectNoLeak(body);
      const error = JSON.parse(body) as { Message: string; status: number };
      expect(error.status).toBe(status);
      expect(error.Message).toMatch(says);
    },
  );

  it('changes nothing, and goes on answering', async () => {
    const stored = (await context.http.get('/api/Transaction/GetTransaction/1').expect(200))
      .body as { brokername: string | null };
    expect(stored.brokername).not.toBe('Unread');
  });
});
