import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { type ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { type Row, type Statement } from '../common/statement';
import { UnitOfWork } from '../database/unit-of-work';
import { INT32_MAX } from '../wire';
import { AGENT_CHAIN_FIELDS, type AgentChainField } from './agent-chain';
import { type TransactionDto } from './dto/transaction.dto';
import { TransactionEntity } from './entities/transaction.entity';

/** The money of a transaction, as the Transaction names its members. */
export const AMOUNT_FIELDS = [
  'sellingprice',
  'downpayment',
  'reservation',
  'discount',
  'miscellaneous',
  'TotalPayments',
] as const;

export type AmountField = (typeof AMOUNT_FIELDS)[number];

/** A transaction's agent chain: its fourteen members, each typed as the Transaction's. */
export type AgentChain = Readonly<Required<Pick<TransactionDto, AgentChainField>>>;

/** A transaction's amounts, each typed as the Transaction's (null when not stored). */
export type TransactionAmounts = Readonly<Required<Pick<TransactionDto, AmountField>>>;

/** Ids in one statement: well under the bound SQLite and MySQL set on a statement's parameters. */
const IDS_PER_STATEMENT = 1000;

/**
 * Some members of the transactions of given ids, one statement per thousand ids written out once
 * from the entity's metadata. Values go through the driver's own conversions, so they are what an
 * entity read gives; each transaction's members come from its one row, as they stood at one time.
 */
class MembersById<F extends string> {
  private readonly key: ColumnMetadata;
  private readonly columns: readonly ColumnMetadata[];
  private readonly prefix: string;

  constructor(
    private readonly dataSource: DataSource,
    fields: readonly F[],
  ) {
    const escape = (name: string) => dataSource.driver.escape(name);
    const transactions = dataSource.getMetadata(TransactionEntity);
    this.key = transactions.findColumnWithPropertyName('transaction_id')!;
    this.columns = fields.map((field) => transactions.findColumnWithPropertyName(field)!);
    const selected = [this.key, ...this.columns].map((column) => escape(column.databaseName));
    this.prefix = `SELECT ${selected.join(', ')} FROM ${escape(transactions.tableName)} WHERE ${escape(this.key.databaseName)} IN (`;
  }

  /** The members of each transaction found, by id; an id with no transaction is absent. */
  async read(
    unitOfWork: UnitOfWork,
    transactionIds: readonly number[],
  ): Promise<Map<number, Record<F, unknown>>> {
    const ids = [...new Set(transactionIds)];
    const found = new Map<number, Record<F, unknown>>();
    if (ids.length === 0) return found;
    const statements: Statement[] = [];
    for (let at = 0; at < ids.length; at += IDS_PER_STATEMENT) {
      const batch = ids.slice(at, at + IDS_PER_STATEMENT);
      statements.push({
        sql: `${this.prefix}${batch.map(() => '?').join(', ')})`,
        parameters: batch,
      });
    }
    // Together in one round trip, on a replica when there are replicas, as GetTransaction reads.
    const results = await unitOfWork.readStatements(statements, { replica: true });
    for (const row of results.flat()) {
      const members = Object.fromEntries(
        this.columns.map((column) => [column.propertyName, this.value(row, column)]),
      ) as Record<F, unknown>;
      found.set(this.value(row, this.key) as number, members);
    }
    return found;
  }

  private value(row: Row, column: ColumnMetadata): unknown {
    return this.dataSource.driver.prepareHydratedValue(row[column.databaseName], column) ?? null;
  }
}

/**
 * What other modules may ask of a transaction, through the module's door (src/transaction/index.ts):
 * a module that needs a transaction's agents or money calls these instead of reading its table. Each
 * call is a plain read bounded by DATABASE_TIMEOUT_MS, as the service's own reads are.
 */
@Injectable()
export class TransactionQueries {
  private readonly agentChains: MembersById<AgentChainField>;
  private readonly amounts: MembersById<AmountField>;
  private readonly idsAfterSql: string;

  constructor(
    private readonly unitOfWork: UnitOfWork,
    @InjectDataSource() dataSource: DataSource,
  ) {
    this.agentChains = new MembersById(dataSource, AGENT_CHAIN_FIELDS);
    this.amounts = new MembersById(dataSource, AMOUNT_FIELDS);
    const escape = (name: string) => dataSource.driver.escape(name);
    const transactions = dataSource.getMetadata(TransactionEntity);
    const key = escape(transactions.findColumnWithPropertyName('transaction_id')!.databaseName);
    this.idsAfterSql = `SELECT ${key} AS id FROM ${escape(transactions.tableName)} WHERE ${key} > ? AND ${key} <= ? ORDER BY ${key} LIMIT ?`;
  }

  /**
   * The ids of up to `limit` transactions after the id `after`, up to the id `until` included when
   * given, ascending: for a module that walks the transactions a batch at a time (a batched reaction,
   * its run's `after` and `until`), by the primary key's order.
   */
  async idsAfter(after: number, limit: number, until = INT32_MAX): Promise<number[]> {
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new RangeError(
        `A batch of transaction ids takes a positive whole number, not ${limit}.`,
      );
    const [rows] = await this.unitOfWork.readStatements(
      [{ sql: this.idsAfterSql, parameters: [after, until, limit] }],
      { replica: true },
    );
    return rows.map((row) => Number(row.id));
  }

  /** The transaction's agent chain, or undefined when there is no transaction by that id. */
  async agentChainOf(transactionId: number): Promise<AgentChain | undefined> {
    return (await this.agentChainsOf([transactionId])).get(transactionId);
  }

  /** The agent chains of the transactions found among `transactionIds`, by id. */
  agentChainsOf(transactionIds: readonly number[]): Promise<ReadonlyMap<number, AgentChain>> {
    return this.agentChains.read(this.unitOfWork, transactionIds) as Promise<
      ReadonlyMap<number, AgentChain>
    >;
  }

  /** The transaction's amounts, or undefined when there is no transaction by that id. */
  amountsOf(transactionId: number): Promise<TransactionAmounts | undefined>;
  /** The amounts of the transactions found among `transactionIds`, by id. */
  amountsOf(transactionIds: readonly number[]): Promise<ReadonlyMap<number, TransactionAmounts>>;
  async amountsOf(
    ids: number | readonly number[],
  ): Promise<TransactionAmounts | ReadonlyMap<number, TransactionAmounts> | undefined> {
    const found = (await this.amounts.read(
      this.unitOfWork,
      typeof ids === 'number' ? [ids] : ids,
    )) as ReadonlyMap<number, TransactionAmounts>;
    return typeof ids === 'number' ? found.get(ids) : found;
  }
}
