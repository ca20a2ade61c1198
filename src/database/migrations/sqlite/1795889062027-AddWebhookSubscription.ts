import { MigrationInterface, QueryRunner } from 'typeorm';

/** The webhook subscriptions; their checkpoints are rows of event_checkpoint. */
export class AddWebhookSubscription1795889062027 implements MigrationInterface {
  name = 'AddWebhookSubscription1795889062027';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "webhook_subscription" ("id" varchar(36) PRIMARY KEY NOT NULL, "url" varchar(2048) NOT NULL, "types" text NOT NULL, "description" varchar(500), "status" varchar(16) NOT NULL, "disabled_reason" varchar(500), "secret" varchar(64) NOT NULL, "previous_secret" varchar(64), "previous_secret_until" datetime(3), "created_at" datetime(3) NOT NULL, "updated_at" datetime(3) NOT NULL, "last_delivered_event_id" varchar(36), "failing_since" datetime(3), "attempts" integer NOT NULL DEFAULT (0), "next_attempt_at" datetime(3), "lease_owner" varchar(36), "lease_until" datetime(3), "lease_version" integer NOT NULL DEFAULT (0))`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "webhook_subscription"`);
  }
}
