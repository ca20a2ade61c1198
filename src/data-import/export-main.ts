// Before anything else: on another Node.js, a native module would crash the command without a reason.
import '../node-version';
import { RequirementDto } from '../requirement';
import { TransactionDto } from '../transaction';
import { WireFormats } from '../wire';
import { createCommandContext, readDataFiles, runDataCommand } from './command-context';
import { ExportService, type ExportTargets } from './export.service';
import { count, peakMemoryLine, ProgressReport, rateLine } from './progress';
import { recordWriter } from './record-writers';

const USAGE =
  'usage: npm run data:export -- [--requirements FILE [--acquisitions FILE]] ' +
  '[--transactions FILE [--checklist FILE]] [--quiet]';

/** Writes the catalogue and the transactions to files, in the shapes the import reads back. */
async function run(argv: string[]): Promise<number> {
  const options = readDataFiles(argv, USAGE);
  if (!options) return 2;
  const context = await createCommandContext();
  // From the first record read: the rate is the data's, not the start-up's.
  const started = Date.now();
  try {
    const formats = context.get(WireFormats);
    const list = (path: string | undefined) => (path === undefined ? undefined : { path });
    const targets: ExportTargets = {
      requirements:
        options.requirements === undefined
          ? undefined
          : recordWriter(
              options.requirements,
              formats,
              RequirementDto,
              'requirement_type_id',
              list(options.acquisitions),
            ),
      transactions:
        options.transactions === undefined
          ? undefined
          : recordWriter(
              options.transactions,
              formats,
              TransactionDto,
              'transaction_id',
              list(options.checklist),
            ),
    };
    const report = new ProgressReport(process.stderr, options.quiet ?? false);
    let current: string | undefined;
    const summary = await context.get(ExportService).run(targets, (what, done, total) => {
      const source = what === 'requirements' ? options.requirements! : options.transactions!;
      if (current !== source) {
        current = source;
        report.begin(source, total);
      }
      report.update(source, { records: done, done, total });
    });
    report.end();
    process.stdout.write(
      [
        'Export complete:',
        `  requirement types: ${count(summary.requirementTypes)}`,
        `  transactions: ${count(summary.transactions)}`,
        `  ${rateLine(summary.transactions, 'transactions', Date.now() - started)}`,
        `  ${peakMemoryLine()}`,
      ].join('\n') + '\n',
    );
    return 0;
  } finally {
    await context.close();
  }
}

runDataCommand(run, 'Export failed');
