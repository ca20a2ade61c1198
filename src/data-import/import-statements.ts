import { escape as escapeMysql, type SqlValue, type Timezone } from 'mysql2';
import { type DataSource, type EntityManager } from 'typeorm';
import { type ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { ApplyValueTransformers } from 'typeorm/util/ApplyValueTransformers';

/**
 * Rows a statement carries at most: its bound parameters stay under SQLite's limit (32,766), and a
 * statement of a thousand transactions stays far below MySQL's packet size.
 */
const MAX_PARAMETERS = 30_000;
const MAX_ROWS = 5_000;

declare const encodedRow: unique symbol;

/**
 * A row as its statement takes it, encoded once as it is read: on MySQL/MariaDB its values tuple as
 * SQL text, escaped as the driver escapes bound values; on SQLite its values, bound as parameters.
 * Either is a flat value, so a batch waiting for the database holds no graph of objects for the
 * garbage collector to trace.
 */
export type EncodedRow = (string | unknown[]) & { readonly [encodedRow]: true };

/**
 * Multi-row statements of one table, written out once from the entity's metadata: an import writes
 * hundreds of rows a statement, and TypeORM's query builders would rebuild each statement and its
 * parameter map row by row. Values still go through the column transformers and the driver's own
 * conversions, so a row is stored exactly as an entity save would store it.
 */
export class MultiRowStatements<T extends object> {
  private readonly columns: readonly ColumnMetadata[];
  private readonly insertPrefix: string;
  private readonly upsertClause: string;
  private readonly counter?: string;
  /** MySQL/MariaDB: a value as SQL text, in the connection's time zone. SQLite binds values. */
  private readonly escape?: (value: unknown) => string;
  private readonly rowPlaceholders: string;
  readonly rowsPerStatement: number;

  /**
   * `key` is the conflict target of an upsert; `counter`, when given, is a column that an upsert sets
   * to 1 on insert and advances by one on update (a row version).
   */
  constructor(
    private readonly dataSource: DataSource,
    entity: new () => T,
    key: readonly string[],
    counter?: string,
  ) {
    const escapeName = (name: string) => dataSource.driver.escape(name);
    const metadata = dataSource.getMetadata(entity);
    const table = escapeName(metadata.tableName);
    const sqlite = dataSource.options.type === 'better-sqlite3';
    this.columns = metadata.columns;
    this.counter = counter;
    this.insertPrefix = `INSERT INTO ${table} (${this.columns
      .map((column) => escapeName(column.databaseName))
      .join(', ')}) VALUES `;
    this.rowPlaceholders = `(${this.columns.map(() => '?').join(', ')})`;
    this.rowsPerStatement = Math.min(MAX_ROWS, Math.floor(MAX_PARAMETERS / this.columns.length));
    if (!sqlite) {
      const timezone = (dataSource.options as { timezone?: Timezone }).timezone;
      this.escape = (value) => escapeMysql(value as SqlValue, false, timezone);
    }
    const assignments = this.columns
      .map((column) => column.databaseName)
      .filter((name) => !key.includes(name))
      .map((name) => {
        const column = escapeName(name);
        if (name === counter) return `${column} = ${table}.${column} + 1`;
        return sqlite ? `${column} = excluded.${column}` : `${column} = VALUES(${column})`;
      });
    this.upsertClause = sqlite
      ? ` ON CONFLICT (${key.map(escapeName).join(', ')}) DO UPDATE SET ${assignments.join(', ')}`
      : ` ON DUPLICATE KEY UPDATE ${assignments.join(', ')}`;
  }

  /** The row's values as the statement stores them. */
  encode(row: T): EncodedRow {
    const values = this.columns.map((column): unknown => {
      // These entities embed nothing: a row's property is its column's value.
      let value: unknown =
        column.databaseName === this.counter ? 1 : row[column.propertyName as keyof T];
      if (column.transformer) value = ApplyValueTransformers.transformTo(column.transformer, value);
      return value === undefined
        ? null
        : this.dataSource.driver.preparePersistentValue(value, column);
    });
    const { escape } = this;
    return (escape ? `(${values.map(escape).join(',')})` : values) as EncodedRow;
  }

  /** Inserts the rows, a statement per `rowsPerStatement`. */
  insert(manager: EntityManager, rows: readonly EncodedRow[]): Promise<void> {
    return this.write(manager, rows, '');
  }

  /** Inserts the rows, or overwrites the stored row of the same key. */
  upsert(manager: EntityManager, rows: readonly EncodedRow[]): Promise<void> {
    return this.write(manager, rows, this.upsertClause);
  }

  private async write(
    manager: EntityManager,
    rows: readonly EncodedRow[],
    suffix: string,
  ): Promise<void> {
    for (let start = 0; start < rows.length; start += this.rowsPerStatement) {
      const part = rows.slice(start, start + this.rowsPerStatement);
      if (this.escape) {
        await manager.query(`${this.insertPrefix}${part.join(',')}${suffix}`);
      } else {
        const values = new Array<string>(part.length).fill(this.rowPlaceholders).join(', ');
        await manager.query(`${this.insertPrefix}${values}${suffix}`, part.flat());
      }
    }
  }
}
