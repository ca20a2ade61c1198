import { type DataSource } from 'typeorm';
import { type ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { type Row, type Statement } from '../common/statement';
import { type UnitOfWork } from '../database/unit-of-work';
import { RequirementAcquisitionEntity, RequirementAcquisitionDto } from '../requirement';
import { wireModelOf } from '../wire';
import { TransactionDto } from './dto/transaction.dto';
import { type PageRequest } from './list-transactions.query';
import { TransactionPageSql } from './transaction-page.sql';
import { TransactionRequirementEntity } from './entities/transaction-requirement.entity';
import { TransactionEntity } from './entities/transaction.entity';

/** A wire member, the column it is read from and that column's name in the result. */
interface SelectedMember {
  readonly name: string;
  readonly column: ColumnMetadata;
  readonly alias: string;
}

/** A page of transactions, and whether the listing holds more after it. */
export interface TransactionPage {
  readonly transactions: TransactionDto[];
  readonly more: boolean;
}

/** A transaction as read, with the version its ETag names. */
export interface VersionedTransaction {
  readonly transaction: TransactionDto;
  readonly version: number;
}

/**
 * GetTransaction's two statements, written out once from the entities' metadata: the transaction's
 * row, then its checklist with each item's catalogue record (items in requirement_id order; one row of
 * empty items for an empty checklist) and the transaction's version again. GetTransaction runs on
 * every read, and TypeORM's query builder would rebuild a joined statement and hydrate three entities
 * per row each time; a joined row repeats the transaction's fifty columns for every item, which costs
 * SQLite four times the two statements. Values still go through the driver's own conversions, so
 * dates, booleans and decimals are what an entity read gives. ListTransactions reads a page the same
 * way: its rows (TransactionPageSql), then the checklists of all of them in one statement.
 */
export class TransactionReadStatements {
  readonly sql: { readonly transaction: string; readonly checklist: string };
  /** The transaction's members in wire order, each from its column. */
  private readonly transactionMembers: readonly SelectedMember[];
  /** Read by both statements: a checklist read at another version is not this row's. */
  private readonly version: SelectedMember;
  /** An item's members in wire order: its own stamp and submitted, the rest from its catalogue record. */
  private readonly itemMembers: readonly SelectedMember[];
  /** The item's key in the result: set on every item row, null on the row of an empty checklist. */
  private readonly itemKey: string;
  /** The transaction's id, by which a page's checklist rows are told apart. */
  private readonly pageKey: SelectedMember;
  private readonly pageChecklist: (ids: Statement) => Statement;
  private readonly page: TransactionPageSql;

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

    // row_version among them: the version column, which the ETag names too.
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

    const selected = (members: readonly SelectedMember[]) =>
      members
        .map(({ column, alias }) => {
          const table = alias.slice(0, alias.indexOf('.'));
          return `${escape(table)}.${escape(column.databaseName)} AS ${escape(alias)}`;
        })
        .join(', ');
    const column = (table: string, metadata: typeof items, property: string) =>
      `${escape(table)}.${escape(metadata.findColumnWithPropertyName(property)!.databaseName)}`;
    const transactionKey = column('transaction', transactions, 'transaction_id');
    const itemKey = column('item', items, 'requirement_id');
    const table = `${escape(transactions.tableName)} ${escape('transaction')}`;
    /** The checklist rows of the transactions `from` holds, after `where` when there is one. */
    const checklist = (
      members: readonly SelectedMember[],
      from: string,
      where: string,
      order: string,
    ) =>
      `SELECT ${selected(members)} FROM ${from}` +
      ` LEFT JOIN ${escape(items.tableName)} ${escape('item')} ON ${column('item', items, 'transaction_id')} = ${transactionKey}` +
      ` LEFT JOIN ${escape(catalogue.tableName)} ${escape('requirement')} ON ${column('requirement', catalogue, 'requirement_id')} = ${itemKey}` +
      `${where && ` WHERE ${where}`} ORDER BY ${order}`;
    const row = selected(this.transactionMembers);
    this.sql = {
      transaction: `SELECT ${row} FROM ${table} WHERE ${transactionKey} = ?`,
      checklist: checklist(
        [this.version, ...this.itemMembers],
        table,
        `${transactionKey} = ?`,
        `${itemKey} ASC`,
      ),
    };
    this.pageKey = this.transactionMembers.find((member) => member.name === 'transaction_id')!;
    // A page's checklists in one statement: its rows' ids, joined to their transactions and items.
    const listed = escape('listed');
    this.pageChecklist = (ids) => ({
      sql: checklist(
        [this.pageKey, this.version, ...this.itemMembers],
        `(${ids.sql}) ${listed} JOIN ${table} ON ${transactionKey} = ${listed}.${escape('transaction_id')}`,
        '',
        `${transactionKey} ASC, ${itemKey} ASC`,
      ),
      parameters: ids.parameters,
    });
    this.page = new TransactionPageSql(dataSource, row);
  }

  /**
   * The transaction with its checklist, or undefined when there is none by that id. Both statements go
   * together (one round trip on MySQL, a replica's when there are replicas, as a plain read goes).
   */
  async read(
    unitOfWork: UnitOfWork,
    transactionId: number,
  ): Promise<VersionedTransaction | undefined> {
    const parameters = [transactionId];
    const statements = [
      { sql: this.sql.transaction, parameters },
      { sql: this.sql.checklist, parameters },
    ];
    for (;;) {
      const [[row], checklist] = await unitOfWork.readStatements(statements, { replica: true });
      if (!row) return undefined;
      // Written between the two reads (the version moves with every change of the row or its
      // checklist): read both again, so the answer is the transaction as it stood at one time.
      if (checklist[0]?.[this.version.alias] === row[this.version.alias])
        return this.hydrate(row, checklist);
    }
  }

  /**
   * A page of ListTransactions with each transaction's checklist: the page's rows, and the checklists
   * of all of them in one statement (never one per row), sent together as read() sends its two. Each
   * transaction is answered as it stood at one version.
   */
  async readPage(unitOfWork: UnitOfWork, request: PageRequest): Promise<TransactionPage> {
    const statements = [this.page.rows(request), this.pageChecklist(this.page.ids(request))];
    for (;;) {
      const [rows, checklists] = await unitOfWork.readStatements(statements, { replica: true });
      const listed = rows.slice(0, request.limit);
      const byTransaction = new Map<unknown, Row[]>();
      for (const item of checklists) {
        const id = item[this.pageKey.alias];
        const held = byTransaction.get(id);
        if (held) held.push(item);
        else byTransaction.set(id, [item]);
      }
      // A transaction written between the two reads is read again with its page, as read() does.
      const consistent = listed.every(
        (row) =>
          byTransaction.get(row[this.pageKey.alias])?.[0]?.[this.version.alias] ===
          row[this.version.alias],
      );
      if (consistent)
        return {
          transactions: listed.map(
            (row) => this.hydrate(row, byTransaction.get(row[this.pageKey.alias])!).transaction,
          ),
          more: rows.length > request.limit,
        };
    }
  }

  private hydrate(row: Row, checklist: readonly Row[]): VersionedTransaction {
    const transaction = this.record(row, this.transactionMembers);
    const requirements = [];
    for (const item of checklist) {
      if (item[this.itemKey] !== null) requirements.push(this.record(item, this.itemMembers));
    }
    transaction.requirements = requirements;
    return { transaction, version: this.value(row, this.version) as number };
  }

  private record(row: Row, members: readonly SelectedMember[]) {
    const record: Record<string, unknown> = {};
    for (const member of members) record[member.name] = this.value(row, member) ?? null;
    return record;
  }

  private value(row: Row, { column, alias }: SelectedMember): unknown {
    return this.dataSource.driver.prepareHydratedValue(row[alias], column);
  }
}
