import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each webhook subscription's owner; the rows made before it have none (NULL), which makes them the
 * operator's: only webhooks:admin sees them. Written by hand: ADD COLUMN keeps the table, where
 * TypeORM generates a copy of it.
 */
export class AddWebhookOwner1796588638215 implements MigrationInterface {
  name = 'AddWebhookOwner1796588638215';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "webhook_subscription" ADD COLUMN "owner" text`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "webhook_subscription" DROP COLUMN "owner"`);
  }
}
