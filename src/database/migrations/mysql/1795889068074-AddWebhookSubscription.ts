import { MigrationInterface, QueryRunner } from 'typeorm';

/** The webhook subscriptions; their checkpoints are rows of event_checkpoint. */
export class AddWebhookSubscription1795889068074 implements MigrationInterface {
  name = 'AddWebhookSubscription1795889068074';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE \`webhook_subscription\` (\`id\` varchar(36) NOT NULL, \`url\` varchar(2048) NOT NULL, \`types\` text NOT NULL, \`description\` varchar(500) NULL, \`status\` varchar(16) NOT NULL, \`disabled_reason\` varchar(500) NULL, \`secret\` varchar(64) NOT NULL, \`previous_secret\` varchar(64) NULL, \`previous_secret_until\` datetime(3) NULL, \`created_at\` datetime(3) NOT NULL, \`updated_at\` datetime(3) NOT NULL, \`last_delivered_event_id\` varchar(36) NULL, \`failing_since\` datetime(3) NULL, \`attempts\` int NOT NULL DEFAULT '0', \`next_attempt_at\` datetime(3) NULL, \`lease_owner\` varchar(36) NULL, \`lease_until\` datetime(3) NULL, \`lease_version\` int NOT NULL DEFAULT '0', PRIMARY KEY (\`id\`)) ENGINE=InnoDB`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE \`webhook_subscription\``);
  }
}
