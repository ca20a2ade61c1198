import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * How far one consumer of the outbox has come: the broker's relay, or one in-process handler. Its row
 * is also the consumer's lock: one instance at a time delivers its events (SELECT … FOR UPDATE SKIP
 * LOCKED). The row `~positions` holds the last position given.
 */
@Entity('event_checkpoint')
export class EventCheckpointEntity {
  @PrimaryColumn({ type: 'varchar', length: 255 }) consumer!: string;
  /** The last position delivered (given, for `~positions`). */
  @Column({ type: 'bigint' }) position!: string;
}
