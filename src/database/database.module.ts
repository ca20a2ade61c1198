import { type DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { type DatabaseConfig } from '../config/app-config';
import { dataSourceOptions } from './data-source-options';
import { SchemaCheck } from './schema-check';
import { UnitOfWork } from './unit-of-work';

@Global()
@Module({})
export class DatabaseModule {
  static forRoot(database: DatabaseConfig): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRoot({
          ...dataSourceOptions(database),
          // Each module registers its own entities with TypeOrmModule.forFeature.
          autoLoadEntities: true,
          retryAttempts: 2,
          retryDelay: 1000,
        }),
      ],
      // SchemaCheck refuses to start on a schema this release was not built for.
      providers: [UnitOfWork, SchemaCheck],
      exports: [UnitOfWork, SchemaCheck],
    };
  }
}
