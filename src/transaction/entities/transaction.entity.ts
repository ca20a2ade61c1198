import { Entity, Index, OneToMany, PrimaryColumn, VersionColumn } from 'typeorm';
import { WireColumns, type WireColumnsOf } from '../../database/wire-columns';
import { TransactionDto } from '../dto/transaction.dto';
import { AGENT_ROLES } from '../agent-chain';
import { TransactionRequirementEntity } from './transaction-requirement.entity';

/**
 * ListTransactions' keyset indexes: each filter's column, or the stamp it orders by, then the key, so a
 * page is a range of one index read in key order (see TransactionPageSql).
 */
const ListingIndexes = (): ClassDecorator => (target) => {
  for (const column of ['status', 'financetype', 'stamp', ...AGENT_ROLES])
    Index(`IDX_sales_transaction_${column}`, [column, 'transaction_id'])(target);
};

/** A sales transaction: a column for every scalar member of the wire Transaction, named as on the wire. */
@Entity('sales_transaction')
@WireColumns(TransactionDto)
@ListingIndexes()
export class TransactionEntity {
  @PrimaryColumn({ type: 'int' }) transaction_id!: number;

  /**
   * Counts the row's changes: the wire's read-only row_version, the ETag of GetTransaction and the
   * If-Match of UpdateAgents.
   */
  @VersionColumn({ type: 'int' }) row_version!: number;

  @OneToMany(() => TransactionRequirementEntity, (item) => item.transaction)
  checklist?: TransactionRequirementEntity[];
}

// The columns @WireColumns adds, typed for the compiler (declaration merging, allowed for entities).
export interface TransactionEntity extends WireColumnsOf<
  TransactionDto,
  'transaction_id' | 'row_version'
> {}
