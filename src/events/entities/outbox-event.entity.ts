import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One integration event, written in the database transaction of the change it tells of: it exists
 * exactly when that change committed. The relay gives it its `position` once it is committed, in
 * commit order, and each consumer (the broker, each in-process handler) reads the events past its
 * checkpoint by position.
 */
@Entity('event_outbox')
@Index('IDX_event_outbox_position', ['position'])
// The feed finds a reader's last event by its id (`lastEventId`). Not unique: the ids are random
// UUIDs, and a unique index costs every insert a read to check it.
@Index('IDX_event_outbox_event_id', ['event_id'])
export class OutboxEventEntity {
  /**
   * In insert order; a transaction's events take theirs under its row lock, so in its commit order.
   * An int, as the agent history's key: SQLite numbers rows only by an INTEGER key.
   */
  @PrimaryGeneratedColumn({ type: 'int' }) sequence!: number;
  /** Set after the commit, ascending with the order positions are given in; NULL until then. */
  @Column({ type: 'bigint', nullable: true }) position!: string | null;
  /** The CloudEvents id, which consumers deduplicate on. */
  @Column({ type: 'varchar', length: 36 }) event_id!: string;
  @Column({ type: 'varchar', length: 255 }) routing_key!: string;
  /** When the change committed (as its stamp says): what the pending age is measured from. */
  @Column({ type: 'datetime', precision: 3 }) time!: Date;
  /** The whole CloudEvent as its consumers receive it (structured JSON): published as stored. */
  @Column({ type: 'json' }) body!: unknown;
}
