import { type DataSource, QueryFailedError } from 'typeorm';
import { type Row, type Statement } from '../common/statement';

/** A statement's result: its rows when it reads, the driver's summary when it writes. */
export type StatementResult = Row[] | object;

/** What the batches use of a pooled mysql2 connection, as TypeORM's MySQL driver hands it out. */
export interface MysqlConnection {
  query(
    sql: string,
    values: unknown[],
    callback: (error: Error | null, result: unknown) => void,
  ): void;
  release(): void;
}

/** What the batches use of better-sqlite3's connection, which is synchronous. */
export interface SqliteConnection {
  readonly inTransaction: boolean;
  prepare(sql: string): SqlitePrepared;
}

interface SqlitePrepared {
  readonly reader: boolean;
  all(...parameters: unknown[]): Row[];
  run(...parameters: unknown[]): object;
}

/** Prepared statements kept per connection; past this many distinct texts the cache starts over. */
const PREPARED_LIMIT = 256;

/**
 * Statements sent as one unit: on MySQL in one round trip (the pool allows several statements per
 * query; every value still travels as an escaped `?` parameter), on SQLite one after the other,
 * synchronously, as prepared statements. Each statement is logged through the data source's logger on
 * its own, as TypeORM's query runner logs what it sends, and a failure comes back as TypeORM's
 * QueryFailedError, so callers cannot tell these statements from the runner's. They run on pooled
 * connections of TypeORM's own driver, without a query runner and its entity manager per call.
 */
export class StatementBatches {
  private readonly prepared = new Map<string, SqlitePrepared>();

  constructor(private readonly dataSource: DataSource) {}

  /** Runs `statements` on a MySQL connection in one round trip; each one's result. */
  sendMysql(
    connection: MysqlConnection,
    statements: readonly Statement[],
  ): Promise<StatementResult[]> {
    const sql = statements.map((statement) => statement.sql).join('; ');
    const parameters = statements.flatMap((statement) => statement.parameters);
    this.log(statements);
    return new Promise((resolve, reject) => {
      connection.query(sql, parameters, (error, result) => {
        if (error) reject(this.failed(error, sql, parameters));
        // One statement's result comes alone; several come as a list, one entry each.
        else resolve(statements.length === 1 ? [result as object] : (result as object[]));
      });
    });
  }

  /** Runs `statements` on the SQLite connection, in order, now; each one's result. */
  runSqlite(connection: SqliteConnection, statements: readonly Statement[]): StatementResult[] {
    this.log(statements);
    return statements.map(({ sql, parameters }) => {
      try {
        const prepared = this.prepare(connection, sql);
        return prepared.reader ? prepared.all(...parameters) : prepared.run(...parameters);
      } catch (error) {
        throw this.failed(error, sql, [...parameters]);
      }
    });
  }

  private prepare(connection: SqliteConnection, sql: string): SqlitePrepared {
    let prepared = this.prepared.get(sql);
    if (!prepared) {
      // UpdateAgents' UPDATE names the members a call changes: a bounded but large set of texts.
      if (this.prepared.size === PREPARED_LIMIT) this.prepared.clear();
      prepared = connection.prepare(sql);
      this.prepared.set(sql, prepared);
    }
    return prepared;
  }

  private log(statements: readonly Statement[]): void {
    for (const { sql, parameters } of statements)
      this.dataSource.logger.logQuery(sql, [...parameters]);
  }

  private failed(error: unknown, sql: string, parameters: unknown[]): QueryFailedError {
    this.dataSource.logger.logQueryError(error as Error, sql, parameters);
    return new QueryFailedError(sql, parameters, error as Error);
  }
}
