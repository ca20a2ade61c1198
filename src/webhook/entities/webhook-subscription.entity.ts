import { Column, Entity, PrimaryColumn } from 'typeorm';

/** What a subscription does: delivers, waits for its owner (paused), or was stopped failing. */
export const WEBHOOK_STATUSES = ['active', 'paused', 'disabled'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

/**
 * One webhook subscription: where the committed events it selects are POSTed, and the secret that
 * signs them. Its checkpoint, the last event position delivered, is a row of the outbox's
 * event_checkpoint (`webhook:<id>`), as every consumer's is. The lease columns say which instance
 * delivers it, so that one at a time does, in order; the failure columns carry its retry schedule
 * across instances and restarts.
 */
@Entity('webhook_subscription')
export class WebhookSubscriptionEntity {
  /** A UUID the service made. */
  @PrimaryColumn({ type: 'varchar', length: 36 }) id!: string;
  /**
   * Who made it, and alone may see and change it besides webhooks:admin: the API key's name or the
   * token's subject, whole whatever its length. Null: the operator's (made without authentication,
   * or before subscriptions had owners). Compared in the service, exactly: MariaDB's collation would
   * take `Partner` for `partner `.
   */
  @Column({ type: 'text', nullable: true }) owner!: string | null;
  @Column({ type: 'varchar', length: 2048 }) url!: string;
  /** The CloudEvents types it selects, a JSON array; empty for every type. */
  @Column({ type: 'simple-json' }) types!: string[];
  @Column({ type: 'varchar', length: 500, nullable: true }) description!: string | null;
  @Column({ type: 'varchar', length: 16 }) status!: WebhookStatus;
  @Column({ type: 'varchar', length: 500, nullable: true }) disabled_reason!: string | null;
  /** `whsec_` and the base64 of 32 random bytes: the HMAC key, kept to sign with. */
  @Column({ type: 'varchar', length: 64 }) secret!: string;
  /** The secret before the last rotation, which signs too until `previous_secret_until`. */
  @Column({ type: 'varchar', length: 64, nullable: true }) previous_secret!: string | null;
  @Column({ type: 'datetime', precision: 3, nullable: true }) previous_secret_until!: Date | null;
  @Column({ type: 'datetime', precision: 3 }) created_at!: Date;
  @Column({ type: 'datetime', precision: 3 }) updated_at!: Date;
  @Column({ type: 'varchar', length: 36, nullable: true }) last_delivered_event_id!: string | null;
  /** When the deliveries began to fail, without a success since; null while they succeed. */
  @Column({ type: 'datetime', precision: 3, nullable: true }) failing_since!: Date | null;
  /** Failed attempts in a row: the step of the retry schedule. */
  @Column({ type: 'int', default: 0 }) attempts!: number;
  /** No delivery before this: the retry schedule's next step. */
  @Column({ type: 'datetime', precision: 3, nullable: true }) next_attempt_at!: Date | null;
  /** The instance delivering it, until `lease_until`; null when none is. */
  @Column({ type: 'varchar', length: 36, nullable: true }) lease_owner!: string | null;
  @Column({ type: 'datetime', precision: 3, nullable: true }) lease_until!: Date | null;
  /** Raised by every change of the lease: a change conditional on it is a compare-and-set. */
  @Column({ type: 'int', default: 0 }) lease_version!: number;
}
