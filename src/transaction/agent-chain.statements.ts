import { type DataSource } from 'typeorm';
import { type ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { type Row, type Statement, type Write } from '../common/statement';
import { type CommitProof } from '../database/unit-of-work';
import { AGENT_CHAIN_FIELDS, type AgentChainField, type AgentChange } from './agent-chain';
import { AgentAssignmentEntity } from './entities/agent-assignment.entity';
import { TransactionEntity } from './entities/transaction.entity';

/** What UpdateAgents reads of the row it locks. */
export type LockedTransaction = Pick<
  TransactionEntity,
  'transaction_id' | 'locked' | 'row_version' | AgentChainField
>;

const LOCKED_PROPERTIES = [
  'transaction_id',
  'locked',
  'row_version',
  ...AGENT_CHAIN_FIELDS,
] as const;

/**
 * UpdateAgents' three statements, written out once from the entities' metadata: they run on every
 * write, and TypeORM's query builders would rebuild them (and their parameter maps) each time. Values
 * still go through the driver's own conversions, so a stamp or the history's JSON is stored exactly as
 * an entity save would store it. The service sends them as a StatementTransaction: the locking read
 * with START TRANSACTION, the UPDATE and the INSERT with COMMIT and the proof that it committed.
 *
 * On MariaDB the UPDATE and the INSERT change nothing outside a transaction (`@@in_transaction = 1`):
 * a Galera node that ends the transaction under them (another node's write conflicted) runs what
 * follows in autocommit, and a history entry must never commit on its own.
 */
export class AgentChainStatements {
  private readonly lockSql: string;
  private readonly lockedColumns: readonly ColumnMetadata[];
  /** Each agent member's column and its `column = ?` assignment. */
  private readonly agentColumns: ReadonlyMap<
    AgentChainField,
    { column: ColumnMetadata; assignment: string }
  >;
  private readonly updatePrefix: string;
  private readonly updateSuffix: string;
  private readonly stampColumn: ColumnMetadata;
  private readonly insertSql: string;
  private readonly historyColumns: readonly ColumnMetadata[];
  /**
   * After the COMMIT, on its connection (MySQL): whether the history entry `append` inserted is
   * stored, found by the id the connection last inserted. Trusted once the INSERT said it inserted a
   * row inside the transaction, so that id is this unit's.
   */
  readonly committed: CommitProof;

  constructor(private readonly dataSource: DataSource) {
    const escape = (name: string) => dataSource.driver.escape(name);
    const transactions = dataSource.getMetadata(TransactionEntity);
    const history = dataSource.getMetadata(AgentAssignmentEntity);
    const column = (metadata: typeof transactions, property: string) =>
      metadata.findColumnWithPropertyName(property)!;
    const table = escape(transactions.tableName);
    const key = escape(column(transactions, 'transaction_id').databaseName);
    const version = escape(transactions.versionColumn!.databaseName);

    this.lockedColumns = LOCKED_PROPERTIES.map((property) => column(transactions, property));
    // SQLite has one writer at a time already; MySQL takes the row lock.
    const lock = dataSource.options.type === 'better-sqlite3' ? '' : ' FOR UPDATE';
    this.lockSql = `SELECT ${this.lockedColumns.map((c) => escape(c.databaseName)).join(', ')} FROM ${table} WHERE ${key} = ?${lock}`;

    this.agentColumns = new Map(
      AGENT_CHAIN_FIELDS.map((field) => {
        const agent = column(transactions, field);
        return [field, { column: agent, assignment: `${escape(agent.databaseName)} = ?` }];
      }),
    );
    this.stampColumn = column(transactions, 'stamp');
    const insideTransaction = dataSource.options.type === 'mariadb';
    this.updatePrefix = `UPDATE ${table} SET `;
    this.updateSuffix = `, ${escape(this.stampColumn.databaseName)} = ?, ${version} = ${version} + 1 WHERE ${key} = ?${insideTransaction ? ' AND @@in_transaction = 1' : ''}`;

    this.historyColumns = ['transaction_id', 'stamp', 'changed_by', 'changes', 'row_version'].map(
      (property) => column(history, property),
    );
    const historyTable = escape(history.tableName);
    const placeholders = this.historyColumns.map(() => '?').join(', ');
    this.insertSql = `INSERT INTO ${historyTable} (${this.historyColumns
      .map((c) => escape(c.databaseName))
      .join(', ')}) ${
      insideTransaction
        ? `SELECT ${placeholders} FROM DUAL WHERE @@in_transaction = 1`
        : `VALUES (${placeholders})`
    }`;
    const historyKey = escape(column(history, 'assignment_id').databaseName);
    this.committed = {
      sql: `SELECT COUNT(*) AS ${escape('committed')} FROM ${historyTable} WHERE ${historyKey} = LAST_INSERT_ID()`,
      parameters: [],
      committed: ([row]) => Number(row?.committed) === 1,
    };
  }

  /** Reads the transaction's agent chain, its lock flag and version, holding its row lock on MySQL. */
  lock(transactionId: number): Statement {
    return { sql: this.lockSql, parameters: [transactionId] };
  }

  /** The row `lock` read, its values as an entity read gives them; undefined when there was none. */
  locked([raw]: readonly Row[]): LockedTransaction | undefined {
    if (!raw) return undefined;
    const row: Record<string, unknown> = {};
    for (const column of this.lockedColumns) {
      row[column.propertyName] = this.dataSource.driver.prepareHydratedValue(
        raw[column.databaseName],
        column,
      );
    }
    return row as unknown as LockedTransaction;
  }

  /** Writes the changed members and the stamp, and counts the change in the row's version. */
  update(transactionId: number, changes: readonly AgentChange[], stamp: Date): Write {
    const columns = changes.map((change) => this.agentColumns.get(change.field)!);
    const assignments = columns.map(({ assignment }) => assignment).join(', ');
    return {
      sql: `${this.updatePrefix}${assignments}${this.updateSuffix}`,
      parameters: [
        ...changes.map((change, index): unknown =>
          this.dataSource.driver.preparePersistentValue(change.after, columns[index].column),
        ),
        this.dataSource.driver.preparePersistentValue(stamp, this.stampColumn),
        transactionId,
      ],
      rows: 1,
    };
  }

  /** Appends one history entry. */
  append(entry: Omit<AgentAssignmentEntity, 'assignment_id'>): Write {
    return {
      sql: this.insertSql,
      parameters: this.historyColumns.map((column): unknown =>
        this.dataSource.driver.preparePersistentValue(column.getEntityValue(entry), column),
      ),
      rows: 1,
    };
  }
}
