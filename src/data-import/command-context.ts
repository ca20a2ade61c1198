import { type DynamicModule, type INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type AppConfig, loadAppConfig } from '../config/app-config';
import { AppConfigModule } from '../config/app-config.module';
import { DatabaseModule } from '../database/database.module';
import { setServiceTimeZone, WireModule } from '../wire';
import { DataImportModule } from './data-import.module';

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
  return NestFactory.createApplicationContext(DataCommandModule.forRoot(config), {
    logger: ['error', 'warn'],
  });
}
