import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The history's `changed_by` holds any caller id that authenticates (a token's subject can pass 255
 * characters). Written by hand: MODIFY keeps the values, where TypeORM generates DROP COLUMN and ADD.
 */
export class WideCallerId1795426546718 implements MigrationInterface {
  name = 'WideCallerId1795426546718';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE \`agent_assignment\` MODIFY \`changed_by\` text NULL`);
  }

  // In strict mode, reverting refuses a caller id that no longer fits, instead of cutting it.
  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE \`agent_assignment\` MODIFY \`changed_by\` varchar(255) NULL`,
    );
  }
}
