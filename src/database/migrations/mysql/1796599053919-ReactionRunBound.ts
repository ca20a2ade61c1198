import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A batched reaction's run may end at a key (`until_position`): a recomputation after an import
 * covers the import's ids, not every key after them.
 */
export class ReactionRunBound1796599053919 implements MigrationInterface {
  name = 'ReactionRunBound1796599053919';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE \`event_checkpoint\` ADD \`until_position\` bigint NULL`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE \`event_checkpoint\` DROP COLUMN \`until_position\``);
  }
}
