import { type DynamicModule, type INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { parseArgs } from 'node:util';
import { type AppConfig, ConfigurationError, loadAppConfig } from '../config/app-config';
import { AppConfigModule } from '../config/app-config.module';
import { DatabaseModule } from '../database/database.module';
import { Outbox } from '../events/outbox';
import { setServiceTimeZone, WireModule } from '../wire';
import { DataImportModule } from './data-import.module';
import { ImportError } from './import-records';

@Module({})
class DataCommandModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: DataCommandModule,
      imports: [
        AppConfigModule.forRoot(config),
        DatabaseModule.forRoot(config.database),
        WireModule,
        DataImportModule,
      ],
    };
  }
}

/** The parts the import and export commands use, configured from the environment as the service is. */
export async function createCommandContext(): Promise<INestApplicationContext> {
  const config = loadAppConfig(process.env, { serving: false });
  setServiceTimeZone(config.timeZone);
  const context = await NestFactory.createApplicationContext(DataCommandModule.forRoot(config), {
    logger: ['error', 'warn'],
  });
  // The service's consumers hear of what a command changes, broker or not.
  await context.get(Outbox).enableIfConsumed();
  return context;
}

/** The files a data command reads or writes; a list file only beside the records it belongs to. */
export interface DataFiles {
  readonly requirements?: string;
  readonly acquisitions?: string;
  readonly transactions?: string;
  readonly checklist?: string;
  readonly quiet?: boolean;
}

/** The files the arguments name; undefined, the usage written to stderr, when they make no sense. */
export function readDataFiles(argv: string[], usage: string): DataFiles | undefined {
  let files: DataFiles;
  try {
    files = parseArgs({
      args: argv,
      options: {
        requirements: { type: 'string' },
        acquisitions: { type: 'string' },
        transactions: { type: 'string' },
        checklist: { type: 'string' },
        quiet: { type: 'boolean' },
      },
      strict: true,
    }).values;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${usage}\n`);
    return undefined;
  }
  if (
    (!files.requirements && !files.transactions) ||
    (files.acquisitions && !files.requirements) ||
    (files.checklist && !files.transactions)
  ) {
    process.stderr.write(`${usage}\n`);
    return undefined;
  }
  return files;
}

/**
 * Runs a data command and exits with its code. A bad file or configuration is said in one plain
 * message, anything else as `<failure>: <error>`; `outcome` says what it left behind.
 */
export function runDataCommand(
  run: (argv: string[]) => Promise<number>,
  failure: string,
  outcome = '',
): void {
  run(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      const message =
        error instanceof ImportError || error instanceof ConfigurationError
          ? error.message
          : `${failure}: ${String(error)}`;
      process.stderr.write(`\n${message}\n${outcome}`);
      process.exit(1);
    },
  );
}
