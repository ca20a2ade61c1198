import { type DynamicModule, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { parseArgs } from 'node:util';
import { ConfigurationError, type AppConfig, loadAppConfig } from '../config/app-config';
import { AppConfigModule } from '../config/app-config.module';
import { DatabaseModule } from '../database/database.module';
import { RequirementDto } from '../requirement/dto/requirement.dto';
import { TransactionDto } from '../transaction/dto/transaction.dto';
import { setServiceTimeZone, WireFormats, WireModule } from '../wire';
import { DataImportModule } from './data-import.module';
import { ImportError, readRecordsFile } from './import-records';
import { type ImportBatch, ImportService, type ImportSummary } from './import.service';

const USAGE = 'usage: npm run data:import -- [--requirements FILE] [--transactions FILE]';

@Module({})
class ImportCommandModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: ImportCommandModule,
      imports: [
        AppConfigModule.forRoot(config),
        DatabaseModule.forRoot(config.database),
        WireModule,
        DataImportModule,
      ],
    };
  }
}

function describe(summary: ImportSummary): string {
  const line = (what: string, count: { created: number; updated: number }) =>
    `  ${what}: ${count.created} created, ${count.updated} updated`;
  return [
    'Import complete:',
    line('requirement types', summary.requirementTypes),
    line('acquisition records', summary.acquisitions),
    line('transactions', summary.transactions),
  ].join('\n');
}

/** Validates the files completely, then loads them in one database transaction. */
async function run(argv: string[]): Promise<number> {
  let files: { requirements?: string; transactions?: string };
  try {
    files = parseArgs({
      args: argv,
      options: { requirements: { type: 'string' }, transactions: { type: 'string' } },
      strict: true,
    }).values;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (!files.requirements && !files.transactions) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const config = loadAppConfig(process.env, { serving: false });
  setServiceTimeZone(config.timeZone);
  const context = await NestFactory.createApplicationContext(ImportCommandModule.forRoot(config), {
    logger: ['error', 'warn'],
  });
  try {
    const formats = context.get(WireFormats);
    const progress = (message: string) => process.stderr.write(`${message}\n`);
    const batch: ImportBatch = {};
    if (files.requirements) {
      progress(`Reading ${files.requirements}`);
      const records = await readRecordsFile(
        files.requirements,
        formats,
        RequirementDto,
        'requirement_type_id',
      );
      Object.assign(batch, { requirements: { source: files.requirements, records } });
    }
    if (files.transactions) {
      progress(`Reading ${files.transactions}`);
      const records = await readRecordsFile(
        files.transactions,
        formats,
        TransactionDto,
        'transaction_id',
      );
      Object.assign(batch, { transactions: { source: files.transactions, records } });
    }
    const summary = await context.get(ImportService).run(batch, progress);
    process.stdout.write(`${describe(summary)}\n`);
    return 0;
  } finally {
    await context.close();
  }
}

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const message =
      error instanceof ImportError || error instanceof ConfigurationError
        ? error.message
        : `Import failed: ${String(error)}`;
    process.stderr.write(`${message}\nNothing was imported.\n`);
    process.exit(1);
  },
);
