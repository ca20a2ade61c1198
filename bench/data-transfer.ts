import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createScratchDatabase } from '../scripts/scratch-database';
import { scripts } from '../package.json';
import { generateRequirements, type DatasetSize, writeTransactionsFile } from './dataset';
import { referenceBulkLoad } from './reference-bulk-load';

/** The broker the events scenarios publish to, on an exchange of this run's own. */
export const BENCH_EVENTS = {
  EVENTS_URL: process.env.BENCH_EVENTS_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
  EVENTS_EXCHANGE: `property-sales.bench.${process.pid}`,
};

/**
 * The import and export commands on a generated data set: transactions/s and the command's peak
 * memory, on a fresh database of each kind. `node dist/bench/data-transfer.js` runs this part alone;
 * `npm run bench` runs it after the HTTP scenarios.
 */

const DIST = join(__dirname, '..');
const IMPORT = join(DIST, 'src', 'data-import', 'main.js');
const EXPORT = join(DIST, 'src', 'data-import', 'export-main.js');

/** The Node.js flags of `npm run data:import` and `data:export`, as an operator runs them. */
const flagsOf = (script: string) => script.split(' ').filter((word) => word.startsWith('--'));

export interface TransferMeasure {
  readonly operation: string;
  readonly database: string;
  readonly transactions: number;
  readonly seconds: number;
  readonly transactionsPerSecond: number;
  readonly peakMb: number;
}

/** The measures, and on MariaDB the rate of the same writes from rows already in memory. */
export interface TransferReport {
  readonly measures: TransferMeasure[];
  readonly referenceRate?: number;
}

/**
 * Runs a command to its end; its summary (stdout) is returned, its progress goes to stderr. What the
 * previous command left in the page cache is written to disk first, so that writing does not compete
 * with this command's database.
 */
function runCommand(
  main: string,
  flags: readonly string[],
  args: readonly string[],
  env: Record<string, string>,
): Promise<string> {
  execFileSync('sync');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...flags, main, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.on('exit', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`${main} exited ${code}`)),
    );
  });
}

/**
 * Reads `1,000 transactions in 12s (83 transactions/s)` and `peak memory: 140 MB` from a summary; a
 * run under a second has no rate (`1,000 transactions in 0.4s`): it is the count over the seconds.
 */
function measureOf(operation: string, database: string, summary: string): TransferMeasure {
  const rate = /(?<![\d,])([\d,]+) transactions in (\S+)(?: \(([\d,]+) transactions\/s\))?/.exec(
    summary,
  );
  const peak = /peak memory: (\d+) MB/.exec(summary);
  const short = rate && rate[3] === undefined ? /^([\d.]+)s$/.exec(rate[2]) : undefined;
  if (!rate || !peak || short === null) throw new Error(`unexpected summary: ${summary}`);
  const number = (text: string) => Number(text.replace(/,/g, ''));
  const transactions = number(rate[1]);
  const seconds = short ? Number(short[1]) : transactions / number(rate[3]);
  return {
    operation,
    database,
    transactions,
    seconds,
    transactionsPerSecond: Math.round(transactions / seconds),
    peakMb: number(peak[1]),
  };
}

/**
 * Imports the data set into an empty database and exports it again, on SQLite and, when a server is
 * named, on MariaDB.
 */
export async function benchDataTransfer(
  directory: string,
  size: DatasetSize,
  mariadbServerUrl: string | undefined,
): Promise<TransferReport> {
  const files = {
    requirements: join(directory, 'transfer-requirements.json'),
    transactions: join(directory, 'transfer-transactions.json'),
  };
  await writeFile(files.requirements, JSON.stringify(generateRequirements(size)));
  await writeTransactionsFile(files.transactions, size);
  // Events on, as a deployment with a broker runs it: the run's one event commits with it.
  const commandEnv = (url: string) => ({
    DATABASE_URL: url,
    MIGRATIONS_RUN: 'true',
    DEMO_DATA: 'false',
    ...BENCH_EVENTS,
  });
  const databases: { name: string; create(): Promise<{ url: string; drop(): Promise<void> }> }[] = [
    {
      name: 'SQLite',
      create: () =>
        Promise.resolve({
          url: `sqlite:${join(directory, 'transfer.sqlite')}`,
          drop: () => Promise.resolve(),
        }),
    },
  ];
  if (mariadbServerUrl)
    databases.push({
      name: 'MariaDB',
      create: () => createScratchDatabase(mariadbServerUrl, 'transfer'),
    });
  const measures: TransferMeasure[] = [];
  for (const database of databases) {
    const target = await database.create();
    const env = commandEnv(target.url);
    try {
      const imported = await runCommand(
        IMPORT,
        flagsOf(scripts['data:import']),
        ['--requirements', files.requirements, '--transactions', files.transactions],
        env,
      );
      measures.push(measureOf('Import (JSON)', database.name, imported));
      const exported = await runCommand(
        EXPORT,
        flagsOf(scripts['data:export']),
        ['--transactions', join(directory, 'transfer-export.json')],
        env,
      );
      measures.push(measureOf('Export (JSON)', database.name, exported));
    } finally {
      await target.drop();
    }
  }
  if (!mariadbServerUrl) return { measures };
  // The reference: a fresh database, migrated and holding the catalogue (loaded by the import).
  const target = await createScratchDatabase(mariadbServerUrl, 'transfer');
  try {
    await runCommand(
      IMPORT,
      flagsOf(scripts['data:import']),
      ['--requirements', files.requirements, '--quiet'],
      commandEnv(target.url),
    );
    return { measures, referenceRate: await referenceBulkLoad(target.url, size) };
  } finally {
    await target.drop();
  }
}

/** The measures as a markdown table, then the MariaDB import's rate against the reference. */
export function transferTable({ measures, referenceRate }: TransferReport): string {
  const lines = [
    '| Command | Database | Transactions | Seconds | Transactions/s | Peak RSS MB |',
    '|---|---|---:|---:|---:|---:|',
    ...measures.map(
      (m) =>
        `| ${m.operation} | ${m.database} | ${m.transactions} | ${Math.round(m.seconds)} | ${m.transactionsPerSecond} | ${m.peakMb} |`,
    ),
  ];
  const imported = measures.find(
    (m) => m.operation === 'Import (JSON)' && m.database === 'MariaDB',
  );
  if (referenceRate && imported)
    lines.push(
      '',
      `MariaDB: the same rows written from memory (multi-row INSERTs, no reading): ${referenceRate} transactions/s; the import reaches ${(imported.transactionsPerSecond / referenceRate).toFixed(2)} of it.`,
    );
  return lines.join('\n');
}

const count = (name: string, fallback: number) =>
  process.env[name] ? Number(process.env[name]) : fallback;

/** `BENCH_TRANSFER_TRANSACTIONS` (100,000; 1,000,000 for the scale run) of the bench's data set. */
export const TRANSFER_SIZE: DatasetSize = {
  types: count('BENCH_TYPES', 50),
  recordsPerType: count('BENCH_RECORDS', 12),
  transactions: count('BENCH_TRANSFER_TRANSACTIONS', 100_000),
};

if (require.main === module) {
  void (async () => {
    const directory = await mkdtemp(join(tmpdir(), 'property-sales-transfer-'));
    try {
      const report = await benchDataTransfer(
        directory,
        TRANSFER_SIZE,
        process.env.BENCH_DATABASE_URL,
      );
      process.stdout.write(`${transferTable(report)}\n`);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  })().catch((error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  });
}
