import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { type DataSourceOptions } from 'typeorm';

/** The SQL dialects of the MySQL family, as TypeORM names its drivers for them. */
export type MysqlDialect = 'mysql' | 'mariadb';

/** As long as a request waits for a connection: a server that does not answer fails the attempt. */
const CONNECT_TIMEOUT_MS = 2000;

/**
 * Options whose SQL dialect is the one the server reports (`SELECT VERSION()`), never the one the
 * URL's scheme suggests: operators write mysql:// for MariaDB all the time, and TypeORM picks its
 * SQL by the driver type it is given (MySQL 8's `FOR SHARE` is a syntax error on MariaDB, and the
 * two read column defaults differently). Asked once per connection attempt, of the primary or of
 * the first of `nodes` that answers; options of another database come back as they are.
 */
export async function withServerDialect(
  options: DataSourceOptions,
  nodes: readonly string[] = [],
): Promise<DataSourceOptions> {
  if (options.type !== 'mysql' && options.type !== 'mariadb') return options;
  const url = options.replication?.master.url ?? options.url;
  if (url === undefined) throw new Error('A MySQL data source names its server by URL.');
  return { ...options, type: await firstAnswer(nodes.length > 0 ? nodes : [url]) };
}

/** The dialect of the first of the nodes that answers; the last failure when none does. */
async function firstAnswer(urls: readonly string[]): Promise<MysqlDialect> {
  let failure: unknown;
  for (const url of urls) {
    try {
      return await serverDialect(url);
    } catch (error) {
      failure = error;
    }
  }
  throw failure;
}

async function serverDialect(url: string): Promise<MysqlDialect> {
  const connection = await createConnection({ uri: url, connectTimeout: CONNECT_TIMEOUT_MS });
  try {
    const [[{ version }]] = await connection.query<(RowDataPacket & { version: string })[]>(
      'SELECT VERSION() AS version',
    );
    return /mariadb/i.test(version) ? 'mariadb' : 'mysql';
  } finally {
    connection.destroy();
  }
}
