// Before anything else: on another Node.js, a native module would crash the command without a reason.
import '../node-version';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { RequirementDto } from '../requirement';
import { TransactionDto } from '../transaction';
import { createCommandContext, readDataFiles, runDataCommand } from './command-context';
import { type ImportBatch, ImportService, type ImportSummary } from './import.service';
import { count, peakMemoryLine, ProgressReport, rateLine } from './progress';
import { type RecordFile, recordFile } from './record-files';

const USAGE =
  'usage: npm run data:import -- [--requirements FILE [--acquisitions FILE]] ' +
  '[--transactions FILE [--checklist FILE]] [--quiet]';

function describe(summary: ImportSummary, milliseconds: number): string {
  const line = (what: string, counted: { created: number; updated: number }) =>
    `  ${what}: ${count(counted.created)} created, ${count(counted.updated)} updated`;
  const { created, updated } = summary.transactions;
  return [
    'Import complete:',
    line('requirement types', summary.requirementTypes),
    line('acquisition records', summary.acquisitions),
    line('transactions', summary.transactions),
    `  ${rateLine(created + updated, 'transactions', milliseconds)}`,
    `  ${peakMemoryLine()}`,
  ].join('\n');
}

/**
 * Reads the files as streams, checking each record as it comes, and writes them in batches in one
 * database transaction: nothing is stored unless every record is valid.
 */
async function run(argv: string[]): Promise<number> {
  const options = readDataFiles(argv, USAGE);
  if (!options) return 2;
  const context = await createCommandContext();
  const { importMaxRecordSize } = context.get<AppConfig>(APP_CONFIG);
  // From the first record read: the rate is the data's, not the start-up's.
  const started = Date.now();
  try {
    const report = new ProgressReport(process.stderr, options.quiet ?? false);
    const files: RecordFile<object>[] = [];
    const batch: {
      -readonly [K in keyof ImportBatch]: ImportBatch[K];
    } = {};
    if (options.requirements) {
      const file = await recordFile(
        options.requirements,
        RequirementDto,
        'requirement_type_id',
        importMaxRecordSize,
        options.acquisitions === undefined ? undefined : { path: options.acquisitions },
      );
      files.push(file);
      batch.requirements = { source: file.source, records: file };
    }
    if (options.transactions) {
      const file = await recordFile(
        options.transactions,
        TransactionDto,
        'transaction_id',
        importMaxRecordSize,
        options.checklist === undefined ? undefined : { path: options.checklist },
      );
      files.push(file);
      batch.transactions = { source: file.source, records: file };
    }
    const summary = await context.get(ImportService).run(batch, (source, records) => {
      const file = files.find((candidate) => candidate.source === source)!;
      if (records === 0) report.begin(source, file.totalBytes);
      report.update(source, { records, done: file.bytesRead, total: file.totalBytes });
    });
    report.end();
    process.stdout.write(`${describe(summary, Date.now() - started)}\n`);
    return 0;
  } finally {
    await context.close();
  }
}

runDataCommand(run, 'Import failed', 'Nothing was imported.\n');
