import { once } from 'node:events';
import { Agent, request as httpRequest } from 'node:http';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { UpdateAgentsDto } from '../src/transaction/dto/update-agents.dto';
import { wireModelOf } from '../src/wire';
import { apiKeysVariable } from './support/auth-credentials';
import { encodeForm, encodeXml } from './support/client-encoding';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { type ImportRead } from './support/import-reading-thread';
import {
  REPO_ROOT,
  type ServiceProcess,
  startOnNewSqlite,
  TemporaryDirectories,
} from './support/processes';
import { describeOnSqlite, relayIdle, type SuiteContext } from './support/test-app';

/**
 * Every reader of untrusted text costs time linear in its input, whatever the input: each shape an
 * attacker would try is sent at two sizes, n and 4n, and the larger may cost at most SLOWEST_RATIO
 * times the smaller (linear: 4; quadratic: 16). A ratio in one run, not an absolute time, so a slow
 * or busy machine does not decide it. Reading values is the codecs' work, before any database: the
 * suite runs on the embedded SQLite alone.
 *
 * The reacting test module's work is kept out of what is timed: each measure starts once the relay is
 * idle (the seed's recomputation done, the splits of the one change a case makes committed), and
 * the relay does not look for other instances' commits meanwhile (there are none): a look every
 * EVENTS_POLL_MS (500 ms by default) is about a millisecond of this process's time, at random in a
 * timed window.
 */
const SLOWEST_RATIO = 6;
/** The relay wakes for this process's commits alone. */
const QUIET_RELAY = { EVENTS_POLL_MS: '60000' };
/** Each size is sent this many times, alternating, and its fastest answer counts: noise only adds. */
const ROUNDS = 3;
const ATTEMPTS = 3;

const UPDATE = '/api/Transaction/UpdateAgents';
/** A body refused on one value, for what is not about the body. */
const BRIEF_BODY = '{"transaction_id":1,"financetype":"Cash","brokerid":"1 1"}';
const JSON_TYPES = ['application/json', 'text/json'];
const XML_TYPES = ['application/xml', 'text/xml'];
const FORM = 'application/x-www-form-urlencoded';

/** n for nesting: 4n of members 199 levels deep stays within the element quota of 65,536. */
const NESTED_N = 30_000;
/** Lengths in a URL or a header: 4n stays inside Node.js's 16 kB of headers. */
const HEADER_LENGTH = 3 * 1024;
/** A file the import reads: no size limit there, so the sizes are those of a large record. */
const FILE_VALUE_LENGTH = 64 * 1024;

const repeat = (unit: string, length: number) =>
  unit.repeat(Math.max(1, Math.floor(length / unit.length)));

/** A value of about `n` characters, in the shape an attacker would send. */
interface ValueShape {
  readonly title: string;
  readonly value: (n: number) => string;
}

const SHAPES: Readonly<Record<string, readonly ValueShape[]>> = {
  int: [
    { title: 'white space inside', value: (n) => `1${repeat(' ', n)}1` },
    { title: 'mixed white space inside', value: (n) => `1${repeat(' \t\n', n)}1` },
    { title: 'white space around', value: (n) => `${repeat(' ', n / 2)}1${repeat(' ', n / 2)}` },
    { title: 'a long digit run', value: (n) => repeat('1', n) },
    { title: 'leading zeros', value: (n) => `${repeat('0', n)}1` },
    { title: 'repeated signs', value: (n) => `${repeat('-', n)}1` },
    { title: 'a long hexadecimal run', value: (n) => `0x${repeat('f', n)}` },
  ],
  decimal: [
    { title: 'white space inside', value: (n) => `1${repeat(' ', n)}.5` },
    { title: 'repeated thousands separators', value: (n) => repeat('1,', n) },
    { title: 'long digit runs', value: (n) => `${repeat('1', n / 2)}.${repeat('1', n / 2)}` },
    { title: 'a long exponent', value: (n) => `1e${repeat('9', n)}` },
    { title: 'repeated points', value: (n) => repeat('.', n) },
    { title: 'digits then a bad suffix', value: (n) => `${repeat('1', n)}x` },
  ],
  boolean: [
    { title: 'white space inside', value: (n) => `t${repeat(' ', n)}rue` },
    { title: 'white space then a bad suffix', value: (n) => `true${repeat(' ', n)}x` },
  ],
  date: [
    { title: 'white space inside', value: (n) => `2020-01-01${repeat(' ', n)}x` },
    { title: 'repeated times', value: (n) => repeat('1:1 ', n) },
    { title: 'repeated separators', value: (n) => repeat('2020/', n) },
    { title: 'a long Microsoft date', value: (n) => `/Date(${repeat('1', n)})/` },
    { title: 'a long fraction', value: (n) => `2020-01-01T00:00:00.${repeat('1', n)}` },
  ],
  text: [
    { title: 'white space alone', value: (n) => repeat(' ', n) },
    { title: 'next-line characters alone', value: (n) => repeat('\u0085', n) },
    { title: 'words', value: (n) => repeat('ab ', n) },
  ],
};

/** Where each kind is sent: a member of UpdateAgents' Transaction, or of its list's first item. */
const MEMBERS: ReadonlyArray<readonly [kind: string, member: string, inList: boolean]> = [
  ['int', 'brokerid', false],
  ['decimal', 'interestrate', false],
  ['boolean', 'reservation_paid', false],
  ['date', 'reservationdate', false],
  ['text', 'financetype', false],
  ['int', 'requirement_id', true],
  ['boolean', 'submitted', true],
  ['date', 'stamp', true],
];

const MODEL = wireModelOf(UpdateAgentsDto);

function updateRecord(member: string, inList: boolean, value: string): Record<string, unknown> {
  const base = { transaction_id: 1, financetype: 'Cash' };
  return inList
    ? { ...base, requirements: [{ requirement_type_id: 1, [member]: value }] }
    : { ...base, [member]: value };
}

interface Body {
  readonly contentType: string;
  readonly text: string;
}

function bodyOf(contentType: string, record: Record<string, unknown>): Body {
  if (contentType === FORM) return { contentType, text: encodeForm(record, MODEL) };
  if (XML_TYPES.includes(contentType)) return { contentType, text: encodeXml(record, MODEL) };
  return { contentType, text: JSON.stringify(record) };
}

/** A JSON numeral of about `n` digits, written unquoted: the reader of numbers, not of strings. */
const NUMERALS: readonly ValueShape[] = [
  { title: 'a long integer numeral', value: (n) => repeat('1', n) },
  { title: 'a long fraction numeral', value: (n) => `0.${repeat('0', n)}1` },
  { title: 'a long exponent numeral', value: (n) => `1e${repeat('9', n)}` },
  { title: 'a long hexadecimal numeral', value: (n) => `0x${repeat('f', n)}` },
];

/**
 * Whole bodies of about `n` characters whose structure, not one value, is the attack. Nesting is sized
 * to stay within the element quota at 4n, so both sizes are read to the end.
 */
const STRUCTURES: ReadonlyArray<
  readonly [title: string, contentType: string, (n: number) => string, largestN?: number]
> = [
  [
    'deep but allowed nesting, repeated',
    'application/json',
    (n) =>
      `{"transaction_id":1,"financetype":"Cash",${Array.from(
        { length: Math.max(1, Math.floor(n / 400)) },
        (_, i) => `"x${i}":${'['.repeat(199)}${']'.repeat(199)}`,
      ).join(',')}}`,
    NESTED_N,
  ],
  [
    'white space between tokens',
    'application/json',
    (n) => `{${repeat(' ', n)}"transaction_id":1,"financetype":"Cash"${repeat('\n', n)}}`,
  ],
  ['a long member name', 'application/json', (n) => `{"${repeat('a', n)}":1}`],
  ['repeated separators', 'application/json', (n) => `{"transaction_id":1${repeat(',', n)}}`],
  ['an unclosed comment', 'application/json', (n) => `{/*${repeat('*', n)}`],
  [
    'deep but allowed nesting, repeated',
    'application/xml',
    (n) => `<Transaction>${repeat(`${'<a>'.repeat(200)}${'</a>'.repeat(200)}`, n)}</Transaction>`,
    NESTED_N,
  ],
  [
    'long element names',
    'application/xml',
    (n) => `<Transaction>${repeat(`<${'a'.repeat(1000)}/>`, n)}</Transaction>`,
  ],
  [
    'long names of underscores',
    'application/xml',
    (n) =>
      `<Transaction>${repeat(`<${repeat('_x', 1000)}>1</${repeat('_x', 1000)}>`, n)}</Transaction>`,
  ],
  [
    'white space between elements',
    'application/xml',
    (n) => `<Transaction>${repeat(' ', n)}<financetype>Cash</financetype></Transaction>`,
  ],
  ['an unclosed comment', 'application/xml', (n) => `<Transaction><!--${repeat('-', n)}`],
  [
    'an XML declaration of repeated encodings',
    'application/xml',
    (n) => `<?xml version="1.0" ${repeat('encoding="a', n)}?><Transaction/>`,
  ],
  [
    'many long form keys',
    FORM,
    (n) =>
      Array.from(
        { length: 1000 },
        (_, i) => `${'k'.repeat(Math.max(1, Math.floor(n / 1000)))}${i}=1`,
      ).join('&'),
  ],
  ['repeated separators', FORM, (n) => `transaction_id=1${repeat('&', n)}`],
  ['repeated equals signs', FORM, (n) => `transaction_id=1&financetype${repeat('=', n)}`],
  ['long list indexes', FORM, (n) => `requirements[${repeat('0', n)}][requirement_id]=1`],
  ['repeated brackets', FORM, (n) => `requirements${repeat('[', n)}=1`],
  ['repeated escapes', FORM, (n) => `transaction_id=1&financetype=${repeat('%20', n)}`],
];

/** The service, asked over one keep-alive connection so that connecting is not what is timed. */
class TimedClient {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 1 });

  constructor(private readonly baseUrl: string) {}

  /** The status and the milliseconds from sending to the last byte of the answer. */
  send(
    path: string,
    {
      method = 'GET',
      headers = {},
      body,
    }: { method?: string; headers?: Record<string, string>; body?: string },
  ): Promise<{ status: number; ms: number; text: string }> {
    return new Promise((resolve, reject) => {
      const started = performance.now();
      const outgoing = httpRequest(
        new URL(path, this.baseUrl),
        { method, headers: { Accept: 'application/json', ...headers }, agent: this.agent },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({
              status: response.statusCode!,
              ms: performance.now() - started,
              text: Buffer.concat(chunks).toString(),
            }),
          );
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

interface Cost {
  readonly smallMs: number;
  readonly largeMs: number;
  readonly ratio: number;
}

/**
 * The fastest of ROUNDS runs at each size, alternating, after one run of each to warm up and
 * `settled` (what the warm-up set off in the background is done). Noise only ever slows a run: a
 * ratio past the bound is measured again, up to ATTEMPTS times, and the best attempt counts. A reader
 * that is not linear is past it every time.
 */
async function costRatio(
  run: (n: number) => Promise<number>,
  n: number,
  settled: () => Promise<void>,
): Promise<Cost> {
  let best: Cost | undefined;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    await run(n);
    await run(4 * n);
    await settled();
    const small: number[] = [];
    const large: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      small.push(await run(n));
      large.push(await run(4 * n));
    }
    const smallMs = Math.min(...small);
    const largeMs = Math.min(...large);
    const cost = { smallMs, largeMs, ratio: largeMs / smallMs };
    if (!best || cost.ratio < best.ratio) best = cost;
    if (best.ratio <= SLOWEST_RATIO) break;
  }
  return best!;
}

function expectLinear(cost: Cost, what: string) {
  // The figures are in the failure's message, for whoever looks into it.
  expect({ what, ...cost, linear: cost.ratio <= SLOWEST_RATIO }).toEqual({
    what,
    ...cost,
    linear: true,
  });
}

describeOnSqlite(
  'reading untrusted input costs time linear in its size',
  (context: SuiteContext) => {
    const directories = new TemporaryDirectories('input-cost');
    let client: TimedClient;
    const settled = () => relayIdle(context.running);

    beforeAll(async () => {
      await context.running.seed({ requirements: CATALOGUE, transactions: [transactionRecord(1)] });
      client = new TimedClient(context.running.baseUrl);
    });
    afterAll(async () => {
      client.close();
      await directories.removeAll();
    });

    /**
     * Posts the body at n and 4n, with n as large as lets 4n fit in BODY_LIMIT (or `largestN`), so that
     * reading, not the round trip, is what is timed; every answer is the same 2xx or 4xx.
     */
    async function postCost(contentType: string, encode: (n: number) => string, largestN?: number) {
      // Each size is encoded once: encoding a body of a megabyte costs as much as reading it.
      const bodies = new Map<number, string>();
      const bodyAt = (n: number) => bodies.get(n) ?? bodies.set(n, encode(n)).get(n)!;
      const bytes = (n: number) => Buffer.byteLength(bodyAt(n));
      const perUnit = (bytes(200_000) - bytes(100_000)) / 100_000;
      const room = 0.95 * context.running.config.bodyLimitBytes - bytes(0);
      const n = Math.min(Math.floor(room / (4 * perUnit)), largestN ?? Number.POSITIVE_INFINITY);
      const statuses = new Set<number>();
      const cost = await costRatio(
        async (size) => {
          const answer = await client.send(UPDATE, {
            method: 'POST',
            headers: { 'Content-Type': contentType },
            body: bodyAt(size),
          });
          statuses.add(answer.status);
          return answer.ms;
        },
        n,
        settled,
      );
      expect([...statuses].every((status) => status < 500)).toBe(true);
      expect(statuses.size).toBe(1);
      return cost;
    }

    const valueCases = [...JSON_TYPES, ...XML_TYPES, FORM].flatMap((contentType) =>
      MEMBERS.flatMap(([kind, member, inList]) =>
        SHAPES[kind].map((shape) => ({
          contentType,
          member: inList ? `requirements[0].${member}` : member,
          title: `${kind} ${shape.title}`,
          body: (n: number) =>
            bodyOf(contentType, updateRecord(member, inList, shape.value(n))).text,
        })),
      ),
    );

    it.each(valueCases)('$contentType: $title in $member', async ({ contentType, title, body }) => {
      expectLinear(await postCost(contentType, body), `${contentType} ${title}`);
    });

    it.each(
      JSON_TYPES.flatMap((contentType) =>
        NUMERALS.map((shape) => ({ contentType, title: shape.title, shape })),
      ),
    )('$contentType: $title', async ({ contentType, title, shape }) => {
      const body = (n: number) =>
        `{"transaction_id":1,"financetype":"Cash","brokerid":${shape.value(n)},"interestrate":${shape.value(n)}}`;
      expectLinear(await postCost(contentType, body), `${contentType} ${title}`);
    });

    it.each(
      STRUCTURES.map(([title, contentType, body, largestN]) => ({
        title,
        contentType,
        body,
        largestN,
      })),
    )('$contentType: $title', async ({ title, contentType, body, largestN }) => {
      expectLinear(await postCost(contentType, body, largestN), `${contentType} ${title}`);
    });

    const QUERIES: ReadonlyArray<readonly [string, (n: number) => string]> = [
      ['an int with white space inside', (n) => `limit=1${repeat('%20', n / 3)}1`],
      ['a date with white space inside', (n) => `changed_since=2020-01-01${repeat('%20', n / 3)}x`],
      ['repeated separators', (n) => `limit=1${repeat('&', n)}`],
      ['many keys', (n) => repeat('status=a&', n)],
      ['a long cursor', (n) => `cursor=${repeat('A', n)}`],
    ];

    it.each(QUERIES.map(([title, query]) => ({ title, query })))(
      'the query string: $title',
      async ({ title, query }) => {
        const cost = await costRatio(
          async (n) => (await client.send(`/api/Transaction/ListTransactions?${query(n)}`, {})).ms,
          HEADER_LENGTH,
          settled,
        );
        expectLinear(cost, title);
      },
    );

    it.each([
      [
        'a path of trailing slashes',
        (n: number) => `/api/Transaction/GetTransaction/1${repeat('/', n)}x`,
      ],
      ['a long id', (n: number) => `/api/Transaction/GetTransaction/${repeat('1', n)}`],
    ])('the path: %s', async (title, path) => {
      const cost = await costRatio(
        async (n) => (await client.send(path(n), {})).ms,
        HEADER_LENGTH,
        settled,
      );
      expectLinear(cost, title);
    });

    /** Each header where the service reads it: a body's type on a post, a cache tag on a read. */
    const HEADERS: ReadonlyArray<readonly [string, (n: number) => Record<string, string>]> = [
      [
        'Content-Type with many parameters',
        (n) => ({ 'Content-Type': `application/json${repeat('; a=b', n)}` }),
      ],
      [
        'Content-Type with white space inside',
        (n) => ({ 'Content-Type': `application/json${repeat(' ', n)};charset=utf-8` }),
      ],
      ['Accept with many ranges', (n) => ({ Accept: repeat('application/xml;q=0.5, ', n) })],
      ['If-None-Match with many tags', (n) => ({ 'If-None-Match': repeat('"x", ', n) })],
      ['a long X-Request-Id', (n) => ({ 'X-Request-Id': repeat('a', n) })],
      ['a long traceparent', (n) => ({ traceparent: `00-${repeat('1', n)}-01` })],
    ];

    it.each(HEADERS.map(([title, headers]) => ({ title, headers })))(
      'a header: $title',
      async ({ title, headers }) => {
        const cost = await costRatio(
          async (n) => {
            const sent = headers(n);
            const answer =
              'Content-Type' in sent
                ? await client.send(UPDATE, { method: 'POST', headers: sent, body: BRIEF_BODY })
                : await client.send('/api/Transaction/GetTransaction/1', { headers: sent });
            return answer.ms;
          },
          HEADER_LENGTH,
          settled,
        );
        expectLinear(cost, title);
      },
    );

    /**
     * Measured on the built service in a process of its own, as it is deployed: in this process the
     * test runner's own heap, grown over the whole run, would make the pauses.
     */
    describe('the largest body the service reads, at BODY_LIMIT', () => {
      /** How long `/health/live` may wait, sent every 10 ms while the body is read. */
      const HEALTH_BOUND_MS = 250;
      let service: ServiceProcess;
      beforeAll(async () => {
        service = await startOnNewSqlite(await directories.make(), {
          LOG_LEVEL: 'warn',
          ...QUIET_RELAY,
        });
        // The reacting module's recomputation of the demo data, done before a body is read.
        await relayIdle(service);
      });
      afterAll(() => service?.stop());

      it.each([...JSON_TYPES, ...XML_TYPES, FORM])(
        '%s: an int of white space inside, answered 400 while /health/live stays answered',
        async (contentType) => {
          const limit = context.running.config.bodyLimitBytes;
          const envelope = bodyOf(contentType, updateRecord('brokerid', false, '1')).text.length;
          // A space is one byte in each format: a form writes it `+`.
          const spaces = limit - envelope - 1;
          const body = bodyOf(
            contentType,
            updateRecord('brokerid', false, `1${' '.repeat(spaces)}1`),
          ).text;
          expect(Buffer.byteLength(body)).toBe(limit);

          const health = new TimedClient(service.baseUrl);
          const reader = new TimedClient(service.baseUrl);
          const healthMs: number[] = [];
          let reading = true;
          const polling = (async () => {
            while (reading) {
              healthMs.push((await health.send('/health/live', {})).ms);
              await new Promise((resolve) => setTimeout(resolve, 10));
            }
          })();
          const answer = await reader.send(UPDATE, {
            method: 'POST',
            headers: { 'Content-Type': contentType },
            body,
          });
          reading = false;
          await polling;
          health.close();
          reader.close();

          const slowestHealthMs = Math.max(...healthMs);
          // The figures are in the failure's message.
          expect({
            status: answer.status,
            reported: answer.text.includes('brokerid'),
            slowestHealthMs,
            healthAnswered: slowestHealthMs < HEALTH_BOUND_MS,
          }).toEqual({ status: 400, reported: true, slowestHealthMs, healthAnswered: true });
        },
      );
    });

    describe('import files', () => {
      let directory: string;
      let files = 0;
      let reader: Worker;
      beforeAll(async () => {
        directory = await directories.make();
        reader = new Worker(join(REPO_ROOT, 'dist', 'test', 'support', 'import-reading-thread.js'));
      });
      afterAll(() => reader?.terminate());

      /** Reads every record of the file in the reading thread; rejects when the thread fails. */
      async function read(path: string): Promise<ImportRead> {
        const answer = once(reader, 'message') as Promise<[ImportRead]>;
        reader.postMessage(path);
        return (await answer)[0];
      }

      /** Reads every record of a file of `n`-character values, as `npm run data:import` does. */
      async function importCost(
        extension: string,
        contents: (record: Record<string, unknown>) => string,
        member: string,
        shape: ValueShape,
      ) {
        return costRatio(
          async (n) => {
            const path = join(directory, `${files++}${extension}`);
            await writeFile(
              path,
              contents({ transaction_id: 1, financetype: 'Cash', [member]: shape.value(n) }),
            );
            const { ms, records, error } = await read(path);
            // Each record read, or the file refused with its name.
            expect(error ?? path).toContain(path);
            if (!error) expect(records).toBe(1);
            return ms;
          },
          FILE_VALUE_LENGTH,
          settled,
        );
      }

      const FILES: ReadonlyArray<readonly [string, (record: Record<string, unknown>) => string]> = [
        ['.json', (record) => JSON.stringify([record])],
        [
          '.xml',
          (record) => `<ArrayOfTransaction>${encodeXml(record, MODEL, '')}</ArrayOfTransaction>`,
        ],
        [
          '.csv',
          (record) =>
            `${Object.keys(record).join(',')}\n${Object.values(record)
              .map((value) => `"${String(value)}"`)
              .join(',')}\n`,
        ],
      ];

      it.each(
        FILES.flatMap(([extension, contents]) =>
          (['int', 'decimal', 'boolean', 'date'] as const).flatMap((kind) =>
            SHAPES[kind].map((shape) => ({
              extension,
              contents,
              member: MEMBERS.find(([memberKind]) => memberKind === kind)![1],
              title: `${kind} ${shape.title}`,
              shape,
            })),
          ),
        ),
      )('$extension: $title', async ({ extension, contents, member, title, shape }) => {
        expectLinear(await importCost(extension, contents, member, shape), `${extension} ${title}`);
      });
    });
  },
  QUIET_RELAY,
);

describeOnSqlite(
  'reading credentials costs time linear in their size',
  (context: SuiteContext) => {
    let client: TimedClient;
    beforeAll(() => (client = new TimedClient(context.running.baseUrl)));
    afterAll(() => client.close());

    it.each([
      [
        'Authorization: ApiKey with white space inside',
        (n: number) => ({ Authorization: `ApiKey ${repeat(' ', n)}a b` }),
      ],
      [
        'Authorization: ApiKey with a long key',
        (n: number) => ({ Authorization: `ApiKey ${repeat('a', n)}` }),
      ],
      [
        'Authorization: Bearer with white space inside',
        (n: number) => ({ Authorization: `Bearer a${repeat(' ', n)}b` }),
      ],
      ['a long X-Api-Key', (n: number) => ({ 'X-Api-Key': repeat('a', n) })],
    ])('%s', async (title, headers) => {
      const statuses = new Set<number>();
      const cost = await costRatio(
        async (n) => {
          const answer = await client.send('/api/Transaction/GetTransaction/1', {
            headers: headers(n),
          });
          statuses.add(answer.status);
          return answer.ms;
        },
        HEADER_LENGTH,
        () => relayIdle(context.running),
      );
      expect([...statuses]).toEqual([401]);
      expectLinear(cost, title);
    });
  },
  // Every guess is checked: no failure limit answers 429 before the header is read.
  {
    ...QUIET_RELAY,
    AUTH_MODE: 'apikey',
    AUTH_API_KEYS: apiKeysVariable({ reader: 'a-key-nobody-sends' }),
    AUTH_FAILURE_LIMIT: '0',
  },
);
