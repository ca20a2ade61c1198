import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { TransactionDto } from '../src/transaction/dto/transaction.dto';
import { wireModelOf } from '../src/wire';
import { CATALOGUE, textOfLength, transactionRecord } from './support/fixtures';
import { type CommandResult, IMPORT_MAIN, runNode } from './support/processes';
import { describeOnEachDatabase, describeOnSqlite, type SuiteContext } from './support/test-app';

type Json = Record<string, unknown>;

const USAGE =
  /usage: npm run data:import -- \[--requirements FILE \[--acquisitions FILE\]\] \[--transactions FILE \[--checklist FILE\]\] \[--quiet\]/;

/** `  transactions: 40,000 created, 0 updated` as the summary writes it. */
const summaryLine = (what: string, created: number, updated: number) =>
  `${what}: ${created.toLocaleString('en-US')} created, ${updated.toLocaleString('en-US')} updated`;

/** A GetTransaction body's version, and the body without it: the data alone. */
const versionOf = (text: string) => (JSON.parse(text) as Json).row_version as number;
const unversioned = (text: string): Json => {
  const record = JSON.parse(text) as Json;
  delete record.row_version;
  return record;
};

/**
 * The import command run against `context`'s database, on fixture files in a temp directory of the
 * suite's own; registers the directory's hooks, so it is called in a suite's body.
 */
function importCommand(context: SuiteContext) {
  let directory: string;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'property-sales-import-'));
  });

  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  /** Writes a fixture file into the suite's temp directory and returns its path. */
  const fixture = async (name: string, content: unknown): Promise<string> => {
    const path = join(directory, name);
    await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
    return path;
  };

  const runImportWith = (env: Record<string, string>, ...args: string[]): Promise<CommandResult> =>
    runNode(IMPORT_MAIN, args, {
      env: { DATABASE_URL: context.database.url, MIGRATIONS_RUN: 'true', ...env },
    });

  return {
    directory: () => directory,
    fixture,
    runImportWith,
    runImport: (...args: string[]) => runImportWith({}, ...args),
    requirements: async () =>
      (await context.http.get('/api/Requirement/GetRequirements').expect(200)).body as Json[],
    transaction: (id: number) => context.http.get(`/api/Transaction/GetTransaction/${id}`),
  };
}

/**
 * What the command refuses before it writes a record: a command line it cannot use, and files it
 * cannot read. No database answers these differently, so they run on SQLite alone; each run is a
 * process of its own that writes nothing, so they run side by side, sharing the machine's cores.
 */
describeOnSqlite('npm run data:import, refusing what it cannot read', (context: SuiteContext) => {
  const { directory, fixture, runImport, runImportWith, requirements, transaction } =
    importCommand(context);

  describe('refuses to start without a usable command line', () => {
    it.concurrent('prints the usage and exits 2 when no file is named', async () => {
      const result = await runImport();
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(USAGE);
      expect(result.stdout).toBe('');
    });

    it.concurrent('names an unknown flag, prints the usage and exits 2', async () => {
      const path = await fixture('unused.json', []);
      const result = await runImport('--requirements', path, '--everything', 'x');
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('--everything');
      expect(result.stderr).toMatch(USAGE);
      expect(result.stdout).toBe('');
    });

    it.concurrent('names a file that cannot be read and exits 1', async () => {
      const missing = join(directory(), 'no-such-file.json');
      const result = await runImport('--requirements', missing);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(missing);
      expect(result.stdout).not.toContain('Import complete');
      expect(await requirements()).toEqual([]);
    });
  });

  describe('names the file, the record and the line and column of what it cannot read', () => {
    const XML_ROOT =
      '<ArrayOfTransaction xmlns:i="http://www.w3.org/2001/XMLSchema-instance" ' +
      'xmlns="http://schemas.datacontract.org/2004/07/PropertySales.Models">';

    // The records' checklists name the catalogue's requirements: a record that is read is valid.
    beforeAll(() => context.running.seed({ requirements: CATALOGUE }));

    it.concurrent('a JSON record broken in the middle of a file of many lines', async () => {
      const path = await fixture(
        'broken-middle.json',
        [
          '[',
          `  ${JSON.stringify(transactionRecord(61))},`,
          // The '"' in column 25 should follow a ','.
          '  {"transaction_id": 62 "financetype": "Cash"},',
          `  ${JSON.stringify(transactionRecord(63))}`,
          ']',
        ].join('\n'),
      );
      const result = await runImport('--transactions', path);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        `${path}, record 2, line 3, column 25: The record is not valid JSON: ',' or '}' was expected.`,
      );
      expect(result.stderr).not.toContain('request body');
      expect(result.stderr).toContain('Nothing was imported.');
      await transaction(61).expect(404);
    });

    it.concurrent('a JSON record broken on a later line of its own', async () => {
      const path = await fixture(
        'broken-line.json',
        `[\n  {\n    "transaction_id": 64,\n    "financetype": "Cash",,\n    "loanterm": 1\n  }\n]`,
      );
      const result = await runImport('--transactions', path);
      expect(result.stderr).toContain(
        `${path}, record 1, line 4, column 27: The record is not valid JSON: a member name was expected.`,
      );
    });

    it.concurrent('a truncated JSON file: where it ends, and in which record', async () => {
      const records = [65, 66].map((id) => `  ${JSON.stringify(transactionRecord(id))},`);
      const path = await fixture(
        'truncated.json',
        ['[', ...records, '  {"transaction_id": 67, "finan'].join('\n'),
      );
      const result = await runImport('--transactions', path);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        `${path}: the file must be a JSON array of Transaction; the array is not closed: ` +
          'the file ends at line 4, column 32, inside record 3 (from line 4, column 3).',
      );
      const ended = await fixture('ended.json', ['[', ...records, ''].join('\n'));
      expect((await runImport('--transactions', ended)).stderr).toContain(
        `${ended}: the file must be a JSON array of Transaction; the array is not closed: ` +
          'the file ends at line 4, column 1, after 2 records.',
      );
      await transaction(65).expect(404);
    });

    it.concurrent('XML that is not well-formed, and XML that ends too soon', async () => {
      const record = (id: number) =>
        `<Transaction><financetype>Cash</financetype><transaction_id>${id}</transaction_id></Transaction>`;
      const path = await fixture(
        'not-well-formed.xml',
        [XML_ROOT, record(68), `<Transaction><financetype>Cash</financetyp></Transaction>`].join(
          '\n',
        ),
      );
      const result = await runImport('--transactions', path);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`${path}, line 3, column `);
      expect(result.stderr).toContain(': The file is not well-formed XML: ');
      expect(result.stderr).not.toContain('request body');

      const ended = await fixture('ended.xml', [XML_ROOT, record(68), record(69)].join('\n'));
      const truncated = await runImport('--transactions', ended);
      expect(truncated.stderr).toMatch(
        /, line 3, column \d+: The file is not well-formed XML: .*\(the file ends after 2 records\)\./,
      );
      await transaction(68).expect(404);
    });

    // A field of 1 MiB: past the limit, and past a piece of the file as the import reads it.
    const LONG = 'x'.repeat(1024 * 1024);
    it.concurrent.each([
      [
        'json',
        `[\n  {"transaction_id": 72, "financetype": "Cash"},\n  {"transaction_id": 73, "developer": "${LONG}"}\n]`,
        'record 2, line 3, column 3',
      ],
      [
        'csv',
        `transaction_id,financetype,developer\n72,Cash,\n73,Cash,${LONG}\n`,
        'record 2, line 3',
      ],
      [
        'xml',
        '<ArrayOfTransaction xmlns:i="http://www.w3.org/2001/XMLSchema-instance" xmlns="http://schemas.datacontract.org/2004/07/PropertySales.Models">\n' +
          '<Transaction><transaction_id>72</transaction_id><financetype>Cash</financetype></Transaction>\n' +
          `<Transaction><transaction_id>73</transaction_id><developer>${LONG}</developer></Transaction>\n</ArrayOfTransaction>`,
        'record 2, line 3',
      ],
    ])(
      'a %s record longer than IMPORT_MAX_RECORD_SIZE, by record and line, before it is read whole',
      async (format, text, where) => {
        const path = await fixture(`long-record.${format}`, text);
        const result = await runImportWith(
          { IMPORT_MAX_RECORD_SIZE: '64kb' },
          '--transactions',
          path,
        );
        expect(result.code).toBe(1);
        expect(result.stderr).toContain(
          `${path}, ${where}: The record is longer than 65536 characters, the most IMPORT_MAX_RECORD_SIZE takes.`,
        );
        await transaction(72).expect(404);
      },
    );

    it.concurrent('a CSV row it cannot parse, by record and line', async () => {
      const path = await fixture(
        'unclosed.csv',
        ['transaction_id,financetype', '70,Cash', '71,"Cash', ''].join('\n'),
      );
      const result = await runImport('--transactions', path);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`${path}, record 2, line 3: Quote Not Closed`);
      await transaction(70).expect(404);
    });
  });
});

describeOnEachDatabase('npm run data:import', (context: SuiteContext) => {
  const { fixture, runImport, requirements, transaction } = importCommand(context);

  describe('loads files', () => {
    let catalogueFile: string;
    let transactionsFile: string;

    beforeAll(async () => {
      catalogueFile = await fixture('catalogue.json', CATALOGUE);
      transactionsFile = await fixture('transactions.json', [
        transactionRecord(1),
        transactionRecord(2, { financetype: 'Bank Financing', requirements: [] }),
      ]);
    });

    it('loads the catalogue alone: summary on stdout, progress on stderr', async () => {
      const result = await runImport('--requirements', catalogueFile);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('Import complete');
      expect(result.stdout).toContain(summaryLine('requirement types', 3, 0));
      expect(result.stdout).toContain(summaryLine('acquisition records', 3, 0));
      expect(result.stdout).toContain(summaryLine('transactions', 0, 0));
      expect(result.stderr).toContain(catalogueFile);
      expect(result.stderr).not.toContain('Import complete');
      expect(result.stdout).not.toContain(catalogueFile);

      const stored = await requirements();
      expect(stored.map((type) => type.requirement_type_id)).toEqual([1, 2, 3]);
      expect(stored[0]).toMatchObject({
        description: 'Cash',
        stamp: '2026-01-15T01:00:00+00:00',
        Acquisition: [
          { requirement_id: 11, requirement_type_id: 1, requirement_description: 'Valid ID' },
          { requirement_id: 12, requirement_type_id: 1, required: 'Optional' },
        ],
      });
      await transaction(1).expect(404);
    });

    it('loads transactions alone, against the stored catalogue', async () => {
      const result = await runImport('--transactions', transactionsFile);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(summaryLine('transactions', 2, 0));
      expect(result.stdout).toContain(summaryLine('requirement types', 0, 0));
      expect(result.stderr).toContain(transactionsFile);

      const first = (await transaction(1).expect(200)).body as Json;
      expect(first).toMatchObject({
        transaction_id: 1,
        downpayment: 570000.1234,
        brokername: 'Ramon Dela Cruz',
        stamp: '2026-02-20T08:45:00+00:00',
      });
      expect((first.requirements as Json[]).map((item) => item.requirement_id)).toEqual([11, 12]);
      expect((await transaction(2).expect(200)).body).toMatchObject({
        financetype: 'Bank Financing',
        requirements: [],
      });
    });

    it('loads both again to the same data: nothing created, everything updated', async () => {
      const catalogueBefore = (await context.http.get('/api/Requirement/GetRequirements')).text;
      const transactionsBefore = [(await transaction(1)).text, (await transaction(2)).text];

      const result = await runImport(
        '--requirements',
        catalogueFile,
        '--transactions',
        transactionsFile,
      );
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(summaryLine('requirement types', 0, 3));
      expect(result.stdout).toContain(summaryLine('acquisition records', 0, 3));
      expect(result.stdout).toContain(summaryLine('transactions', 0, 2));
      expect(result.stderr).toContain(catalogueFile);
      expect(result.stderr).toContain(transactionsFile);

      expect((await context.http.get('/api/Requirement/GetRequirements')).text).toBe(
        catalogueBefore,
      );
      // The same data; each stored row's version advanced, as any upsert of it does.
      const transactionsAfter = [(await transaction(1)).text, (await transaction(2)).text];
      expect(transactionsAfter.map(unversioned)).toEqual(transactionsBefore.map(unversioned));
      expect(transactionsAfter.map(versionOf)).toEqual(
        transactionsBefore.map((text) => versionOf(text) + 1),
      );
    });

    it('reads the XML the service writes, to the same data', async () => {
      const catalogueJson = (await context.http.get('/api/Requirement/GetRequirements')).text;
      const catalogueXml = await context.http
        .get('/api/Requirement/GetRequirements')
        .set('Accept', 'application/xml')
        .expect(200);
      const path = await fixture('catalogue.xml', catalogueXml.text);
      const result = await runImport('--requirements', path);
      expect({ code: result.code, stderr: result.stderr }).toEqual({
        code: 0,
        stderr: expect.any(String),
      });
      expect(result.stdout).toContain(summaryLine('requirement types', 0, 3));
      expect((await context.http.get('/api/Requirement/GetRequirements')).text).toBe(catalogueJson);
    });

    it('reads an ArrayOfTransaction the service writes, to the same data, and names an invalid XML record', async () => {
      const before = (await transaction(1).expect(200)).text;
      const single = (await transaction(1).set('Accept', 'application/xml').expect(200)).text;
      // Each record of the collection as GetTransaction writes it, without the root's declarations.
      const record = single.replace(/^<Transaction [^>]*>/, '<Transaction>');
      const document = (records: string[]) =>
        '<ArrayOfTransaction xmlns:i="http://www.w3.org/2001/XMLSchema-instance" ' +
        `xmlns="http://schemas.datacontract.org/2004/07/PropertySales.Models">${records.join('')}</ArrayOfTransaction>`;
      const valid = await runImport(
        '--transactions',
        await fixture('transactions.xml', document([record])),
      );
      expect(valid.code).toBe(0);
      expect(valid.stdout).toContain(summaryLine('transactions', 0, 1));
      const after = (await transaction(1).expect(200)).text;
      expect(unversioned(after)).toEqual(unversioned(before));
      expect(versionOf(after)).toBe(versionOf(before) + 1);

      const broken = record
        .replace(/<transaction_id>1</, '<transaction_id>77<')
        .replace(/<loanterm>[^<]*</, '<loanterm>101<');
      const path = await fixture('invalid-transactions.xml', document([record, broken]));
      const invalid = await runImport('--transactions', path);
      expect(invalid.code).toBe(1);
      expect(invalid.stderr).toMatch(/record 2 \(transaction_id 77\)/);
      expect(invalid.stderr).toContain(
        'transaction.loanterm: The field loanterm must be between 1 and 100.',
      );
      await transaction(77).expect(404);
    });
  });

  describe('imports all or nothing', () => {
    it('refuses an invalid record, naming the file, the record, its id and the field, and writes nothing', async () => {
      const catalogueBefore = (await context.http.get('/api/Requirement/GetRequirements')).text;
      const newType = await fixture('new-type.json', [
        { requirement_type_id: 5, description: 'New type', stamp: null, Acquisition: [] },
      ]);
      const invalid = await fixture('invalid-transactions.json', [
        transactionRecord(10),
        transactionRecord(11, { loanterm: 0 }),
        transactionRecord(12),
      ]);
      const result = await runImport('--requirements', newType, '--transactions', invalid);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(invalid);
      // The record, by position and by id, on one line.
      expect(result.stderr).toMatch(/record 2\D[^\n]*\b11\b/);
      expect(result.stderr).toContain('transaction.loanterm');
      expect(result.stdout).not.toContain('Import complete');

      // Not even the records before it, nor the other file.
      await transaction(10).expect(404);
      await transaction(12).expect(404);
      expect((await context.http.get('/api/Requirement/GetRequirements')).text).toBe(
        catalogueBefore,
      );
    });

    it('keeps its own rule: refuses each value the wire accepts and the column cannot hold as sent, naming every one', async () => {
      const unstorable = [
        { field: 'miscellaneous', value: '633642.0000000001', key: 'transaction.miscellaneous' },
        {
          field: 'discount',
          value: '2.0416666666666666666666666667',
          key: 'transaction.discount',
        },
        { field: 'TotalPayments', value: '100000000000', key: 'transaction.TotalPayments' },
        { field: 'date_added', value: '"0001-01-01T00:00:00"', key: 'transaction.date_added' },
        { field: 'requirements', value: '[null]', key: 'transaction.requirements[0]' },
      ];
      // Written as text, so each numeral reaches the service exactly as a client would spell it;
      // last, as the later of two members wins.
      const members = unstorable.map(({ field, value }) => `,"${field}":${value}`).join('');
      const second = JSON.stringify(transactionRecord(32)).replace(/}$/, `${members}}`);
      const text = `[${JSON.stringify(transactionRecord(31))},${second}]`;
      const path = await fixture('unstorable.json', text);
      const result = await runImport('--transactions', path);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/record 2\D[^\n]*\b32\b/);
      for (const { key, value } of unstorable) {
        expect(result.stderr).toContain(`${key}: `);
        if (!value.startsWith('[')) expect(result.stderr).toContain(value.replace(/"/g, ''));
      }
      await transaction(31).expect(404);
    });

    it('stores a decimal that rounds into its range exactly as sent', async () => {
      const path = await fixture('rounded.json', [
        transactionRecord(33, { sellingprice: 0.99, discount: 1.2345 }),
      ]);
      const result = await runImport('--transactions', path);
      expect(result.code).toBe(0);
      expect((await transaction(33).expect(200)).body).toMatchObject({
        sellingprice: 0.99,
        discount: 1.2345,
      });
    });

    it('refuses a checklist item naming an unknown requirement, rolling back what was already written', async () => {
      const catalogueBefore = (await context.http.get('/api/Requirement/GetRequirements')).text;
      const transactionBefore = (await transaction(1)).text;
      // The catalogue file is valid and is written first, inside the same database transaction.
      const changedCatalogue = await fixture('changed-catalogue.json', [
        { ...CATALOGUE[0], description: 'Changed' },
        {
          requirement_type_id: 6,
          description: 'Another type',
          stamp: null,
          Acquisition: [{ requirement_id: 61, required: 'Required' }],
        },
      ]);
      const unknownRequirement = await fixture('unknown-requirement.json', [
        transactionRecord(1, { brokername: 'Changed' }),
        transactionRecord(21, {
          requirements: [{ requirement_id: 999, submitted: false, stamp: null }],
        }),
      ]);
      const result = await runImport(
        '--requirements',
        changedCatalogue,
        '--transactions',
        unknownRequirement,
      );
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(unknownRequirement);
      expect(result.stderr).toMatch(/record 2\D[^\n]*\b21\b/);
      expect(result.stderr).toContain('transaction.requirements[0].requirement_id');
      expect(result.stderr).toContain('999');
      expect(result.stdout).not.toContain('Import complete');

      expect((await context.http.get('/api/Requirement/GetRequirements')).text).toBe(
        catalogueBefore,
      );
      expect((await transaction(1)).text).toBe(transactionBefore);
      await transaction(21).expect(404);
    });

    it('refuses a checklist naming one requirement twice, naming both items, and writes nothing', async () => {
      const path = await fixture('repeated-requirement.json', [
        transactionRecord(22),
        transactionRecord(23, {
          requirements: [
            { requirement_id: 11, submitted: true, stamp: null },
            { requirement_id: 12, submitted: false, stamp: null },
            { requirement_id: 11, submitted: false, stamp: null },
          ],
        }),
      ]);
      const catalogue = await fixture('catalogue-for-repeats.json', CATALOGUE);
      const result = await runImport('--requirements', catalogue, '--transactions', path);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        `${path}, record 2 (transaction_id 23), requirements[2] repeats the id of ${path}, record 2 (transaction_id 23), requirements[0].`,
      );
      await transaction(22).expect(404);
      await transaction(23).expect(404);
    });
  });

  describe('holds text to its columns, 4000 characters', () => {
    const full = (seed: string) => textOfLength(seed, 4000);
    const TEXT = wireModelOf(TransactionDto)
      .members.filter((member) => member.kind === 'string')
      .map((member) => member.name);
    const tooLong = (key: string) =>
      `${key}: The field ${key.replace(/.*\./, '')} must be a string with a maximum length of 4000.`;

    it('stores text of 4000 characters in every text column exactly, read back by both routes', async () => {
      const catalogue = await fixture('long-catalogue.json', [
        {
          requirement_type_id: 40,
          description: full('type'),
          stamp: null,
          Acquisition: [
            {
              requirement_id: 401,
              required: full('required'),
              requirement_description: full('description'),
              stamp: null,
              submitted: null,
            },
          ],
        },
      ]);
      const texts = Object.fromEntries(TEXT.map((name) => [name, full(name)]));
      const transactions = await fixture('long-transactions.json', [
        transactionRecord(40, {
          ...texts,
          requirements: [{ requirement_id: 401, submitted: true, stamp: null }],
        }),
      ]);
      const result = await runImport('--requirements', catalogue, '--transactions', transactions);
      expect({ code: result.code, stderr: result.stderr }).toEqual({
        code: 0,
        stderr: expect.any(String),
      });

      const stored = (await transaction(40).expect(200)).body as Json;
      expect(Object.fromEntries(TEXT.map((name) => [name, stored[name]]))).toEqual(texts);
      expect((stored.requirements as Json[])[0]).toMatchObject({
        required: full('required'),
        requirement_description: full('description'),
      });
      expect((await requirements()).find((type) => type.requirement_type_id === 40)).toMatchObject({
        description: full('type'),
      });
    });

    it.concurrent(
      'refuses text longer than its column, naming the record and every field',
      async () => {
        const long = {
          // Unbounded on the wire, as UpdateAgents ignores it; bounded by its column here.
          developer: 'x'.repeat(4001),
          submitted_requirements: 'x'.repeat(5000),
          // Bounded on the wire as well, since UpdateAgents stores it.
          brokername: 'x'.repeat(4001),
        };
        const path = await fixture('long-text.json', [
          transactionRecord(41),
          transactionRecord(42, long),
        ]);
        const result = await runImport('--transactions', path);
        expect(result.code).toBe(1);
        expect(result.stderr).toContain(`${path}, record 2 (transaction_id 42) is invalid:`);
        for (const field of Object.keys(long))
          expect(result.stderr).toContain(tooLong(`transaction.${field}`));
        await transaction(41).expect(404);
      },
    );

    it.concurrent(
      'refuses catalogue text of 4001 characters, naming the record and the field',
      async () => {
        const path = await fixture('long-acquisition.json', [
          {
            requirement_type_id: 43,
            description: 'Long',
            stamp: null,
            Acquisition: [{ requirement_id: 431, requirement_description: 'x'.repeat(4001) }],
          },
        ]);
        const result = await runImport('--requirements', path);
        expect(result.code).toBe(1);
        expect(result.stderr).toContain(`${path}, record 1 (requirement_type_id 43) is invalid:`);
        expect(result.stderr).toContain(
          tooLong('requirement.Acquisition[0].requirement_description'),
        );
        expect((await requirements()).map((type) => type.requirement_type_id)).not.toContain(43);
      },
    );
  });

  describe('inside the service (the demo data loads this way)', () => {
    it('gives its connection back with the foreign key checks it had', async () => {
      await context.running.seed({
        requirements: CATALOGUE,
        transactions: [transactionRecord(51)],
      });
      const dataSource = context.running.app.get(DataSource);
      // The pool hands out the connection released last: the import's.
      const [checks] = await dataSource.query<{ checks: number | string }[]>(
        context.kind === 'sqlite'
          ? 'SELECT foreign_keys AS checks FROM pragma_foreign_keys'
          : 'SELECT @@SESSION.foreign_key_checks AS checks',
      );
      expect(Number(checks.checks)).toBe(1);
      await transaction(51).expect(200);
    });
  });
});
