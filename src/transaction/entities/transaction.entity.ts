import { Entity, OneToMany, PrimaryColumn, VersionColumn } from 'typeorm';
import { WireColumns, type WireColumnsOf } from '../../database/wire-columns';
import { TransactionDto } from '../dto/transaction.dto';
import { TransactionRequirementEntity } from './transaction-requirement.entity';

/** A sales transaction: a column for every scalar member of the wire Transaction, named as on the wire. */
@Entity('sales_transaction')
@WireColumns(TransactionDto)
export class TransactionEntity {
  @PrimaryColumn({ type: 'int' }) transaction_id!: number;

  /** Counts the row's changes: the ETag of GetTransaction and the If-Match of UpdateAgents. */
  @VersionColumn({ type: 'int' }) row_version!: number;

  @OneToMany(() => TransactionRequirementEntity, (item) => item.transaction)
  checklist?: TransactionRequirementEntity[];
}

// The columns @WireColumns adds, typed for the compiler (declaration merging, allowed for entities).
export interface TransactionEntity extends WireColumnsOf<TransactionDto, 'transaction_id'> {}
