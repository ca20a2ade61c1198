import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { type AgentChange } from '../agent-chain';
import { TransactionEntity } from './transaction.entity';

/** One accepted UpdateAgents call that changed something: who, when, and each field before and after. */
@Entity('agent_assignment')
@Index('IDX_agent_assignment_transaction', ['transaction_id', 'assignment_id'])
export class AgentAssignmentEntity {
  @PrimaryGeneratedColumn({ type: 'int' }) assignment_id!: number;
  @Column({ type: 'int' }) transaction_id!: number;
  @Column({ type: 'datetime', precision: 3 }) stamp!: Date;
  /**
   * The caller's id (an API key's name or a token's subject), whole: TEXT, as a subject has no length
   * limit but the request header's, and 65,535 bytes hold any subject of a header Node accepts.
   */
  @Column({ type: 'text', nullable: true }) changed_by!: string | null;
  /**
   * JSON, not simple-json: simple-json is a MySQL TEXT of 65,535 bytes, and one change of all seven
   * names of 4000 characters can take 14 times 12,000. JSON is LONGTEXT on MariaDB, text on SQLite.
   */
  @Column({ type: 'json' }) changes!: AgentChange[];
  /**
   * The transaction's row version after this change, written with it under the row's lock. Null on
   * an entry written before the column existed whose version the migration could not derive
   * exactly (see AgentHistoryVersions).
   */
  @Column({ type: 'int', nullable: true }) row_version!: number | null;

  @ManyToOne(() => TransactionEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'transaction_id' })
  transaction?: TransactionEntity;
}
