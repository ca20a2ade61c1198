import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * How far one consumer of the outbox has come: the broker's relay, or one in-process handler. Its row
 * is also the consumer's lock: one instance at a time delivers its events (SELECT … FOR UPDATE SKIP
 * LOCKED). The row `~positions` holds the last position given. A batched reaction's run has one too,
 * while it is under way: the last key it did.
 */
@Entity('event_checkpoint')
export class EventCheckpointEntity {
  @PrimaryColumn({ type: 'varchar', length: 255 }) consumer!: string;
  /** The last position delivered (given, for `~positions`; the last key done, for a run). */
  @Column({ type: 'bigint' }) position!: string;
  /** A batched reaction's run started with a bound: the last key it covers. NULL: every key. */
  @Column({ type: 'bigint', nullable: true }) until_position!: string | null;
}
