import { type DataSource, type EntityManager } from 'typeorm';
import { type ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { RequirementAcquisitionEntity } from '../requirement/entities/requirement-acquisition.entity';
import { RequirementAcquisitionDto } from '../requirement/dto/requirement-acquisition.dto';
import { wireModelOf } from '../wire';
import { TransactionDto } from './dto/transaction.dto';
import { TransactionRequirementEntity } from './entities/transaction-requirement.entity';
import { TransactionEntity } from './entities/transaction.entity';

/** A wire member, the column it is read from and that column's name in the result. */
interface SelectedMember {
  readonly name: string;
  readonly column: ColumnMetadata;
  readonly alias: string;
}

/** A transaction as read, with the version its ETag names. */
export interface VersionedTransaction {
  readonly transaction: TransactionDto;
  readonly version: number;
}

/**
 * GetTransaction's one statement, written out once from the entities' metadata: the transaction, its
 * checklist and each item's catalogue record, a row per item (one row of empty items for an empty
 * checklist), items in requirement_id order. GetTransaction runs on every read, and TypeORM's query
 * builder would rebuild the statement and hydrate three entities per row each time. Values still go
 * through the driver's own conversions, so dates, booleans and decimals are what an entity read gives.
 */
export class TransactionReadStatement {
  readonly sql: string;
  /** The transaction's members in wire order, each from its column. */
  private readonly transactionMembers: readonly SelectedMember[];
  private readonly version: SelectedMember;
  /** An item's members in wire order: its own stamp and submitted, the rest from its catalogue record. */
  private readonly itemMembers: readonly SelectedMember[];
  /** The item's key in the result: set on every item row, null on the row of an empty checklist. */
  private readonly itemKey: string;

  constructor(private readonly dataSource: DataSource) {
    const escape = (name: string) => dataSource.driver.escape(name);
    const transactions = dataSource.getMetadata(TransactionEntity);
    const items = dataSource.getMetadata(TransactionRequirementEntity);
    const catalogue = dataSource.getMetadata(RequirementAcquisitionEntity);
    const select = (table: string, column: ColumnMetadata, name: string): SelectedMember => ({
      name,
      column,
      alias: `${table}.${column.databaseName}`,
    });
    const transactionMember = (name: string) =>
      select('transaction', transactions.findColumnWithPropertyName(name)!, name);

    this.transactionMembers = wireModelOf(TransactionDto)
      .members.filter((member) => member.kind !== 'list')
      .map((member) => transactionMember(member.name));
    this.version = select('transaction', transactions.versionColumn!, 'row_version');
    this.itemMembers = wireModelOf(RequirementAcquisitionDto).members.map((member) => {
      const own = items.findColumnWithPropertyName(member.name);
      return own
        ? select('item', own, member.name)
        : select('requirement', catalogue.findColumnWithPropertyName(member.name)!, member.name);
    });
    this.itemKey = select('item', items.findColumnWithPropertyName('requirement_id')!, '').alias;

    const selected = [...this.transactionMembers, this.version, ...this.itemMembers]
      .map(({ column, alias }) => {
        const table = alias.slice(0, alias.indexOf('.'));
        return `${escape(table)}.${escape(column.databaseName)} AS ${escape(alias)}`;
      })
      .join(', ');
    const column = (table: string, metadata: typeof items, property: string) =>
      `${escape(table)}.${escape(metadata.findColumnWithPropertyName(property)!.databaseName)}`;
    this.sql =
      `SELECT ${selected} FROM ${escape(transactions.tableName)} ${escape('transaction')}` +
      ` LEFT JOIN ${escape(items.tableName)} ${escape('item')} ON ${column('item', items, 'transaction_id')} = ${column('transaction', transactions, 'transaction_id')}` +
      ` LEFT JOIN ${escape(catalogue.tableName)} ${escape('requirement')} ON ${column('requirement', catalogue, 'requirement_id')} = ${column('item', items, 'requirement_id')}` +
      ` WHERE ${column('transaction', transactions, 'transaction_id')} = ?` +
      ` ORDER BY ${column('item', items, 'requirement_id')} ASC`;
  }

  /** The transaction with its checklist, or undefined when there is none by that id. */
  async read(
    manager: EntityManager,
    transactionId: number,
  ): Promise<VersionedTransaction | undefined> {
    // Where a query builder's read goes: a replica when there are replicas, outside a transaction.
    const runner =
      manager.queryRunner ??
      this.dataSource.createQueryRunner(this.dataSource.defaultReplicationModeForReads());
    try {
      return this.hydrate(
        (await runner.query(this.sql, [transactionId])) as Array<Record<string, unknown>>,
      );
    } finally {
      if (runner !== manager.queryRunner) await runner.release();
    }
  }

  private hydrate(rows: Array<Record<string, unknown>>): VersionedTransaction | undefined {
    const [first] = rows;
    if (!first) return undefined;
    const transaction = this.record(first, this.transactionMembers);
    const requirements = [];
    for (const row of rows) {
      if (row[this.itemKey] !== null) requirements.push(this.record(row, this.itemMembers));
    }
    transaction.requirements = requirements;
    return {
      transaction,
      version: this.value(first, this.version) as number,
    };
  }

  private record(row: Record<string, unknown>, members: readonly SelectedMember[]) {
    const record: Record<string, unknown> = {};
    for (const member of members) record[member.name] = this.value(row, member) ?? null;
    return record;
  }

  private value(row: Record<string, unknown>, { column, alias }: SelectedMember): unknown {
    return this.dataSource.driver.prepareHydratedValue(row[alias], column);
  }
}
