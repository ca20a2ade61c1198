import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { setTimeout as sleep } from 'node:timers/promises';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import {
  childEnvironment,
  type CommandResult,
  IMPORT_MAIN,
  REPO_ROOT,
  runNode,
} from './support/processes';
import { describeOnEachDatabase, relayIdle, type SuiteContext } from './support/test-app';

type Json = Record<string, unknown>;

/** More records than several of the import's write batches (1,000 each) hold. */
const MANY = 3500;
/** Records sent to the import that is killed in the middle. */
const KILLED = 8000;

/** Transactions `first`..`first + count - 1`, with agents named after `agents`, each as JSON. */
function transactionTexts(first: number, count: number, agents: string): string[] {
  const records: string[] = [];
  for (let id = first; id < first + count; id++)
    records.push(JSON.stringify(transactionRecord(id, { brokername: agents })));
  return records;
}

/** The same records as one JSON array. */
const transactionsText = (first: number, count: number, agents = 'Ramon Dela Cruz') =>
  `[${transactionTexts(first, count, agents).join(',\n')}]`;

describeOnEachDatabase('npm run data:import, streaming', (context: SuiteContext) => {
  let directory: string;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'property-sales-streaming-'));
  });

  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  const fixture = async (name: string, content: string): Promise<string> => {
    const path = join(directory, name);
    await writeFile(path, content);
    return path;
  };

  const environment = () => ({ DATABASE_URL: context.database.url, MIGRATIONS_RUN: 'true' });

  const runImport = (...args: string[]): Promise<CommandResult> =>
    runNode(IMPORT_MAIN, args, { env: environment(), timeoutMs: 120000 });

  /** Ends each import a test held on a pipe, and resolves once it has exited. */
  const heldImports: (() => Promise<unknown>)[] = [];

  // A held import keeps its database transaction open, and dropping the database would wait on it
  // for good: one that a failed test left running is killed, and the suite goes on.
  afterEach(() => Promise.all(heldImports.splice(0).map((end) => end())));

  /**
   * The import reading transactions from a named pipe the test writes, so that it can be held, or
   * killed, inside its database transaction. A write it stops reading fails with what it said.
   */
  const importFromPipe = (name: string, ...options: string[]) => {
    const pipe = join(directory, name);
    execFileSync('mkfifo', [pipe]);
    const child = spawn(process.execPath, [IMPORT_MAIN, '--transactions', pipe, ...options], {
      cwd: REPO_ROOT,
      env: childEnvironment(environment()),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
    const writer = createWriteStream(pipe);
    // A failed write is the write's own failure, below, not another uncaught one.
    writer.on('error', () => undefined);
    heldImports.push(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      writer.destroy();
      return exited;
    });
    const write = (text: string) =>
      new Promise<void>((resolve, reject) =>
        writer.write(text, (error) =>
          error
            ? void exited.then(() => reject(new Error(`The import stopped reading: ${output}`)))
            : resolve(),
        ),
      );
    return { child, exited, writer, write, output: () => output };
  };

  /** How long the reacting module may take to recompute the splits of an import before. */
  const BACKGROUND_MS = 30_000;
  const transaction = (id: number) => context.http.get(`/api/Transaction/GetTransaction/${id}`);
  const history = async (id: number) =>
    (await context.http.get(`/api/Transaction/GetAgentHistory/${id}`).expect(200)).body as Json[];

  it(`loads ${MANY} transactions read as a stream, in several batches`, async () => {
    await context.running.seed({ requirements: CATALOGUE });
    const path = await fixture('many.json', transactionsText(1, MANY));
    const result = await runImport('--transactions', path);
    expect({ code: result.code, stderr: result.stderr }).toEqual({
      code: 0,
      stderr: expect.stringContaining(path),
    });
    expect(result.stdout).toContain('transactions: 3,500 created, 0 updated');
    expect(result.stdout).toMatch(/3,500 transactions in \S+( \([\d,]+ transactions\/s\))?\n/);
    expect((await transaction(MANY).expect(200)).body).toMatchObject({
      transaction_id: MANY,
      brokername: 'Ramon Dela Cruz',
      requirements: [{ requirement_id: 11 }, { requirement_id: 12 }],
    });
  });

  it('refuses a record far into the file, in a later batch, naming the file, record, id and field; nothing is written', async () => {
    const records = JSON.parse(transactionsText(1, MANY, 'Changed Broker')) as Json[];
    records[3199] = { ...records[3199], loanterm: 500 };
    records.push(...(JSON.parse(transactionsText(MANY + 1, 10)) as Json[]));
    const path = await fixture('late-invalid.json', JSON.stringify(records));
    const before = (await transaction(1)).text;

    const result = await runImport('--transactions', path);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${path}, record 3200 (transaction_id 3200) is invalid:`);
    expect(result.stderr).toContain(
      'transaction.loanterm: The field loanterm must be between 1 and 100.',
    );
    expect(result.stderr).toContain('Nothing was imported.');
    expect(result.stdout).not.toContain('Import complete');
    expect((await transaction(1)).text).toBe(before);
    await transaction(MANY + 1).expect(404);
    expect(await history(1)).toEqual([]);
  });

  it('refuses an id repeated thousands of records later, naming both records', async () => {
    const records = JSON.parse(transactionsText(MANY + 1, 2500)) as Json[];
    records[2400] = { ...records[2400], transaction_id: MANY + 7 };
    const path = await fixture('repeated.json', JSON.stringify(records));
    const result = await runImport('--transactions', path);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `${path}, record 2401 (transaction_id ${MANY + 7}) repeats the id of ${path}, record 7 (transaction_id ${MANY + 7}).`,
    );
    await transaction(MANY + 1).expect(404);
  });

  it('appends an agent-history record for each stored transaction whose chain the import changes, as UpdateAgents does', async () => {
    const path = await fixture(
      'changed-agents.json',
      JSON.stringify([
        transactionRecord(1, { brokername: 'New Broker', managerid: 99 }),
        // Unchanged chain: no history record.
        transactionRecord(2, { brokername: 'Ramon Dela Cruz' }),
      ]),
    );
    const result = await runImport('--transactions', path);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('transactions: 0 created, 2 updated');
    expect((await transaction(1).expect(200)).body).toMatchObject({
      brokername: 'New Broker',
      managerid: 99,
    });
    const entries = await history(1);
    expect(entries).toHaveLength(1);
    expect(entries[0].changes).toEqual([
      { field: 'managerid', before: 31, after: 99 },
      { field: 'brokername', before: 'Ramon Dela Cruz', after: 'New Broker' },
    ]);
    expect(await history(2)).toEqual([]);

    // The same import again changes nothing, and so appends nothing; --quiet silences progress.
    const again = await runImport('--transactions', path, '--quiet');
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: '' });
    expect(again.stdout).toContain('transactions: 0 created, 2 updated');
    expect(await history(1)).toHaveLength(1);
  });

  it('reads an ArrayOfTransaction of thousands of records as a stream, naming an invalid one far into it', async () => {
    const single = (await transaction(1).set('Accept', 'application/xml').expect(200)).text.replace(
      /^<Transaction [^>]*>/,
      '<Transaction>',
    );
    const recordOf = (id: number, loanterm = '20') =>
      single
        .replace(/<transaction_id>1</, `<transaction_id>${id}<`)
        .replace(/<loanterm>[^<]*</, `<loanterm>${loanterm}<`);
    const document = (records: string[]) =>
      `<ArrayOfTransaction xmlns:i="http://www.w3.org/2001/XMLSchema-instance" xmlns="http://schemas.datacontract.org/2004/07/PropertySales.Models">${records.join('\n')}</ArrayOfTransaction>`;
    const ids = Array.from({ length: MANY }, (_, index) => 10001 + index);

    const outOfRange = ids.map((id, index) => recordOf(id, index === 2999 ? '0' : '20'));
    const path = await fixture('late-invalid.xml', document(outOfRange));
    const invalid = await runImport('--transactions', path);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain(`${path}, record 3000 (transaction_id 13000) is invalid:`);
    expect(invalid.stderr).toContain('transaction.loanterm');

    const unreadable = ids.map((id, index) => recordOf(id, index === 1999 ? 'twenty' : '20'));
    const unreadablePath = await fixture('late-unreadable.xml', document(unreadable));
    const refused = await runImport('--transactions', unreadablePath);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${unreadablePath}, record 2000:`);
    expect(refused.stderr).toContain("The value 'twenty' is not valid for loanterm.");
    await transaction(10001).expect(404);

    const valid = await runImport(
      '--transactions',
      await fixture('many.xml', document(ids.map((id) => recordOf(id)))),
    );
    expect(valid.code).toBe(0);
    expect(valid.stdout).toContain('transactions: 3,500 created, 0 updated');
    expect((await transaction(10000 + MANY).expect(200)).body).toMatchObject({
      transaction_id: 10000 + MANY,
      brokername: 'New Broker',
    });
  });

  it('leaves the data as it was when the process is killed in the middle of an import', async () => {
    // The reacting module's recomputation after the imports before is done: the import meets no
    // background writes of the service's.
    await relayIdle(context.running, BACKGROUND_MS);
    const before = {
      first: (await transaction(1)).text,
      last: (await transaction(MANY)).text,
      history: await history(1),
    };
    // The import is killed while it is known to be inside its database transaction, having written
    // thousands of records: once the pipe has taken all it is sent, it has read all of that but what
    // the pipe and its reader buffer (a hundred records or so), and it reads at most two batches
    // (of 1,000) ahead of the last one written. Of KILLED records, its batches written hold the
    // first 5,000 then: transactions MANY and MANY + 1 among them.
    const { child, exited, writer, write, output } = importFromPipe('live.json');
    const text = transactionsText(1, KILLED, 'Killed Import');
    // Everything but the last record and the array's end: the import then waits for the rest.
    await write(text.slice(0, text.lastIndexOf('{')));
    child.kill('SIGKILL');
    const [code, signal] = await exited;
    writer.destroy();
    expect({ code, signal, output: output() }).toEqual({
      code: null,
      signal: 'SIGKILL',
      output: expect.not.stringContaining('Import complete') as unknown,
    });

    await context.restart();
    expect((await transaction(1)).text).toBe(before.first);
    expect((await transaction(MANY)).text).toBe(before.last);
    await transaction(MANY + 1).expect(404);
    expect(await history(1)).toEqual(before.history);
  });

  if (context.kind === 'mariadb')
    it('records a change UpdateAgents commits during an import in the history it writes: values chained, one version each', async () => {
      const first = 30001;
      const count = 1500;
      // The import's second batch (of 1,000) holds it.
      const changed = first + count - 1;
      await context.running.seed({
        transactions: JSON.parse(transactionsText(first, count)) as object[],
      });
      // The reacting module's recomputation after that import is done: the import below meets no
      // background writes of the service's, only the client's.
      await relayIdle(context.running, BACKGROUND_MS);

      // The import is held inside its transaction after its first batch. Its progress lines (one every
      // few seconds) say how far it read, should it not get there.
      const { exited, writer, write, output } = importFromPipe('concurrent.json');
      const records = transactionTexts(first, count, 'Import Broker');
      await write(`[${records.slice(0, 1200).join(',\n')},\n`);
      // Its first batch is written, uncommitted: a read of uncommitted rows sees all of it. (The
      // server's count of the rows a transaction modified is no witness: it stayed at 0 for this
      // import's transaction on MariaDB 10.11, batches written.)
      const server = await createConnection({
        uri: context.database.url.replace(/^mariadb:/, 'mysql:'),
      });
      try {
        await server.query('SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED');
        for (let waited = 0; ; waited += 50) {
          const [rows] = await server.query<RowDataPacket[]>(
            'SELECT COUNT(*) AS written FROM sales_transaction ' +
              'WHERE transaction_id BETWEEN ? AND ? AND brokername = ?',
            [first, first + 999, 'Import Broker'],
          );
          if (Number((rows[0] as { written: number }).written) === 1000) break;
          if (waited > 30000) {
            // What each of its connections was doing: a lock wait names what it waits on.
            const [connections] = await server.query<RowDataPacket[]>(
              'SELECT p.id, p.command, p.state, p.info, t.trx_state, t.trx_started ' +
                'FROM information_schema.processlist p LEFT JOIN information_schema.innodb_trx t ' +
                'ON p.id = t.trx_mysql_thread_id WHERE p.db = DATABASE()',
            );
            throw new Error(
              `The import wrote no batch: ${output()}\n${JSON.stringify(connections, null, 1)}`,
            );
          }
          await sleep(50);
        }
      } finally {
        await server.end();
      }
      // Meanwhile a client changes a transaction the import has not reached: it commits at once.
      await context.http
        .post('/api/Transaction/UpdateAgents')
        .send({ transaction_id: changed, financetype: 'Cash', managerid: 4242 })
        .expect(204);
      await write(`${records.slice(1200).join(',\n')}]`);
      writer.end();
      const [code] = await exited;
      expect({ code, output: output() }).toEqual({
        code: 0,
        output: expect.any(String) as unknown,
      });

      // The import overwrote the client's change, and its history says so, from the value the client
      // left, at the version after the client's.
      const entries = await history(changed);
      expect(entries.map(({ row_version, changes }) => ({ row_version, changes }))).toEqual([
        { row_version: 2, changes: [{ field: 'managerid', before: 31, after: 4242 }] },
        {
          row_version: 3,
          changes: [
            { field: 'managerid', before: 4242, after: 31 },
            { field: 'brokername', before: 'Ramon Dela Cruz', after: 'Import Broker' },
          ],
        },
      ]);
      expect((await transaction(changed).expect(200)).body).toMatchObject({
        managerid: 31,
        brokername: 'Import Broker',
        row_version: 3,
      });
    });
});
