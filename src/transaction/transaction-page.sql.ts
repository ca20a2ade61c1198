import { type DataSource } from 'typeorm';
import { type ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { type Statement } from '../common/statement';
import { AGENT_ROLES } from './agent-chain';
import { TransactionEntity } from './entities/transaction.entity';
import { INT32_MIN } from '../wire';
import { type PageRequest, type TransactionFilter } from './list-transactions.query';

/** A condition of the page statement, with its `?` parameters in order. */
interface Condition {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

/**
 * The statement reading one page of ListTransactions, keyset-paged so that every page is a range scan
 * of one index, however deep the caller has paged: `… WHERE <filters> AND <after the last key> ORDER
 * BY <key> LIMIT n`, never an OFFSET. The key is transaction_id, or (stamp, transaction_id) when the
 * listing is of changes since an instant; each filter has its (column, transaction_id) index and the
 * stamp its (stamp, transaction_id) one, so the planner reads the rows in key order from the index of
 * one condition and checks the others on them.
 *
 * An agent id may sit in any of seven columns, and an OR over them cannot be read in key order from
 * one index (MariaDB answers it with an index merge and a sort of every matching row). So each column
 * is its own keyset range scan of its index, n keys at most, and only those few keys are merged,
 * de-duplicated (one agent may hold two roles of a chain), cut to n and joined to their rows.
 */
export class TransactionPageSql {
  private readonly escape: (name: string) => string;
  /** The transactions' table, aliased `transaction` as the select list names it. */
  private readonly table: string;
  private readonly stampColumn: ColumnMetadata;

  constructor(
    private readonly dataSource: DataSource,
    /** The select list of the transaction's row, from the table aliased `transaction`. */
    private readonly selected: string,
  ) {
    this.escape = (name) => dataSource.driver.escape(name);
    const transactions = dataSource.getMetadata(TransactionEntity);
    this.table = `${this.escape(transactions.tableName)} ${this.escape('transaction')}`;
    this.stampColumn = transactions.findColumnWithPropertyName('stamp')!;
  }

  /** The page's rows in key order, one more than the limit when a next page exists. */
  rows(request: PageRequest): Statement {
    return this.build(request, this.selected, request.limit + 1);
  }

  /** The ids of the page's rows, as `transaction_id`: what its checklists are read by. */
  ids(request: PageRequest): Statement {
    return this.build(
      request,
      `${this.column('transaction_id')} AS ${this.escape('transaction_id')}`,
      request.limit,
    );
  }

  private build({ filter, after }: PageRequest, selected: string, rows: number): Statement {
    const byStamp = filter.changedSince !== undefined;
    const key = byStamp ? ['stamp', 'transaction_id'] : ['transaction_id'];
    const order = key.map((column) => `${this.column(column)} ASC`).join(', ');
    const conditions: Condition[] = [];
    if (filter.status !== undefined) conditions.push(this.sameText('status', filter.status));
    if (filter.financetype !== undefined)
      conditions.push(this.sameText('financetype', filter.financetype));
    conditions.push(
      after ? this.after(after.transactionId, after.stamp) : this.first(byStamp, filter),
    );
    if (filter.agentId === undefined) {
      const where = this.where(conditions);
      return {
        sql: `SELECT ${selected} FROM ${this.table}${where.sql} ORDER BY ${order} LIMIT ?`,
        parameters: [...where.parameters, rows],
      };
    }
    const keys = key.map((column) => this.escape(column)).join(', ');
    const keyOrder = key.map((column) => `${this.escape(column)} ASC`).join(', ');
    const branches = AGENT_ROLES.map((field) => {
      const where = this.where([this.equals(field, filter.agentId), ...conditions]);
      const selectedKey = key.map((column) => this.column(column)).join(', ');
      return {
        sql:
          `SELECT ${keys} FROM (SELECT ${selectedKey} FROM ${this.table}${where.sql}` +
          ` ORDER BY ${order} LIMIT ?) ${this.escape(`by_${field}`)}`,
        parameters: [...where.parameters, rows],
      };
    });
    const page = this.escape('page');
    return {
      sql:
        `SELECT ${selected} FROM (SELECT DISTINCT ${keys} FROM (` +
        branches.map((branch) => branch.sql).join(' UNION ALL ') +
        `) ${this.escape('matched')} ORDER BY ${keyOrder} LIMIT ?) ${page}` +
        ` JOIN ${this.table} ON ${this.column('transaction_id')} = ${page}.${this.escape('transaction_id')}` +
        ` ORDER BY ${order}`,
      parameters: [...branches.flatMap((branch) => branch.parameters), rows],
    };
  }

  private column(name: string): string {
    return `${this.escape('transaction')}.${this.escape(name)}`;
  }

  private equals(column: string, value: unknown): Condition {
    return { sql: `${this.column(column)} = ?`, parameters: [value] };
  }

  /**
   * The same text, character for character, as SQLite compares it: MariaDB's collation
   * (utf8mb4_unicode_ci) also equates other letter cases and trailing spaces. Its index still finds
   * the rows by the collation; comparing the bytes (utf8mb4_bin would still pad) keeps the exact ones.
   */
  private sameText(column: string, value: string): Condition {
    const equals = this.equals(column, value);
    if (this.dataSource.options.type === 'better-sqlite3') return equals;
    return {
      sql: `${equals.sql} AND CAST(${this.column(column)} AS BINARY) = CAST(? AS BINARY)`,
      parameters: [value, value],
    };
  }

  /**
   * Where the first page starts: at changed_since, or at the smallest id. That one filters nothing; it
   * has the first page read as every later one is, a range from a key (without it, the planners walk
   * the whole index in order and rely on the LIMIT to stop).
   */
  private first(byStamp: boolean, { changedSince }: TransactionFilter): Condition {
    return byStamp
      ? { sql: `${this.column('stamp')} >= ?`, parameters: [this.stamp(changedSince!)] }
      : { sql: `${this.column('transaction_id')} >= ?`, parameters: [INT32_MIN] };
  }

  /**
   * After the last key. By stamp, as two ranges of the (stamp, transaction_id) index, which MariaDB
   * seeks exactly (it reads a row constructor `(stamp, transaction_id) > (?, ?)` by scanning the whole
   * index), under a bound on the stamp alone, without which SQLite may walk the index from its start:
   * SQLite seeks to the stamp and steps over the rows sharing it up to the last id.
   */
  private after(transactionId: number, stamp: Date | undefined): Condition {
    if (!stamp) return { sql: `${this.column('transaction_id')} > ?`, parameters: [transactionId] };
    const at = this.stamp(stamp);
    const column = this.column('stamp');
    return {
      sql:
        `${column} >= ? AND ((${column} = ? AND ${this.column('transaction_id')} > ?)` +
        ` OR ${column} > ?)`,
      parameters: [at, at, transactionId, at],
    };
  }

  /** An instant as the driver stores the stamp, so the comparison is the column's own. */
  private stamp(value: Date): unknown {
    return this.dataSource.driver.preparePersistentValue(value, this.stampColumn);
  }

  /** Every page has a condition: where it starts (first) or the key it follows (after). */
  private where(conditions: readonly Condition[]): Condition {
    return {
      sql: ` WHERE ${conditions.map((condition) => condition.sql).join(' AND ')}`,
      parameters: conditions.flatMap((condition) => condition.parameters),
    };
  }
}
