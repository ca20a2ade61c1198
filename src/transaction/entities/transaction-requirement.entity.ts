import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { RequirementAcquisitionEntity } from '../../requirement';
import { TransactionEntity } from './transaction.entity';

/** One item of a transaction's checklist: a catalogue record, and whether its document was submitted. */
@Entity('transaction_requirement')
export class TransactionRequirementEntity {
  @PrimaryColumn({ type: 'int' }) transaction_id!: number;
  @PrimaryColumn({ type: 'int' }) requirement_id!: number;
  @Column({ type: 'boolean', nullable: true }) submitted!: boolean | null;
  @Column({ type: 'datetime', precision: 3, nullable: true }) stamp!: Date | null;

  @ManyToOne(() => TransactionEntity, (transaction) => transaction.checklist, {
    onDelete: 'CASCADE',
  })
  @JoinColumn({ name: 'transaction_id' })
  transaction?: TransactionEntity;

  @ManyToOne(() => RequirementAcquisitionEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'requirement_id' })
  requirement?: RequirementAcquisitionEntity;
}
