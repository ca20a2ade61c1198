import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A batched reaction's run may end at a key (`until_position`): a recomputation after an import
 * covers the import's ids, not every key after them. Written by hand: ADD COLUMN keeps the table,
 * where TypeORM generates a copy of it.
 */
export class ReactionRunBound1796599046062 implements MigrationInterface {
  name = 'ReactionRunBound1796599046062';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "event_checkpoint" ADD COLUMN "until_position" bigint`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "event_checkpoint" DROP COLUMN "until_position"`);
  }
}
