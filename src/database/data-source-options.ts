import { type DataSourceOptions } from 'typeorm';
import { type DatabaseConfig } from '../config/app-config';
import { ENTITIES } from './entities';
import { MYSQL_MIGRATIONS } from './migrations/mysql';
import { SQLITE_MIGRATIONS } from './migrations/sqlite';

/**
 * The one description of the database connection, used by the service, the import command and the
 * TypeORM CLI (through ormconfig.ts). The schema is only ever built by these migrations.
 */
export function dataSourceOptions(database: DatabaseConfig): DataSourceOptions {
  if (database.kind === 'sqlite') {
    return {
      type: 'better-sqlite3',
      database: database.path,
      entities: ENTITIES,
      migrations: SQLITE_MIGRATIONS,
      // The embedded database is the service's own: it is always brought up to date at start.
      migrationsRun: true,
      enableWAL: database.path !== ':memory:',
      timeout: 5000,
    };
  }
  return {
    type: database.flavour,
    url: database.url,
    entities: ENTITIES,
    migrations: MYSQL_MIGRATIONS,
    migrationsRun: database.migrationsRun,
    // DATETIME values are UTC instants on the wire between the service and the server.
    timezone: 'Z',
    charset: 'utf8mb4_unicode_ci',
    supportBigNumbers: true,
    bigNumberStrings: false,
    poolSize: 10,
    extra: {
      // A request never waits on an unreachable server longer than this to connect…
      connectTimeout: 2000,
      // …nor queues without bound behind busy connections: past this it is refused (503).
      queueLimit: 100,
      enableKeepAlive: true,
    },
  };
}
