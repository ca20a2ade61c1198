import { parse as parseCsv } from 'csv-parse/sync';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { type CommandResult, IMPORT_MAIN, REPO_ROOT, runNode } from './support/processes';
import { createTestDatabase } from './support/test-database';
import { describeOnEachDatabase, type SuiteContext } from './support/test-app';

type Json = Record<string, unknown>;

/** A cell a spreadsheet would run as a formula, by OWASP's CSV injection guidance. */
const FORMULA_START = expect.stringMatching(/^[=+\-@\t\r]/) as unknown;

const EXPORT_MAIN = join(REPO_ROOT, 'dist', 'src', 'data-import', 'export-main.js');

/** Text that CSV must quote, XML must escape and JSON must escape, and text that is only empty. */
const AWKWARD = 'Quote "this", a comma, a line\nbreak, <markup> & Ünïcödé ✓';

/** Names a spreadsheet would run as formulas, were they written as they are; one quoted already. */
const FORMULAS = {
  salesagentname: '=HYPERLINK("https://attacker.example/","Angela Cruz")',
  brokername: '@SUM(1+1)',
  managername: '+63 912 555 0101',
  directorname: '-',
  managername_recruit: '\tTabbed',
  salesagentname_recruit: '\r=1+1',
  directorname_recruit: "'=quoted already",
};

const TRANSACTIONS = [
  transactionRecord(1),
  transactionRecord(2, {
    ...FORMULAS,
    developer: AWKWARD,
    discount: 0.0001,
    sellingprice: 99999999.9999,
    requirements: [],
  }),
  transactionRecord(3, {
    financetype: 'Bank Financing',
    requirement_type_id: 2,
    clientname: '',
    coborrowername: null,
    requirements: [{ requirement_id: 21, submitted: null, stamp: '2026-03-01T18:11:12.5+08:00' }],
  }),
];

/** The files of one export in one format: the CSV layout has a second file for each list. */
function exportFiles(directory: string, format: 'json' | 'xml' | 'csv'): Record<string, string> {
  const files: Record<string, string> = {
    requirements: join(directory, `requirements.${format}`),
    transactions: join(directory, `transactions.${format}`),
  };
  if (format === 'csv') {
    files.acquisitions = join(directory, 'acquisitions.csv');
    files.checklist = join(directory, 'checklist.csv');
  }
  return files;
}

const flags = (files: Record<string, string>) =>
  Object.entries(files).flatMap(([name, path]) => [`--${name}`, path]);

describeOnEachDatabase('npm run data:export', (context: SuiteContext) => {
  let directory: string;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'property-sales-export-'));
    await context.running.seed({ requirements: CATALOGUE, transactions: TRANSACTIONS });
    // Transaction 1 at version 2, where an import of its record starts at 1.
    await context.http
      .post('/api/Transaction/UpdateAgents')
      .send({ transaction_id: 1, financetype: 'Cash', brokerid: 12 })
      .expect(204);
  });

  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  const command =
    (main: string) =>
    (databaseUrl: string, ...args: string[]): Promise<CommandResult> =>
      runNode(main, args, { env: { DATABASE_URL: databaseUrl, MIGRATIONS_RUN: 'true' } });
  const runExport = command(EXPORT_MAIN);
  const runImport = command(IMPORT_MAIN);

  it('prints the usage and exits 2 without a file to write', async () => {
    const result = await runExport(context.database.url, '--checklist', 'x.csv');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/usage: npm run data:export -- /);
  });

  it('writes every transaction as GetTransaction returns it, and the catalogue as GetRequirements does', async () => {
    const files = exportFiles(join(directory, 'shape'), 'json');
    await mkdir(join(directory, 'shape'));
    const result = await runExport(context.database.url, ...flags(files));
    expect({ code: result.code, stderr: result.stderr }).toEqual({
      code: 0,
      stderr: expect.any(String),
    });
    expect(result.stdout).toContain('Export complete');
    expect(result.stdout).toContain('transactions: 3');
    // No rate of a run under a second: the time it took, in tenths.
    expect(result.stdout).toMatch(
      /\n {2}3 transactions in (?:\d\.\ds|\S+ \(\d+ transactions\/s\))\n/,
    );
    expect(result.stdout).not.toMatch(/in 0s|NF/);

    const written = JSON.parse(await readFile(files.transactions, 'utf8')) as Json[];
    const served = await Promise.all(
      [1, 2, 3].map(
        async (id) =>
          (await context.http.get(`/api/Transaction/GetTransaction/${id}`).expect(200))
            .body as Json,
      ),
    );
    // All but row_version, which counts a row's changes in one database: files do not carry it.
    expect(written).toEqual(
      served.map((record) =>
        Object.fromEntries(Object.entries(record).filter(([name]) => name !== 'row_version')),
      ),
    );
    expect(served[0].row_version).toBe(2);
    expect(JSON.parse(await readFile(files.requirements, 'utf8'))).toEqual(
      (await context.http.get('/api/Requirement/GetRequirements').expect(200)).body,
    );
  });

  it.each(['json', 'xml', 'csv'] as const)(
    'round trip in %s: export, import into an empty database, export again, byte-identical',
    async (format) => {
      const first = exportFiles(join(directory, `${format}-first`), format);
      const second = exportFiles(join(directory, `${format}-second`), format);
      await mkdir(join(directory, `${format}-first`));
      await mkdir(join(directory, `${format}-second`));
      expect((await runExport(context.database.url, ...flags(first))).code).toBe(0);

      const empty = await createTestDatabase(context.kind);
      try {
        const imported = await runImport(empty.url, ...flags(first));
        expect({ code: imported.code, stderr: imported.stderr }).toEqual({
          code: 0,
          stderr: expect.any(String),
        });
        expect(imported.stdout).toContain('transactions: 3 created, 0 updated');
        expect((await runExport(empty.url, ...flags(second))).code).toBe(0);
      } finally {
        await empty.drop();
      }
      for (const name of Object.keys(first))
        expect(await readFile(second[name], 'utf8')).toBe(await readFile(first[name], 'utf8'));
    },
  );

  it('writes CSV with a header of wire names, null as an empty field and the empty string as ""', async () => {
    const files = exportFiles(join(directory, 'csv-first'), 'csv');
    const transactions = await readFile(files.transactions, 'utf8');
    const lines = transactions.split('\n');
    const header = lines[0];
    const third = lines.find((line) => line.startsWith('3,'))!;
    expect(header.split(',').slice(0, 3)).toEqual([
      'transaction_id',
      'property_id',
      'reservation_id',
    ]);
    expect(transactions).toContain(`"${AWKWARD.replace(/"/g, '""')}"`);
    const columns = header.split(',');
    const row = third.split(',');
    expect(row[columns.indexOf('clientname')]).toBe('""');
    expect(row[columns.indexOf('coborrowername')]).toBe('');
    expect((await readFile(files.checklist, 'utf8')).split('\n').slice(0, 2)).toEqual([
      'transaction_id,requirement_id,requirement_type_id,required,requirement_description,stamp,submitted',
      '1,11,1,Required,Valid ID,2026-02-02T02:30:00+00:00,true',
    ]);
  });

  it("writes a ' before CSV text a spreadsheet would run as a formula, which the import takes off", async () => {
    const csv = exportFiles(join(directory, 'formulas-csv'), 'csv');
    await mkdir(join(directory, 'formulas-csv'));
    expect((await runExport(context.database.url, ...flags(csv))).code).toBe(0);
    const rows = parseCsv<Json>(await readFile(csv.transactions, 'utf8'), { columns: true });
    const second = rows.find((row) => row.transaction_id === '2')!;
    expect(Object.fromEntries(Object.keys(FORMULAS).map((name) => [name, second[name]]))).toEqual(
      Object.fromEntries(Object.entries(FORMULAS).map(([name, text]) => [name, `'${text}`])),
    );
    for (const path of Object.values(csv))
      for (const row of parseCsv(await readFile(path, 'utf8')))
        for (const cell of row) expect({ path, cell }).not.toEqual({ path, cell: FORMULA_START });

    // The import gives back the text as it was: the JSON of both databases is the same.
    const empty = await createTestDatabase(context.kind);
    try {
      expect((await runImport(empty.url, ...flags(csv))).code).toBe(0);
      const exported = async (databaseUrl: string, name: string) => {
        const json = exportFiles(join(directory, name), 'json');
        await mkdir(join(directory, name));
        expect((await runExport(databaseUrl, ...flags(json))).code).toBe(0);
        return JSON.parse(await readFile(json.transactions, 'utf8')) as Json[];
      };
      const reimported = await exported(empty.url, 'formulas-reimported');
      expect(reimported[1]).toMatchObject(FORMULAS);
      expect(reimported).toEqual(await exported(context.database.url, 'formulas-json'));
    } finally {
      await empty.drop();
    }
  });

  describe('reads CSV as a database administrator exports it', () => {
    const BOM = '\uFEFF';

    /** Imports a transactions file with its checklist file, which must succeed. */
    const importCsv = async (transactionsFile: string, checklistFile: string) => {
      const result = await runImport(
        context.database.url,
        '--transactions',
        transactionsFile,
        '--checklist',
        checklistFile,
      );
      expect({ code: result.code, stderr: result.stderr }).toEqual({
        code: 0,
        stderr: expect.any(String),
      });
      return result;
    };

    it('header in any order, quoting, a byte order mark, CRLF, dates and numbers as JSON strings read them', async () => {
      const transactionsFile = join(directory, 'legacy-transactions.csv');
      const checklistFile = join(directory, 'legacy-checklist.csv');
      await writeFile(
        transactionsFile,
        BOM +
          [
            'FinanceType,transaction_id,sellingprice,loanterm,clientname,date_added,locked,coborrowername',
            'Cash,40,"1,250,000.50",15,"Cruz, Maria ""Mia""",2024-01-02 10:00:00,false,',
            'Bank Financing,41,2500000,20,"",01/02/2024,true,Jose',
          ].join('\r\n') +
          '\r\n',
      );
      await writeFile(
        checklistFile,
        [
          'submitted,requirement_id,transaction_id,stamp',
          'true,11,40,2024-01-03T08:00:00Z',
          ',12,40,',
          'false,21,41,',
        ].join('\n'),
      );
      const result = await importCsv(transactionsFile, checklistFile);
      expect(result.stdout).toContain('transactions: 2 created, 0 updated');
      const forty = (await context.http.get('/api/Transaction/GetTransaction/40').expect(200))
        .body as Json;
      expect(forty).toMatchObject({
        financetype: 'Cash',
        sellingprice: 1250000.5,
        loanterm: 15,
        clientname: 'Cruz, Maria "Mia"',
        date_added: '2024-01-02T10:00:00+00:00',
        locked: false,
        coborrowername: null,
        requirements: [
          { requirement_id: 11, submitted: true, stamp: '2024-01-03T08:00:00+00:00' },
          { requirement_id: 12, submitted: null, stamp: null },
        ],
      });
      expect(
        (await context.http.get('/api/Transaction/GetTransaction/41').expect(200)).body,
      ).toMatchObject({
        clientname: '',
        date_added: '2024-01-02T00:00:00+00:00',
        locked: true,
        requirements: [{ requirement_id: 21, submitted: false }],
      });
    });

    it('reads a bit column as SQL Server exports it, 1 or 0, as the boolean it stands for', async () => {
      const transactionsFile = join(directory, 'bits-transactions.csv');
      const checklistFile = join(directory, 'bits-checklist.csv');
      await writeFile(
        transactionsFile,
        ['transaction_id,financetype,locked,reservation_paid,clientname', '42,Cash,1,0,1'].join(
          '\r\n',
        ),
      );
      await writeFile(
        checklistFile,
        ['transaction_id,requirement_id,submitted', '42,11,1', '42,12,0'].join('\r\n'),
      );
      await importCsv(transactionsFile, checklistFile);
      expect(
        (await context.http.get('/api/Transaction/GetTransaction/42').expect(200)).body,
      ).toMatchObject({
        locked: true,
        reservation_paid: false,
        // Text stays text.
        clientname: '1',
        requirements: [
          { requirement_id: 11, submitted: true },
          { requirement_id: 12, submitted: false },
        ],
      });
    });

    it('names the file, record, id and field of an invalid row, and of a checklist row out of place', async () => {
      const transactionsFile = join(directory, 'invalid.csv');
      await writeFile(
        transactionsFile,
        'transaction_id,financetype,loanterm\n50,Cash,10\n51,Cash,0\n',
      );
      const invalid = await runImport(context.database.url, '--transactions', transactionsFile);
      expect(invalid.code).toBe(1);
      expect(invalid.stderr).toContain(`${transactionsFile}, record 2 (transaction_id 51)`);
      expect(invalid.stderr).toContain('transaction.loanterm');

      const valid = join(directory, 'valid.csv');
      await writeFile(valid, 'transaction_id,financetype\n52,Cash\n53,Cash\n');
      const misplaced = join(directory, 'misplaced-checklist.csv');
      await writeFile(misplaced, 'transaction_id,requirement_id\n53,11\n52,12\n');
      const result = await runImport(
        context.database.url,
        '--transactions',
        valid,
        '--checklist',
        misplaced,
      );
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`${misplaced}, record 2 (transaction_id 52)`);
      for (const id of [50, 52, 53])
        await context.http.get(`/api/Transaction/GetTransaction/${id}`).expect(404);
    });
  });
});
