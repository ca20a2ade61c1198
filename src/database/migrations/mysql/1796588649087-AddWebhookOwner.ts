import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each webhook subscription's owner; the rows made before it have none (NULL), which makes them the
 * operator's: only webhooks:admin sees them.
 */
export class AddWebhookOwner1796588649087 implements MigrationInterface {
  name = 'AddWebhookOwner1796588649087';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE \`webhook_subscription\` ADD \`owner\` text NULL`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE \`webhook_subscription\` DROP COLUMN \`owner\``);
  }
}
