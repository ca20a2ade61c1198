import { type DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { type DatabaseConfig } from '../config/app-config';
import { EVENT_ENTITIES } from '../events/entities';
import { Outbox } from '../events/outbox';
import { dataSourceOptions } from './data-source-options';
import { SchemaCheck } from './schema-check';
import { withServerDialect } from './server-dialect';
import { UnitOfWork } from './unit-of-work';

@Global()
@Module({})
export class DatabaseModule {
  static forRoot(database: DatabaseConfig): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => ({
            ...dataSourceOptions(database),
            // Each module registers its own entities with TypeOrmModule.forFeature.
            autoLoadEntities: true,
            retryAttempts: 2,
            retryDelay: 1000,
          }),
          // Each attempt to connect asks the server which SQL dialect it speaks.
          dataSourceFactory: async (options) =>
            new DataSource(
              await withServerDialect(options!, database.kind === 'mysql' ? database.nodes : []),
            ),
        }),
        // Every unit of work may write to the outbox.
        TypeOrmModule.forFeature(EVENT_ENTITIES),
      ],
      // SchemaCheck refuses to start on a schema this release was not built for.
      providers: [UnitOfWork, SchemaCheck, Outbox],
      exports: [UnitOfWork, SchemaCheck, Outbox],
    };
  }
}
