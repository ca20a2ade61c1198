import { execFile } from 'node:child_process';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { REPO_ROOT } from './support/processes';
import { RunningApp } from './support/test-app';

/**
 * Clients as a client team generates them from the document the service serves, each with its
 * generator's own command, compiled under strict tsc with the generated code and run against a
 * listening service. Nothing generated is committed: it all lives in a scratch directory here.
 */
const SCRATCH = join(REPO_ROOT, 'node_modules', '.cache', 'generated-clients');

const execute = promisify(execFile);

/** The transactions a consumer program works on: each client has its own, so neither sees the other's changes. */
interface Ids {
  updated: number;
  invalid: number;
  locked: number;
  stale: number;
}

/** What the test hands a consumer program (its one argument, as JSON): Input in HARNESS. */
interface Input {
  baseUrl: string;
  ids: Ids;
}

/** What a consumer program printed: the name of each of its calls, with what that call observed. */
type Observed = Record<string, unknown>;

interface GeneratedClient {
  name: string;
  /** Its folder in the scratch directory. */
  folder: string;
  /** First of the transaction ids seeded for this client. */
  firstId: number;
  /** Runs the generator's command on `document` (a file in `directory`), writing into `directory`. */
  generate(directory: string, document: string): Promise<unknown>;
  /** The consumer program, consumer.ts beside the generated code. */
  consumer: string;
}

/**
 * The part both consumer programs share, written beside each as harness.ts: reads the input, runs
 * the calls one after the other (later ones may depend on earlier ones' changes), and prints what
 * each observed as one JSON document. A new operation is one more entry in each program's calls.
 */
const HARNESS = `export interface Input {
  baseUrl: string;
  ids: { updated: number; invalid: number; locked: number; stale: number };
}

export const input = JSON.parse(process.argv[2] ?? '{}') as Input;

export async function runCalls(calls: Record<string, () => Promise<unknown>>): Promise<void> {
  const observed: Record<string, unknown> = {};
  for (const [name, call] of Object.entries(calls)) observed[name] = await call();
  process.stdout.write(JSON.stringify(observed));
}
`;

const OPENAPI_FETCH: GeneratedClient = {
  name: 'openapi-typescript + openapi-fetch',
  folder: 'openapi-fetch',
  firstId: 1000,
  generate: (directory, document) =>
    execute(process.execPath, [
      join(REPO_ROOT, 'node_modules', 'openapi-typescript', 'bin', 'cli.js'),
      document,
      '--output',
      join(directory, 'schema.ts'),
    ]),
  consumer: `import createClient from 'openapi-fetch';
import type { components, paths } from './schema';
import { input, runCalls } from './harness';

type UpdateAgentsBody = components['schemas']['UpdateAgentsTransaction'];

const client = createClient<paths>({ baseUrl: input.baseUrl });
const { ids } = input;

async function readTransaction(transaction_id: number) {
  const { data, response } = await client.GET('/api/Transaction/GetTransaction/{transaction_id}', {
    params: { path: { transaction_id } },
  });
  return { data, etag: response.headers.get('ETag') ?? '' };
}

function updateAgents(body: UpdateAgentsBody, ifMatch?: string) {
  return client.POST('/api/Transaction/UpdateAgents', {
    params: { header: ifMatch === undefined ? {} : { 'If-Match': ifMatch } },
    body,
  });
}

void runCalls({
  async catalogue() {
    const first = await client.GET('/api/Requirement/GetRequirements');
    const etag = first.response.headers.get('ETag') ?? '';
    // If-None-Match is no parameter of the document: sent as a plain header.
    const second = await client.GET('/api/Requirement/GetRequirements', {
      headers: { 'If-None-Match': etag },
    });
    return {
      status: first.response.status,
      etag,
      types: first.data?.map((type) => ({
        id: type.requirement_type_id,
        description: type.description,
        records: type.Acquisition?.map((record) => record.requirement_description),
      })),
      revalidated: second.response.status,
    };
  },

  async updateAgents() {
    const before = await readTransaction(ids.updated);
    const update = await updateAgents(
      { transaction_id: ids.updated, financetype: 'Cash', brokerid: 12, brokername: 'Lourdes Bautista' },
      before.etag,
    );
    const after = await readTransaction(ids.updated);
    const history = await client.GET('/api/Transaction/GetAgentHistory/{transaction_id}', {
      params: { path: { transaction_id: ids.updated } },
    });
    return {
      status: update.response.status,
      broker: { id: after.data?.brokerid, name: after.data?.brokername },
      changed: history.data?.at(-1)?.changes?.map((change) => change.field),
    };
  },

  async invalid() {
    // The types refuse this body (no financetype); a client sending it anyway reads ModelState.
    const body = { transaction_id: ids.invalid, loanterm: 101 } as unknown as UpdateAgentsBody;
    const { error, response } = await updateAgents(body);
    return { status: response.status, message: error?.Message, modelState: error?.ModelState };
  },

  async locked() {
    const { error, response } = await updateAgents({ transaction_id: ids.locked, financetype: 'Cash', brokerid: 9 });
    return { status: response.status, message: error?.Message };
  },

  async stale() {
    const { etag } = await readTransaction(ids.stale);
    await updateAgents({ transaction_id: ids.stale, financetype: 'Cash', brokerid: 13 });
    const { error, response } = await updateAgents({ transaction_id: ids.stale, financetype: 'Cash', brokerid: 14 }, etag);
    return { status: response.status, message: error?.Message };
  },

  async listTransactions() {
    const { data, response } = await client.GET('/api/Transaction/ListTransactions', {
      params: { query: { limit: 2 } },
    });
    return {
      status: response.status,
      ids: data?.transactions?.map((transaction) => transaction.transaction_id),
      nextCursor: data?.next_cursor,
      link: response.headers.get('Link'),
    };
  },

  async health() {
    const live = await client.GET('/health/live');
    const ready = await client.GET('/health/ready');
    return { live: live.response.status, ready: ready.response.status };
  },
});

/** Compiled, never run: each line must be refused by the generated types. */
export async function refusedByTheTypes(): Promise<void> {
  // @ts-expect-error financetype is required
  await updateAgents({ transaction_id: 1 });
  // @ts-expect-error brokerid is an integer, not text
  await updateAgents({ transaction_id: 1, financetype: 'Cash', brokerid: '12' });
  // @ts-expect-error transaction_id is a path parameter the call must give
  await client.GET('/api/Transaction/GetTransaction/{transaction_id}', {});
  const { data } = await client.GET('/api/Requirement/GetRequirements');
  // @ts-expect-error a description is text
  const description: number | null | undefined = data?.[0]?.description;
  // @ts-expect-error a 409's body has a Message, not a message
  const message: string | undefined = (await updateAgents({ transaction_id: 1, financetype: 'Cash' })).error?.message;
  void [description, message];
}
`,
};

const HEY_API: GeneratedClient = {
  name: '@hey-api/openapi-ts (client-fetch, SDK)',
  folder: 'hey-api',
  firstId: 2000,
  generate: (directory, document) =>
    execute(
      process.execPath,
      [
        join(REPO_ROOT, 'node_modules', '@hey-api', 'openapi-ts', 'bin', 'run.js'),
        '--input',
        document,
        '--output',
        join(directory, 'client'),
        '--client',
        '@hey-api/client-fetch',
        // Its default plugins: types and SDK functions. No log file: it would land in the repository.
        '--no-log-file',
        '--silent',
      ],
      { cwd: directory },
    ),
  consumer: `import {
  getAgentHistory,
  getRequirements,
  getTransaction,
  listTransactions,
  live,
  ready,
  updateAgents,
  type UpdateAgentsTransaction,
} from './client';
import { client } from './client/client.gen';
import { input, runCalls } from './harness';

client.setConfig({ baseUrl: input.baseUrl });
const { ids } = input;

// Every result's response is optional in this client's types: absent when fetch itself failed.

async function readTransaction(transaction_id: number) {
  const { data, response } = await getTransaction({ path: { transaction_id } });
  return { data, etag: response?.headers.get('ETag') ?? '' };
}

function update(body: UpdateAgentsTransaction, ifMatch?: string) {
  return updateAgents({ body, headers: ifMatch === undefined ? {} : { 'If-Match': ifMatch } });
}

void runCalls({
  async catalogue() {
    const first = await getRequirements();
    const etag = first.response?.headers.get('ETag') ?? '';
    // If-None-Match is no parameter of the document: sent as a plain header.
    const second = await getRequirements({ headers: { 'If-None-Match': etag } });
    return {
      status: first.response?.status,
      etag,
      types: first.data?.map((type) => ({
        id: type.requirement_type_id,
        description: type.description,
        records: type.Acquisition?.map((record) => record.requirement_description),
      })),
      revalidated: second.response?.status,
    };
  },

  async updateAgents() {
    const before = await readTransaction(ids.updated);
    const result = await update(
      { transaction_id: ids.updated, financetype: 'Cash', brokerid: 12, brokername: 'Lourdes Bautista' },
      before.etag,
    );
    const after = await readTransaction(ids.updated);
    const history = await getAgentHistory({ path: { transaction_id: ids.updated } });
    return {
      status: result.response?.status,
      broker: { id: after.data?.brokerid, name: after.data?.brokername },
      changed: history.data?.at(-1)?.changes?.map((change) => change.field),
    };
  },

  async invalid() {
    // The types refuse this body (no financetype); a client sending it anyway reads ModelState.
    const body = { transaction_id: ids.invalid, loanterm: 101 } as unknown as UpdateAgentsTransaction;
    const { error, response } = await update(body);
    return { status: response?.status, message: error?.Message, modelState: error?.ModelState };
  },

  async locked() {
    const { error, response } = await update({ transaction_id: ids.locked, financetype: 'Cash', brokerid: 9 });
    return { status: response?.status, message: error?.Message };
  },

  async stale() {
    const { etag } = await readTransaction(ids.stale);
    await update({ transaction_id: ids.stale, financetype: 'Cash', brokerid: 13 });
    const { error, response } = await update({ transaction_id: ids.stale, financetype: 'Cash', brokerid: 14 }, etag);
    return { status: response?.status, message: error?.Message };
  },

  async listTransactions() {
    const { data, response } = await listTransactions({ query: { limit: 2 } });
    return {
      status: response?.status,
      ids: data?.transactions?.map((transaction) => transaction.transaction_id),
      nextCursor: data?.next_cursor,
      link: response?.headers.get('Link'),
    };
  },

  async health() {
    return { live: (await live()).response?.status, ready: (await ready()).response?.status };
  },
});

/** Compiled, never run: each line must be refused by the generated types. */
export async function refusedByTheTypes(): Promise<void> {
  // @ts-expect-error financetype is required
  await update({ transaction_id: 1 });
  // @ts-expect-error brokerid is an integer, not text
  await update({ transaction_id: 1, financetype: 'Cash', brokerid: '12' });
  // @ts-expect-error transaction_id is a path parameter the call must give
  await getTransaction({});
  const { data } = await getRequirements();
  // @ts-expect-error a description is text
  const description: number | null | undefined = data?.[0]?.description;
  // @ts-expect-error a 409's body has a Message, not a message
  const message: string | undefined = (await update({ transaction_id: 1, financetype: 'Cash' })).error?.message;
  void [description, message];
}
`,
};

const CLIENTS: readonly GeneratedClient[] = [OPENAPI_FETCH, HEY_API];

const idsOf = ({ firstId }: GeneratedClient): Ids => ({
  updated: firstId + 1,
  invalid: firstId + 2,
  locked: firstId + 3,
  stale: firstId + 4,
});

/** Strict, as a client team's tsconfig; CommonJS so the output runs under plain node. */
const COMPILER_OPTIONS: ts.CompilerOptions = {
  strict: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
  types: ['node'],
  skipLibCheck: true,
};

/**
 * Type-checks every TypeScript file in `directory`, the generated code included, and emits them as
 * CommonJS into `directory`/out (the package.json written there makes NodeNext choose CommonJS,
 * extensionless imports included); then runs `entry` under node with `input` and reads what it
 * printed. Both clients go through here.
 */
async function compileAndRun(
  directory: string,
  entry: string,
  input: Input,
): Promise<{ diagnostics: string[]; observed: Observed }> {
  const outDir = join(directory, 'out');
  // All of them as roots: TypeScript checks but never emits a file it reached by an import under a
  // node_modules folder, and this scratch directory is one.
  const files = (await readdir(directory, { recursive: true }))
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(directory, file));
  const program = ts.createProgram(files, {
    ...COMPILER_OPTIONS,
    rootDir: directory,
    outDir,
  });
  const diagnostics = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    if (!diagnostic.file || diagnostic.start === undefined) return message;
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    return `${relative(directory, diagnostic.file.fileName)}:${line + 1}: ${message}`;
  });
  program.emit();
  const { stdout } = await execute(process.execPath, [
    join(outDir, entry.replace(/\.ts$/, '.js')),
    JSON.stringify(input),
  ]);
  return { diagnostics, observed: JSON.parse(stdout) as Observed };
}

describe('generated clients, compiled under strict tsc, calling the service', () => {
  let running: RunningApp;
  let document: string;

  beforeAll(async () => {
    running = await RunningApp.start('sqlite::memory:');
    await running.seed({
      requirements: CATALOGUE,
      transactions: CLIENTS.map(idsOf).flatMap(({ updated, invalid, locked, stale }) => [
        transactionRecord(updated),
        transactionRecord(invalid),
        transactionRecord(locked, { locked: true, status: 'Closed' }),
        transactionRecord(stale),
      ]),
    });
    // Exactly the bytes the service serves, as a client team fetches them.
    document = (await running.http.get('/swagger-json').expect(200)).text;
    await rm(SCRATCH, { recursive: true, force: true });
  });

  afterAll(async () => {
    await running?.close();
    await rm(SCRATCH, { recursive: true, force: true });
  });

  describe.each(CLIENTS)('$name', (client) => {
    const ids = idsOf(client);
    let diagnostics: string[];
    let observed: Observed;

    beforeAll(async () => {
      const directory = join(SCRATCH, client.folder);
      await mkdir(directory, { recursive: true });
      await writeFile(join(directory, 'package.json'), '{ "type": "commonjs" }\n');
      await writeFile(join(directory, 'openapi.json'), document);
      await client.generate(directory, join(directory, 'openapi.json'));
      await writeFile(join(directory, 'harness.ts'), HARNESS);
      await writeFile(join(directory, 'consumer.ts'), client.consumer);
      ({ diagnostics, observed } = await compileAndRun(directory, 'consumer.ts', {
        baseUrl: running.baseUrl,
        ids,
      }));
    });

    it('compiles with its generated code under strict tsc, refusing what the types forbid', () => {
      // An unused @ts-expect-error is a diagnostic too: each refused line really is refused.
      expect(diagnostics).toEqual([]);
    });

    it('reads the catalogue with typed members, then gets 304 for If-None-Match with its ETag', () => {
      expect(observed.catalogue).toEqual({
        status: 200,
        etag: expect.stringMatching(/^"[^"]+"$/),
        types: CATALOGUE.map((type) => ({
          id: type.requirement_type_id,
          description: type.description,
          records: type.Acquisition.map((record) => record.requirement_description),
        })),
        revalidated: 304,
      });
    });

    it('updates the agents with If-Match; GetTransaction and GetAgentHistory show the new broker', () => {
      expect(observed.updateAgents).toEqual({
        status: 204,
        broker: { id: 12, name: 'Lourdes Bautista' },
        changed: ['brokerid', 'brokername'],
      });
    });

    it('reads a 400 through the typed error: its Message and ModelState', () => {
      expect(observed.invalid).toEqual({
        status: 400,
        message: 'The request is invalid.',
        modelState: {
          'transaction.financetype': ['The financetype field is required.'],
          'transaction.loanterm': ['The field loanterm must be between 1 and 100.'],
        },
      });
    });

    it('reads a 409 on a locked transaction with its Message', () => {
      expect(observed.locked).toEqual({
        status: 409,
        message: `Transaction ${ids.locked} is locked; its agents cannot be changed.`,
      });
    });

    it('reads a 412 for a stale If-Match with its Message', () => {
      expect(observed.stale).toEqual({
        status: 412,
        message: `Transaction ${ids.stale} has changed since it was read; read it again and retry.`,
      });
    });

    it('reads the first page of ListTransactions, with the cursor of the next', () => {
      expect(observed.listTransactions).toEqual({
        status: 200,
        // In transaction_id order: the two lowest ids seeded.
        ids: [OPENAPI_FETCH.firstId + 1, OPENAPI_FETCH.firstId + 2],
        nextCursor: expect.any(String),
        link: expect.stringMatching(/^<[^>]*[?&]cursor=[^>]+>; rel="next"$/),
      });
    });

    it('calls the health probes', () => {
      expect(observed.health).toEqual({ live: 200, ready: 200 });
    });
  });
});
