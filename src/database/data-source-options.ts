import { type DataSourceOptions, type EntitySchema } from 'typeorm';
import { type MysqlDataSourceOptions } from 'typeorm/driver/mysql/MysqlDataSourceOptions';
import { type DatabaseConfig } from '../config/app-config';
import { MYSQL_MIGRATIONS } from './migrations/mysql';
import { SQLITE_MIGRATIONS } from './migrations/sqlite';
import { NodePools } from './node-pools';
import { ReplicaSet } from './replica-set';

/** Entity classes, as TypeORM takes them. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export type EntityList = readonly (Function | EntitySchema)[];

/**
 * The one description of the database connection, used by the service, the import command and the
 * TypeORM CLI (through ormconfig.ts). The schema is only ever built by these migrations. Inside the
 * application each module registers its own entities (`TypeOrmModule.forFeature`); outside it, the
 * caller names them. On MySQL the type is the family's: `withServerDialect` settles which dialect the
 * server speaks before a data source is made of these options.
 */
export function dataSourceOptions(
  database: DatabaseConfig,
  entities: EntityList = [],
): DataSourceOptions {
  if (database.kind === 'sqlite') {
    return {
      type: 'better-sqlite3',
      database: database.path,
      entities: [...entities],
      migrations: SQLITE_MIGRATIONS,
      // The embedded database is the service's own: it is always brought up to date at start.
      migrationsRun: true,
      enableWAL: database.path !== ':memory:',
      timeout: 5000,
    };
  }
  return {
    type: 'mysql',
    ...(database.readUrls.length === 0 ? { url: database.url } : replication(database)),
    ...(database.nodes.length > 1 && { driver: nodePools(database).driver() }),
    entities: [...entities],
    migrations: MYSQL_MIGRATIONS,
    migrationsRun: database.migrationsRun,
    // DATETIME values are UTC instants on the wire between the service and the server.
    timezone: 'Z',
    charset: 'utf8mb4_unicode_ci',
    supportBigNumbers: true,
    bigNumberStrings: false,
    poolSize: 10,
    // UnitOfWork sends a unit's statements together (StatementBatches): START TRANSACTION with its
    // read, its writes with COMMIT. Every value still travels as an escaped `?` parameter, never as
    // SQL text.
    multipleStatements: true,
    extra: {
      // A request never waits on an unreachable server longer than this to connect…
      connectTimeout: 2000,
      // …nor queues without bound behind busy connections: past this it is refused (503).
      queueLimit: 100,
      enableKeepAlive: true,
    },
  };
}

/** The nodes of DATABASE_URL as one pool, the first that serves first (NodePools). */
function nodePools(database: Extract<DatabaseConfig, { kind: 'mysql' }>): NodePools {
  const addresses = database.nodes.map((url) => {
    const { hostname, port } = new URL(url);
    return { host: hostname, port: Number(port || 3306) };
  });
  return new NodePools(addresses, database.replicaRetryMs, database.nodeCheckMs);
}

/** How many failed connection attempts, net of successful ones, take a node out of the rotation. */
const NODE_ERRORS_BEFORE_RETRY_PAUSE = 3;

/**
 * The primary and its read replicas as one mysql2 PoolCluster. TypeORM sends a plain read made
 * outside a transaction (find, query builders) to a replica; raw `query` calls and every transaction
 * go to the primary. Each node gets its own pool, built from poolSize and `extra` below, so the
 * connect timeout and queue limit hold per node.
 *
 * Which replica takes a read is the ReplicaSet's choice (mysql2 as the `driver` option, its
 * PoolCluster wrapped): round robin among the replicas that serve, a replica whose connection fails
 * left out at once, and one that its check (every nodeCheckMs) finds away, stopped or further behind
 * than replicaMaxLagSeconds left out until it serves again. While none serves, reads fall back to
 * the primary, or with replicaFallback `none` are refused (503).
 *
 * The primary, a node of the same cluster, is left out for replicaRetryMs once its connections fail
 * NODE_ERRORS_BEFORE_RETRY_PAUSE times, and then tried again; mysql2's default of 0 would drop it for
 * the life of the process.
 */
function replication(
  database: Extract<DatabaseConfig, { kind: 'mysql' }>,
): Pick<MysqlDataSourceOptions, 'replication' | 'driver'> {
  const replicas = new ReplicaSet({
    fallback: database.replicaFallback,
    maxLagSeconds: database.replicaMaxLagSeconds,
    checkMs: database.nodeCheckMs,
    retryMs: database.replicaRetryMs,
  });
  return {
    driver: replicas.driver(),
    replication: {
      master: { url: database.url },
      slaves: database.readUrls.map((url) => ({ url })),
      // A failed connection attempt to the primary is made again at once, until the primary is left
      // out. A pool's refusal (queue limit) counts as a failure too, but only until one of the
      // requests queued there gets its connection.
      canRetry: true,
      removeNodeErrorCount: NODE_ERRORS_BEFORE_RETRY_PAUSE,
      restoreNodeTimeout: database.replicaRetryMs,
      // mysql2 reads its selector from `defaultSelector`, which TypeORM does not pass on; round robin
      // is mysql2's default, so this states the behaviour rather than sets it (the replicas' is the
      // ReplicaSet's own round robin).
      selector: 'RR',
    },
  };
}
