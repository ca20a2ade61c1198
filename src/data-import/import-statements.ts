import { type DataSource, type EntityManager } from 'typeorm';
import { type ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { ApplyValueTransformers } from 'typeorm/util/ApplyValueTransformers';

/**
 * Rows a statement carries at most: its bound parameters stay under SQLite's limit (32,766), and a
 * statement of a thousand transactions stays far below MySQL's packet size.
 */
const MAX_PARAMETERS = 30_000;
const MAX_ROWS = 5_000;

/**
 * Multi-row statements of one table, written out once from the entity's metadata: an import writes
 * hundreds of rows a statement, and TypeORM's query builders would rebuild each statement and its
 * parameter map row by row. Values still go through the column transformers and the driver's own
 * conversions, so a row is stored exactly as an entity save would store it.
 */
export class MultiRowStatements<T extends object> {
  private readonly columns: readonly ColumnMetadata[];
  private readonly table: string;
  private readonly rowPlaceholders: string;
  private readonly insertPrefix: string;
  private readonly upsertClause: string;
  private readonly counter?: string;
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
    const escape = (name: string) => dataSource.driver.escape(name);
    const metadata = dataSource.getMetadata(entity);
    this.columns = metadata.columns;
    this.table = escape(metadata.tableName);
    this.counter = counter;
    this.insertPrefix = `INSERT INTO ${this.table} (${this.columns
      .map((column) => escape(column.databaseName))
      .join(', ')}) VALUES `;
    this.rowPlaceholders = `(${this.columns.map(() => '?').join(', ')})`;
    this.rowsPerStatement = Math.min(MAX_ROWS, Math.floor(MAX_PARAMETERS / this.columns.length));
    const updated = this.columns
      .map((column) => column.databaseName)
      .filter((name) => !key.includes(name));
    const assignments = updated.map((name) => {
      const column = escape(name);
      if (name === counter) return `${column} = ${this.table}.${column} + 1`;
      return dataSource.options.type === 'better-sqlite3'
        ? `${column} = excluded.${column}`
        : `${column} = VALUES(${column})`;
    });
    this.upsertClause =
      dataSource.options.type === 'better-sqlite3'
        ? ` ON CONFLICT (${key.map(escape).join(', ')}) DO UPDATE SET ${assignments.join(', ')}`
        : ` ON DUPLICATE KEY UPDATE ${assignments.join(', ')}`;
  }

  /** Inserts the rows, a statement per `rowsPerStatement`. */
  insert(manager: EntityManager, rows: readonly T[]): Promise<void> {
    return this.write(manager, rows, '');
  }

  /** Inserts the rows, or overwrites the stored row of the same key. */
  upsert(manager: EntityManager, rows: readonly T[]): Promise<void> {
    return this.write(manager, rows, this.upsertClause);
  }

  private async write(manager: EntityManager, rows: readonly T[], suffix: string): Promise<void> {
    for (let start = 0; start < rows.length; start += this.rowsPerStatement) {
      const part = rows.slice(start, start + this.rowsPerStatement);
      const parameters: unknown[] = [];
      for (const row of part) {
        for (const column of this.columns) {
          // These entities embed nothing: a row's property is its column's value.
          let value: unknown =
            column.databaseName === this.counter ? 1 : row[column.propertyName as keyof T];
          if (column.transformer)
            value = ApplyValueTransformers.transformTo(column.transformer, value);
          parameters.push(
            value === undefined
              ? null
              : this.dataSource.driver.preparePersistentValue(value, column),
          );
        }
      }
      const values = new Array<string>(part.length).fill(this.rowPlaceholders).join(', ');
      await manager.query(`${this.insertPrefix}${values}${suffix}`, parameters);
    }
  }
}
