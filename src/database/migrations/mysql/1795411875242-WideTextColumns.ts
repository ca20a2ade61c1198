import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every stored text member holds 4000 characters: TEXT columns, and the agent history as JSON
 * (LONGTEXT on MariaDB). Written by hand: TypeORM generates DROP COLUMN and ADD for a type change,
 * losing the values; MODIFY converts them in place, one table copy per table.
 */
export class WideTextColumns1795411875242 implements MigrationInterface {
  name = 'WideTextColumns1795411875242';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE \`requirement_type\` MODIFY \`description\` text NULL`);
    await queryRunner.query(
      `ALTER TABLE \`requirement_acquisition\` MODIFY \`required\` text NULL, MODIFY \`requirement_description\` text NULL`,
    );
    await queryRunner.query(
      `ALTER TABLE \`sales_transaction\` MODIFY \`unit_id\` text NULL, MODIFY \`developer\` text NULL, MODIFY \`subdivision\` text NULL, MODIFY \`block\` text NULL, MODIFY \`lot\` text NULL, MODIFY \`financetype\` text NOT NULL, MODIFY \`clientname\` text NULL, MODIFY \`coborrowername\` text NULL, MODIFY \`brokername\` text NULL, MODIFY \`directorname\` text NULL, MODIFY \`directorname_recruit\` text NULL, MODIFY \`managername\` text NULL, MODIFY \`managername_recruit\` text NULL, MODIFY \`salesagentname\` text NULL, MODIFY \`salesagentname_recruit\` text NULL, MODIFY \`requirementtypename\` text NULL, MODIFY \`status\` text NULL, MODIFY \`preparedby_userid\` text NULL`,
    );
    await queryRunner.query(`ALTER TABLE \`agent_assignment\` MODIFY \`changes\` json NOT NULL`);
  }

  // In strict mode, reverting refuses a value that no longer fits, instead of cutting it.
  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE \`agent_assignment\` MODIFY \`changes\` text NOT NULL`);
    await queryRunner.query(
      `ALTER TABLE \`sales_transaction\` MODIFY \`unit_id\` varchar(255) NULL, MODIFY \`developer\` varchar(255) NULL, MODIFY \`subdivision\` varchar(255) NULL, MODIFY \`block\` varchar(255) NULL, MODIFY \`lot\` varchar(255) NULL, MODIFY \`financetype\` varchar(255) NOT NULL, MODIFY \`clientname\` varchar(255) NULL, MODIFY \`coborrowername\` varchar(255) NULL, MODIFY \`brokername\` varchar(255) NULL, MODIFY \`directorname\` varchar(255) NULL, MODIFY \`directorname_recruit\` varchar(255) NULL, MODIFY \`managername\` varchar(255) NULL, MODIFY \`managername_recruit\` varchar(255) NULL, MODIFY \`salesagentname\` varchar(255) NULL, MODIFY \`salesagentname_recruit\` varchar(255) NULL, MODIFY \`requirementtypename\` varchar(255) NULL, MODIFY \`status\` varchar(255) NULL, MODIFY \`preparedby_userid\` varchar(255) NULL`,
    );
    await queryRunner.query(
      `ALTER TABLE \`requirement_acquisition\` MODIFY \`required\` varchar(255) NULL, MODIFY \`requirement_description\` varchar(255) NULL`,
    );
    await queryRunner.query(
      `ALTER TABLE \`requirement_type\` MODIFY \`description\` varchar(255) NULL`,
    );
  }
}
