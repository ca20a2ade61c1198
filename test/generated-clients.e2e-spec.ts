import { execFile } from 'node:child_process';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { DataSource } from 'typeorm';
import ts from 'typescript';
import { apiKeyEntry } from './support/auth-credentials';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { REPO_ROOT } from './support/processes';
import { RunningApp } from './support/test-app';
import { createTestDatabase, type TestDatabase } from './support/test-database';

/**
 * Clients as a client team generates them from the document the service serves (in apikey mode: its
 * ApiKey scheme is what the clients authenticate with), each with its generator's own command on its
 * defaults, a base URL aside (and hey-api's plugin that reads dates as dates), compiled under strict
 * tsc with the generated code and run against a listening service: every operation that takes a
 * JSON body, and the reads, each answering its typed success and its typed errors (400, 403, 404,
 * 409, 412, and 503 while the database is locked). No generated file is edited, and none is
 * committed: they all live in a scratch directory.
 */
const SCRATCH = join(REPO_ROOT, 'node_modules', '.cache', 'generated-clients');

const execute = promisify(execFile);

/** The transactions a consumer program works on: each client has its own, so none sees another's changes. */
interface Ids {
  updated: number;
  invalid: number;
  locked: number;
  stale: number;
  /** Never seeded: 404. */
  missing: number;
}

/** What the test hands a consumer program (its one argument, as JSON): Input in HARNESS. */
interface Input {
  baseUrl: string;
  /** The client's own API key (every scope; the owner of its webhook), and one that may only read. */
  keys: { own: string; reader: string };
  ids: Ids;
  /** Where its webhook points: nothing listens, and no event its types select is published. */
  hookUrl: string;
  /** Whether the database is locked: the program then makes only the calls that answer 503. */
  databaseLocked: boolean;
}

/** What a consumer program printed: the name of each of its calls, with what that call observed. */
type Observed = Record<string, unknown>;

interface GeneratedClient {
  name: string;
  /** Its folder in the scratch directory, and the name of its API key (its webhook's owner). */
  folder: string;
  /** First of the transaction ids seeded for this client. */
  firstId: number;
  /** What its types make of a date-time member: a `Date` only where the generator converts it. */
  dates: 'string' | 'Date';
  /**
   * Runs the generator's command on `document` (a file in `directory`), writing into `directory`;
   * `baseUrl` for a generator that takes it at generation time rather than at run time.
   */
  generate(directory: string, document: string, baseUrl: string): Promise<unknown>;
  /** The consumer program, consumer.ts beside the generated code. */
  consumer: string;
}

/**
 * The part every consumer program shares, written beside each as harness.ts: reads the input, runs
 * the calls one after the other (later ones may depend on earlier ones' changes), and prints what
 * each observed as one JSON document. A new operation is one more entry in each program's calls.
 */
const HARNESS = `export interface Input {
  baseUrl: string;
  keys: { own: string; reader: string };
  ids: { updated: number; invalid: number; locked: number; stale: number; missing: number };
  hookUrl: string;
  databaseLocked: boolean;
}

export const input = JSON.parse(process.argv[2] ?? '{}') as Input;

/** A subscription id no webhook has. */
export const MISSING_WEBHOOK = '00000000-0000-4000-8000-000000000000';

/** The type of a date-time member as the client hands it over. */
export const typeOfDate = (value: unknown) => (value instanceof Date ? 'Date' : typeof value);

export async function runCalls(
  calls: Record<string, () => Promise<unknown>>,
  whileLocked: Record<string, () => Promise<unknown>>,
): Promise<void> {
  const observed: Record<string, unknown> = {};
  for (const [name, call] of Object.entries(input.databaseLocked ? whileLocked : calls))
    observed[name] = await call();
  process.stdout.write(JSON.stringify(observed));
}
`;

const OPENAPI_FETCH: GeneratedClient = {
  name: 'openapi-typescript + openapi-fetch',
  folder: 'openapi-fetch',
  firstId: 1000,
  dates: 'string',
  generate: (directory, document) =>
    execute(process.execPath, [
      join(REPO_ROOT, 'node_modules', 'openapi-typescript', 'bin', 'cli.js'),
      document,
      '--output',
      join(directory, 'schema.ts'),
    ]),
  consumer: `import createClient from 'openapi-fetch';
import type { components, paths } from './schema';
import { input, MISSING_WEBHOOK, runCalls, typeOfDate } from './harness';

type UpdateAgentsBody = components['schemas']['UpdateAgentsTransaction'];

const { ids, keys } = input;
const client = createClient<paths>({ baseUrl: input.baseUrl, headers: { 'X-Api-Key': keys.own } });
const reader = createClient<paths>({ baseUrl: input.baseUrl, headers: { 'X-Api-Key': keys.reader } });
let hookId = '';

async function readTransaction(transaction_id: number) {
  const { data, response } = await client.GET('/api/Transaction/GetTransaction/{transaction_id}', {
    params: { path: { transaction_id } },
  });
  return { data, etag: response.headers.get('ETag') ?? '' };
}

function updateAgents(body: UpdateAgentsBody, ifMatch?: string, caller = client) {
  return caller.POST('/api/Transaction/UpdateAgents', {
    params: { header: ifMatch === undefined ? {} : { 'If-Match': ifMatch } },
    body,
  });
}

async function failure(call: Promise<{ error?: { Message: string }; response: Response }>) {
  const { error, response } = await call;
  return { status: response.status, message: error?.Message };
}

void runCalls(
  {
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

    async transaction() {
      const { data, response } = await client.GET('/api/Transaction/GetTransaction/{transaction_id}', {
        params: { path: { transaction_id: ids.updated } },
      });
      const missing = client.GET('/api/Transaction/GetTransaction/{transaction_id}', {
        params: { path: { transaction_id: ids.missing } },
      });
      return {
        status: response.status,
        discount: data?.discount,
        stamp: typeOfDate(data?.stamp),
        missing: await failure(missing),
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

    forbidden: () =>
      failure(updateAgents({ transaction_id: ids.updated, financetype: 'Cash', brokerid: 9 }, undefined, reader)),
    unknown: () => failure(updateAgents({ transaction_id: ids.missing, financetype: 'Cash', brokerid: 9 })),
    locked: () => failure(updateAgents({ transaction_id: ids.locked, financetype: 'Cash', brokerid: 9 })),

    async stale() {
      const { etag } = await readTransaction(ids.stale);
      await updateAgents({ transaction_id: ids.stale, financetype: 'Cash', brokerid: 13 });
      return failure(updateAgents({ transaction_id: ids.stale, financetype: 'Cash', brokerid: 14 }, etag));
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

    async createWebhook() {
      const body = { url: input.hookUrl, types: ['property-sales.data.imported'], description: 'CRM' };
      const { data, response } = await client.POST('/api/Webhook/CreateWebhook', { body });
      hookId = data?.id ?? '';
      return {
        status: response.status,
        created: { owner: data?.owner, url: data?.url, status: data?.status, secret: typeof data?.secret },
        second: await failure(client.POST('/api/Webhook/CreateWebhook', { body })),
      };
    },

    async invalidWebhook() {
      const { error, response } = await client.POST('/api/Webhook/CreateWebhook', { body: { url: 'ftp://crm' } });
      return { status: response.status, message: error?.Message, modelState: error?.ModelState };
    },

    forbiddenWebhook: () => failure(reader.POST('/api/Webhook/CreateWebhook', { body: { url: input.hookUrl } })),

    async updateWebhook() {
      const { data, response } = await client.POST('/api/Webhook/UpdateWebhook/{id}', {
        params: { path: { id: hookId } },
        body: { description: 'CRM: agents' },
      });
      const missing = client.POST('/api/Webhook/UpdateWebhook/{id}', {
        params: { path: { id: MISSING_WEBHOOK } },
        body: { description: 'none' },
      });
      return { status: response.status, description: data?.description, missing: await failure(missing) };
    },

    async readWebhooks() {
      const one = await client.GET('/api/Webhook/GetWebhook/{id}', { params: { path: { id: hookId } } });
      const all = await client.GET('/api/Webhook/ListWebhooks');
      return {
        status: one.response.status,
        description: one.data?.description,
        created: typeOfDate(one.data?.created_at),
        listed: all.data?.map((hook) => hook.id === hookId),
      };
    },

    async deleteWebhook() {
      const { response } = await client.DELETE('/api/Webhook/DeleteWebhook/{id}', { params: { path: { id: hookId } } });
      const after = client.GET('/api/Webhook/GetWebhook/{id}', { params: { path: { id: hookId } } });
      return { status: response.status, after: await failure(after) };
    },
  },
  {
    async unavailable() {
      const { error, response } = await updateAgents({ transaction_id: ids.updated, financetype: 'Cash', brokerid: 15 });
      return { status: response.status, message: error?.Message, retryAfter: response.headers.get('Retry-After') };
    },
  },
);

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
  // @ts-expect-error a webhook needs its url
  await client.POST('/api/Webhook/CreateWebhook', { body: { description: 'CRM' } });
  void [description, message];
}
`,
};

const HEY_API: GeneratedClient = {
  name: '@hey-api/openapi-ts (client-fetch, SDK, transformers)',
  folder: 'hey-api',
  firstId: 2000,
  // Its transformers plugin turns every member of format date-time into a Date.
  dates: 'Date',
  // Its configuration file: its default plugins, types and SDK functions, and the one that reads
  // dates as dates, which the SDK's functions apply to what they receive.
  generate: async (directory, document) => {
    const config = join(directory, 'openapi-ts.config.mjs');
    await writeFile(
      config,
      `export default {
  input: ${JSON.stringify(document)},
  output: ${JSON.stringify(join(directory, 'client'))},
  plugins: [
    '@hey-api/client-fetch',
    '@hey-api/typescript',
    { name: '@hey-api/sdk', transformer: true },
    { name: '@hey-api/transformers', dates: true },
  ],
};
`,
    );
    return execute(
      process.execPath,
      [
        join(REPO_ROOT, 'node_modules', '@hey-api', 'openapi-ts', 'bin', 'run.js'),
        '--file',
        config,
        // No log file: it would land in the repository.
        '--no-log-file',
        '--silent',
      ],
      { cwd: directory },
    );
  },
  consumer: `import {
  createWebhook,
  deleteWebhook,
  getAgentHistory,
  getRequirements,
  getTransaction,
  getWebhook,
  listTransactions,
  listWebhooks,
  live,
  ready,
  updateAgents,
  updateWebhook,
  type UpdateAgentsTransaction,
} from './client';
import { createClient, createConfig } from './client/client';
import { client } from './client/client.gen';
import { input, MISSING_WEBHOOK, runCalls, typeOfDate } from './harness';

const { ids, keys } = input;
// Its SDK functions send the key as the document's security scheme says (X-Api-Key).
client.setConfig({ baseUrl: input.baseUrl, auth: keys.own });
const reader = createClient(createConfig({ baseUrl: input.baseUrl, auth: keys.reader }));
let hookId = '';

// Every result's response is optional in this client's types: absent when fetch itself failed.

async function readTransaction(transaction_id: number) {
  const { data, response } = await getTransaction({ path: { transaction_id } });
  return { data, etag: response?.headers.get('ETag') ?? '' };
}

function update(body: UpdateAgentsTransaction, ifMatch?: string, caller = client) {
  return updateAgents({ body, client: caller, headers: ifMatch === undefined ? {} : { 'If-Match': ifMatch } });
}

async function failure(call: Promise<{ error?: { Message: string }; response?: Response }>) {
  const { error, response } = await call;
  return { status: response?.status, message: error?.Message };
}

void runCalls(
  {
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

    async transaction() {
      const { data, response } = await getTransaction({ path: { transaction_id: ids.updated } });
      return {
        status: response?.status,
        discount: data?.discount,
        stamp: typeOfDate(data?.stamp),
        missing: await failure(getTransaction({ path: { transaction_id: ids.missing } })),
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

    forbidden: () => failure(update({ transaction_id: ids.updated, financetype: 'Cash', brokerid: 9 }, undefined, reader)),
    unknown: () => failure(update({ transaction_id: ids.missing, financetype: 'Cash', brokerid: 9 })),
    locked: () => failure(update({ transaction_id: ids.locked, financetype: 'Cash', brokerid: 9 })),

    async stale() {
      const { etag } = await readTransaction(ids.stale);
      await update({ transaction_id: ids.stale, financetype: 'Cash', brokerid: 13 });
      return failure(update({ transaction_id: ids.stale, financetype: 'Cash', brokerid: 14 }, etag));
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

    async createWebhook() {
      const body = { url: input.hookUrl, types: ['property-sales.data.imported'], description: 'CRM' };
      const { data, response } = await createWebhook({ body });
      hookId = data?.id ?? '';
      return {
        status: response?.status,
        created: { owner: data?.owner, url: data?.url, status: data?.status, secret: typeof data?.secret },
        second: await failure(createWebhook({ body })),
      };
    },

    async invalidWebhook() {
      const { error, response } = await createWebhook({ body: { url: 'ftp://crm' } });
      return { status: response?.status, message: error?.Message, modelState: error?.ModelState };
    },

    forbiddenWebhook: () => failure(createWebhook({ body: { url: input.hookUrl }, client: reader })),

    async updateWebhook() {
      const { data, response } = await updateWebhook({ path: { id: hookId }, body: { description: 'CRM: agents' } });
      const missing = updateWebhook({ path: { id: MISSING_WEBHOOK }, body: { description: 'none' } });
      return { status: response?.status, description: data?.description, missing: await failure(missing) };
    },

    async readWebhooks() {
      const one = await getWebhook({ path: { id: hookId } });
      const all = await listWebhooks();
      return {
        status: one.response?.status,
        description: one.data?.description,
        created: typeOfDate(one.data?.created_at),
        listed: all.data?.map((hook) => hook.id === hookId),
      };
    },

    async deleteWebhook() {
      const { response } = await deleteWebhook({ path: { id: hookId } });
      return { status: response?.status, after: await failure(getWebhook({ path: { id: hookId } })) };
    },
  },
  {
    async unavailable() {
      const { error, response } = await update({ transaction_id: ids.updated, financetype: 'Cash', brokerid: 15 });
      return { status: response?.status, message: error?.Message, retryAfter: response?.headers.get('Retry-After') };
    },
  },
);

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
  // @ts-expect-error a webhook needs its url
  await createWebhook({ body: { description: 'CRM' } });
  void [description, message];
}
`,
};

const ORVAL: GeneratedClient = {
  name: 'orval (fetch client)',
  folder: 'orval',
  firstId: 3000,
  dates: 'string',
  // Its configuration file, where orval takes the base URL; otherwise its defaults.
  generate: async (directory, document, baseUrl) => {
    const config = join(directory, 'orval.config.mjs');
    await writeFile(
      config,
      `export default {
  service: {
    input: ${JSON.stringify(document)},
    output: { target: ${JSON.stringify(join(directory, 'client.ts'))}, client: 'fetch', baseUrl: ${JSON.stringify(baseUrl)} },
  },
};
`,
    );
    return execute(
      process.execPath,
      [join(REPO_ROOT, 'node_modules', 'orval', 'dist', 'bin', 'orval.mjs'), '--config', config],
      { cwd: directory },
    );
  },
  consumer: `import {
  createWebhook,
  deleteWebhook,
  getAgentHistory,
  getRequirements,
  getTransaction,
  getWebhook,
  listTransactions,
  listWebhooks,
  live,
  ready,
  updateAgents,
  updateWebhook,
  type LegacyError,
  type ProblemDetails,
  type UpdateAgentsBody,
} from './client';
import { input, MISSING_WEBHOOK, runCalls, typeOfDate } from './harness';

const { ids, keys } = input;
let hookId = '';

/** Its functions take fetch's own options: the key, and any header the call needs, go there. */
const as = (key: string, headers: Record<string, string> = {}) => ({ headers: { 'X-Api-Key': key, ...headers } });

/** Each answer is typed by its status: every error's body, JSON or XML, has a Message. */
const failed = (answer: { status: number; data: unknown }): answer is { status: number; data: ProblemDetails | LegacyError } =>
  answer.status >= 400;

async function readTransaction(transactionId: number) {
  const answer = await getTransaction(transactionId, as(keys.own));
  return { data: answer.status === 200 ? answer.data : undefined, etag: answer.headers.get('ETag') ?? '' };
}

function update(body: UpdateAgentsBody, ifMatch?: string, key = keys.own) {
  return updateAgents(body, as(key, ifMatch === undefined ? {} : { 'If-Match': ifMatch }));
}

/** The status and, for an error, its Message. */
async function failure(call: Promise<{ status: number; data: unknown }>) {
  const answer = await call;
  return { status: answer.status, message: failed(answer) ? answer.data.Message : undefined };
}

void runCalls(
  {
    async catalogue() {
      const first = await getRequirements(as(keys.own));
      const etag = first.headers.get('ETag') ?? '';
      // If-None-Match is no parameter of the document: sent as a plain header.
      const second = await getRequirements(as(keys.own, { 'If-None-Match': etag }));
      return {
        status: first.status,
        etag,
        types:
          first.status === 200
            ? first.data.map((type) => ({
                id: type.requirement_type_id,
                description: type.description,
                records: type.Acquisition?.map((record) => record.requirement_description),
              }))
            : undefined,
        revalidated: second.status,
      };
    },

    async transaction() {
      const answer = await getTransaction(ids.updated, as(keys.own));
      return {
        status: answer.status,
        discount: answer.status === 200 ? answer.data.discount : undefined,
        stamp: typeOfDate(answer.status === 200 ? answer.data.stamp : undefined),
        missing: await failure(getTransaction(ids.missing, as(keys.own))),
      };
    },

    async updateAgents() {
      const before = await readTransaction(ids.updated);
      const result = await update(
        { transaction_id: ids.updated, financetype: 'Cash', brokerid: 12, brokername: 'Lourdes Bautista' },
        before.etag,
      );
      const after = await readTransaction(ids.updated);
      const history = await getAgentHistory(ids.updated, as(keys.own));
      return {
        status: result.status,
        broker: { id: after.data?.brokerid, name: after.data?.brokername },
        changed: history.status === 200 ? history.data.at(-1)?.changes?.map((change) => change.field) : undefined,
      };
    },

    async invalid() {
      // The types refuse this body (no financetype); a client sending it anyway reads ModelState.
      const body = { transaction_id: ids.invalid, loanterm: 101 } as unknown as UpdateAgentsBody;
      const answer = await update(body);
      return answer.status === 400
        ? { status: answer.status, message: answer.data.Message, modelState: answer.data.ModelState }
        : { status: answer.status };
    },

    forbidden: () => failure(update({ transaction_id: ids.updated, financetype: 'Cash', brokerid: 9 }, undefined, keys.reader)),
    unknown: () => failure(update({ transaction_id: ids.missing, financetype: 'Cash', brokerid: 9 })),
    locked: () => failure(update({ transaction_id: ids.locked, financetype: 'Cash', brokerid: 9 })),

    async stale() {
      const { etag } = await readTransaction(ids.stale);
      await update({ transaction_id: ids.stale, financetype: 'Cash', brokerid: 13 });
      return failure(update({ transaction_id: ids.stale, financetype: 'Cash', brokerid: 14 }, etag));
    },

    async listTransactions() {
      const answer = await listTransactions({ limit: 2 }, as(keys.own));
      return {
        status: answer.status,
        ids: answer.status === 200 ? answer.data.transactions?.map((transaction) => transaction.transaction_id) : undefined,
        nextCursor: answer.status === 200 ? answer.data.next_cursor : undefined,
        link: answer.headers.get('Link'),
      };
    },

    async health() {
      return { live: (await live()).status, ready: (await ready()).status };
    },

    async createWebhook() {
      const body = { url: input.hookUrl, types: ['property-sales.data.imported'], description: 'CRM' };
      const answer = await createWebhook(body, as(keys.own));
      const created = answer.status === 201 ? answer.data : undefined;
      hookId = created?.id ?? '';
      return {
        status: answer.status,
        created: { owner: created?.owner, url: created?.url, status: created?.status, secret: typeof created?.secret },
        second: await failure(createWebhook(body, as(keys.own))),
      };
    },

    async invalidWebhook() {
      const answer = await createWebhook({ url: 'ftp://crm' }, as(keys.own));
      return answer.status === 400
        ? { status: answer.status, message: answer.data.Message, modelState: answer.data.ModelState }
        : { status: answer.status };
    },

    forbiddenWebhook: () => failure(createWebhook({ url: input.hookUrl }, as(keys.reader))),

    async updateWebhook() {
      const answer = await updateWebhook(hookId, { description: 'CRM: agents' }, as(keys.own));
      return {
        status: answer.status,
        description: answer.status === 200 ? answer.data.description : undefined,
        missing: await failure(updateWebhook(MISSING_WEBHOOK, { description: 'none' }, as(keys.own))),
      };
    },

    async readWebhooks() {
      const one = await getWebhook(hookId, as(keys.own));
      const all = await listWebhooks(as(keys.own));
      return {
        status: one.status,
        description: one.status === 200 ? one.data.description : undefined,
        created: typeOfDate(one.status === 200 ? one.data.created_at : undefined),
        listed: all.status === 200 ? all.data.map((hook) => hook.id === hookId) : undefined,
      };
    },

    async deleteWebhook() {
      const answer = await deleteWebhook(hookId, as(keys.own));
      return { status: answer.status, after: await failure(getWebhook(hookId, as(keys.own))) };
    },
  },
  {
    async unavailable() {
      const answer = await update({ transaction_id: ids.updated, financetype: 'Cash', brokerid: 15 });
      return {
        status: answer.status,
        message: answer.status === 503 ? answer.data.Message : undefined,
        retryAfter: answer.headers.get('Retry-After'),
      };
    },
  },
);

/** Compiled, never run: each line must be refused by the generated types. */
export async function refusedByTheTypes(): Promise<void> {
  // @ts-expect-error financetype is required
  await update({ transaction_id: 1 });
  // @ts-expect-error brokerid is an integer, not text
  await update({ transaction_id: 1, financetype: 'Cash', brokerid: '12' });
  // @ts-expect-error transaction_id is a path parameter the call must give
  await getTransaction();
  const catalogue = await getRequirements();
  // @ts-expect-error a description is text
  const description: number | null | undefined = catalogue.status === 200 ? catalogue.data[0]?.description : null;
  const locked = await update({ transaction_id: 1, financetype: 'Cash' });
  // @ts-expect-error a 409's body has a Message, not a message
  const message: string | undefined = locked.status === 409 ? locked.data.message : undefined;
  // @ts-expect-error a webhook needs its url
  await createWebhook({ description: 'CRM' });
  void [description, message];
}
`,
};

const SWAGGER_TYPESCRIPT_API: GeneratedClient = {
  name: 'swagger-typescript-api (fetch client)',
  folder: 'swagger-typescript-api',
  firstId: 4000,
  dates: 'string',
  generate: (directory, document) =>
    execute(process.execPath, [
      join(REPO_ROOT, 'node_modules', 'swagger-typescript-api', 'dist', 'cli.mjs'),
      'generate',
      '--path',
      document,
      '--output',
      directory,
      '--name',
      'api.ts',
      '--silent',
    ]),
  consumer: `import { Api, type HttpResponse, type UpdateAgentsTransaction } from './api';
import { input, MISSING_WEBHOOK, runCalls, typeOfDate } from './harness';

const { ids, keys } = input;

/** Its calls marked secure (those the document's security names) get the key from here. */
function clientWith(key: string) {
  const api = new Api<string>({
    baseUrl: input.baseUrl,
    securityWorker: (secret) => (secret ? { headers: { 'X-Api-Key': secret } } : {}),
  });
  api.setSecurityData(key);
  return api;
}

const client = clientWith(keys.own);
const reader = clientWith(keys.reader);
let hookId = '';

/** This client throws the response of a failed call, typed no further: its own types name it. */
async function settle<T, E>(call: Promise<HttpResponse<T, E>>): Promise<HttpResponse<T, E>> {
  try {
    return await call;
  } catch (failed) {
    return failed as HttpResponse<T, E>;
  }
}

async function readTransaction(transactionId: number) {
  const answer = await settle(client.api.getTransaction(transactionId));
  return { data: answer.ok ? answer.data : undefined, etag: answer.headers.get('ETag') ?? '' };
}

function update(body: UpdateAgentsTransaction, ifMatch?: string, caller = client) {
  return settle(caller.api.updateAgents(body, { headers: ifMatch === undefined ? {} : { 'If-Match': ifMatch } }));
}

async function failure<T>(call: Promise<HttpResponse<T, { Message: string } | void>>) {
  const answer = await settle(call);
  return { status: answer.status, message: answer.ok ? undefined : answer.error?.Message };
}

void runCalls(
  {
    async catalogue() {
      const first = await settle(client.api.getRequirements());
      const etag = first.headers.get('ETag') ?? '';
      // If-None-Match is no parameter of the document: sent as a plain header.
      const second = await settle(client.api.getRequirements({ headers: { 'If-None-Match': etag } }));
      return {
        status: first.status,
        etag,
        types: first.data.map((type) => ({
          id: type.requirement_type_id,
          description: type.description,
          records: type.Acquisition?.map((record) => record.requirement_description),
        })),
        revalidated: second.status,
      };
    },

    async transaction() {
      const { data, status } = await settle(client.api.getTransaction(ids.updated));
      return {
        status,
        discount: data.discount,
        stamp: typeOfDate(data.stamp),
        missing: await failure(client.api.getTransaction(ids.missing)),
      };
    },

    async updateAgents() {
      const before = await readTransaction(ids.updated);
      const result = await update(
        { transaction_id: ids.updated, financetype: 'Cash', brokerid: 12, brokername: 'Lourdes Bautista' },
        before.etag,
      );
      const after = await readTransaction(ids.updated);
      const history = await settle(client.api.getAgentHistory(ids.updated));
      return {
        status: result.status,
        broker: { id: after.data?.brokerid, name: after.data?.brokername },
        changed: history.data.at(-1)?.changes?.map((change) => change.field),
      };
    },

    async invalid() {
      // The types refuse this body (no financetype); a client sending it anyway reads ModelState.
      const body = { transaction_id: ids.invalid, loanterm: 101 } as unknown as UpdateAgentsTransaction;
      const { error, status } = await update(body);
      return { status, message: error.Message, modelState: error.ModelState };
    },

    forbidden: () => failure(update({ transaction_id: ids.updated, financetype: 'Cash', brokerid: 9 }, undefined, reader)),
    unknown: () => failure(update({ transaction_id: ids.missing, financetype: 'Cash', brokerid: 9 })),
    locked: () => failure(update({ transaction_id: ids.locked, financetype: 'Cash', brokerid: 9 })),

    async stale() {
      const { etag } = await readTransaction(ids.stale);
      await update({ transaction_id: ids.stale, financetype: 'Cash', brokerid: 13 });
      return failure(update({ transaction_id: ids.stale, financetype: 'Cash', brokerid: 14 }, etag));
    },

    async listTransactions() {
      const { data, status, headers } = await settle(client.api.listTransactions({ limit: 2 }));
      return {
        status,
        ids: data.transactions?.map((transaction) => transaction.transaction_id),
        nextCursor: data.next_cursor,
        link: headers.get('Link'),
      };
    },

    async health() {
      return { live: (await settle(client.health.live())).status, ready: (await settle(client.health.ready())).status };
    },

    async createWebhook() {
      const body = { url: input.hookUrl, types: ['property-sales.data.imported'], description: 'CRM' };
      const { data, status } = await settle(client.api.createWebhook(body));
      hookId = data.id;
      return {
        status,
        created: { owner: data.owner, url: data.url, status: data.status, secret: typeof data.secret },
        second: await failure(client.api.createWebhook(body)),
      };
    },

    async invalidWebhook() {
      const { error, status } = await settle(client.api.createWebhook({ url: 'ftp://crm' }));
      return { status, message: error.Message, modelState: error.ModelState };
    },

    forbiddenWebhook: () => failure(reader.api.createWebhook({ url: input.hookUrl })),

    async updateWebhook() {
      const { data, status } = await settle(client.api.updateWebhook(hookId, { description: 'CRM: agents' }));
      return {
        status,
        description: data.description,
        missing: await failure(client.api.updateWebhook(MISSING_WEBHOOK, { description: 'none' })),
      };
    },

    async readWebhooks() {
      const one = await settle(client.api.getWebhook(hookId));
      const all = await settle(client.api.listWebhooks());
      return {
        status: one.status,
        description: one.data.description,
        created: typeOfDate(one.data.created_at),
        listed: all.data.map((hook) => hook.id === hookId),
      };
    },

    async deleteWebhook() {
      const { status } = await settle(client.api.deleteWebhook(hookId));
      return { status, after: await failure(client.api.getWebhook(hookId)) };
    },
  },
  {
    async unavailable() {
      const { error, status, headers } = await update({ transaction_id: ids.updated, financetype: 'Cash', brokerid: 15 });
      return { status, message: error.Message, retryAfter: headers.get('Retry-After') };
    },
  },
);

/** Compiled, never run: each line must be refused by the generated types. */
export async function refusedByTheTypes(): Promise<void> {
  // @ts-expect-error financetype is required
  await update({ transaction_id: 1 });
  // @ts-expect-error brokerid is an integer, not text
  await update({ transaction_id: 1, financetype: 'Cash', brokerid: '12' });
  // @ts-expect-error transaction_id is a path parameter the call must give
  await client.api.getTransaction();
  const { data } = await client.api.getRequirements();
  // @ts-expect-error a description is text
  const description: number | null | undefined = data[0]?.description;
  // @ts-expect-error a 409's body has a Message, not a message
  const message: string | undefined = (await update({ transaction_id: 1, financetype: 'Cash' })).error.message;
  // @ts-expect-error a webhook needs its url
  await client.api.createWebhook({ description: 'CRM' });
  void [description, message];
}
`,
};

const CLIENTS: readonly GeneratedClient[] = [OPENAPI_FETCH, HEY_API, ORVAL, SWAGGER_TYPESCRIPT_API];

const idsOf = ({ firstId }: GeneratedClient): Ids => ({
  updated: firstId + 1,
  invalid: firstId + 2,
  locked: firstId + 3,
  stale: firstId + 4,
  missing: firstId + 9,
});

/** Each client's own key, named by its folder: the owner of the webhook it makes. */
const keyOf = ({ folder }: GeneratedClient) => `gc-${folder}-7d3e9a1f5c2b8046`;
/** A key that may read transactions and the catalogue, and nothing else: 403 on every write. */
const READER_KEY = 'gc-reader-4b8f2d6a0e1c9357';

/** Exact to DECIMAL(15,4): fifteen significant digits, which a double holds. */
const DISCOUNT = 12345678901.2345;

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
 * extensionless imports included). Every client goes through here.
 */
async function compile(directory: string): Promise<string[]> {
  // All of them as roots: TypeScript checks but never emits a file it reached by an import under a
  // node_modules folder, and this scratch directory is one.
  const files = (await readdir(directory, { recursive: true }))
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join(directory, file));
  const program = ts.createProgram(files, {
    ...COMPILER_OPTIONS,
    rootDir: directory,
    outDir: join(directory, 'out'),
  });
  const diagnostics = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    if (!diagnostic.file || diagnostic.start === undefined) return message;
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    return `${relative(directory, diagnostic.file.fileName)}:${line + 1}: ${message}`;
  });
  program.emit();
  return diagnostics;
}

/** Runs a compiled consumer program with `input` and reads what it printed. */
async function run(directory: string, input: Input): Promise<Observed> {
  const { stdout } = await execute(process.execPath, [
    join(directory, 'out', 'consumer.js'),
    JSON.stringify(input),
  ]);
  return JSON.parse(stdout) as Observed;
}

/**
 * Runs `work` while another connection holds the SQLite database's write lock, as another process
 * writing to the file would: every write the service tries answers 503 once its wait runs out.
 */
async function whileLocked<T>(database: TestDatabase, work: () => Promise<T>): Promise<T> {
  const other = await new DataSource({
    type: 'better-sqlite3',
    database: database.url.slice('sqlite:'.length),
  }).initialize();
  try {
    await other.query('BEGIN EXCLUSIVE');
    return await work();
  } finally {
    await other.query('ROLLBACK');
    await other.destroy();
  }
}

describe('generated clients, compiled under strict tsc, calling the service', () => {
  let database: TestDatabase;
  let running: RunningApp;
  let document: string;

  beforeAll(async () => {
    // A file, so that another connection can lock it.
    database = await createTestDatabase('sqlite');
    running = await RunningApp.start(database.url, {
      AUTH_MODE: 'apikey',
      AUTH_API_KEYS: [
        ...CLIENTS.map((client) => apiKeyEntry(client.folder, keyOf(client))),
        apiKeyEntry('reader', READER_KEY, ['transactions:read', 'requirements:read']),
      ].join(','),
      WEBHOOKS: 'true',
      WEBHOOKS_ALLOW_HTTP: 'true',
      WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOKS_MAX_PER_OWNER: '1',
    });
    await running.seed({
      requirements: CATALOGUE,
      transactions: CLIENTS.map(idsOf).flatMap(({ updated, invalid, locked, stale }) => [
        transactionRecord(updated, { discount: DISCOUNT }),
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
    await database?.drop();
    await rm(SCRATCH, { recursive: true, force: true });
  });

  describe.each(CLIENTS)('$name', (client) => {
    const ids = idsOf(client);
    const directory = join(SCRATCH, client.folder);
    let diagnostics: string[];
    let observed: Observed;
    let unavailable: Observed;

    beforeAll(async () => {
      await mkdir(directory, { recursive: true });
      await writeFile(join(directory, 'package.json'), '{ "type": "commonjs" }\n');
      await writeFile(join(directory, 'openapi.json'), document);
      await client.generate(directory, join(directory, 'openapi.json'), running.baseUrl);
      await writeFile(join(directory, 'harness.ts'), HARNESS);
      await writeFile(join(directory, 'consumer.ts'), client.consumer);
      diagnostics = await compile(directory);
      const input = {
        baseUrl: running.baseUrl,
        keys: { own: keyOf(client), reader: READER_KEY },
        ids,
        hookUrl: `http://127.0.0.1:9/hooks/${client.folder}`,
      };
      observed = await run(directory, { ...input, databaseLocked: false });
      unavailable = await whileLocked(database, () =>
        run(directory, { ...input, databaseLocked: true }),
      );
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

    it('reads a transaction, its amount exact and its dates as its generator types them, and a typed 404', () => {
      expect(observed.transaction).toEqual({
        status: 200,
        discount: DISCOUNT,
        stamp: client.dates === 'Date' ? 'Date' : 'string',
        missing: {
          status: 404,
          message: `No transaction with transaction_id ${ids.missing} exists.`,
        },
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

    it('reads the typed 403 of a key without the scope, the 404 of an unknown transaction, the 409 of a locked one', () => {
      expect(observed.forbidden).toEqual({
        status: 403,
        message:
          'The caller is not granted the scope transactions:write, which this operation requires.',
      });
      expect(observed.unknown).toEqual({
        status: 404,
        message: `No transaction with transaction_id ${ids.missing} exists.`,
      });
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

    it('reads a typed 503 with Retry-After while the database is locked', () => {
      expect(unavailable).toEqual({
        unavailable: {
          status: 503,
          message: expect.stringMatching(/ Retry later\.$/),
          retryAfter: expect.stringMatching(/^\d+$/),
        },
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

    it('creates a webhook (201 with its secret), then reads the 409 of its owner cap', () => {
      expect(observed.createWebhook).toEqual({
        status: 201,
        created: {
          owner: client.folder,
          url: `http://127.0.0.1:9/hooks/${client.folder}`,
          status: 'active',
          secret: 'string',
        },
        second: { status: 409, message: expect.stringMatching(/^The caller has 1 webhook /) },
      });
    });

    it('reads the typed 400 of a URL it refuses and the 403 of a key without the scope', () => {
      expect(observed.invalidWebhook).toEqual({
        status: 400,
        message: 'The request is invalid.',
        modelState: { 'createWebhookDto.url': ['The url must be https:// or http://.'] },
      });
      expect(observed.forbiddenWebhook).toEqual({
        status: 403,
        message:
          'The caller is not granted the scope webhooks:manage, which this operation requires.',
      });
    });

    it('updates its webhook (200) and reads the 404 of an unknown one', () => {
      expect(observed.updateWebhook).toEqual({
        status: 200,
        description: 'CRM: agents',
        missing: {
          status: 404,
          message: expect.stringContaining('00000000-0000-4000-8000-000000000000'),
        },
      });
    });

    it('reads its webhook and lists it, then deletes it (204) and reads its 404', () => {
      expect(observed.readWebhooks).toEqual({
        status: 200,
        description: 'CRM: agents',
        created: client.dates === 'Date' ? 'Date' : 'string',
        listed: [true],
      });
      expect(observed.deleteWebhook).toEqual({
        status: 204,
        after: { status: 404, message: expect.any(String) },
      });
    });
  });
});
