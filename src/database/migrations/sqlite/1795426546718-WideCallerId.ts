import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The history's `changed_by` becomes TEXT, as on MySQL (SQLite never enforced the 255). The table is
 * rebuilt as TypeORM generates it for SQLite; no other table refers to it, so its rows are simply copied.
 */
export class WideCallerId1795426546718 implements MigrationInterface {
  name = 'WideCallerId1795426546718';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await this.rebuild(queryRunner, 'text');
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await this.rebuild(queryRunner, 'varchar(255)');
  }

  private async rebuild(queryRunner: QueryRunner, changedBy: string): Promise<void> {
    await queryRunner.query(`DROP INDEX "IDX_agent_assignment_transaction"`);
    await queryRunner.query(
      `CREATE TABLE "temporary_agent_assignment" ("assignment_id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "transaction_id" integer NOT NULL, "stamp" datetime(3) NOT NULL, "changed_by" ${changedBy}, "changes" json NOT NULL, CONSTRAINT "FK_6ba393a69357976c5639af622c5" FOREIGN KEY ("transaction_id") REFERENCES "sales_transaction" ("transaction_id") ON DELETE CASCADE ON UPDATE NO ACTION)`,
    );
    await queryRunner.query(
      `INSERT INTO "temporary_agent_assignment"("assignment_id", "transaction_id", "stamp", "changed_by", "changes") SELECT "assignment_id", "transaction_id", "stamp", "changed_by", "changes" FROM "agent_assignment"`,
    );
    await queryRunner.query(`DROP TABLE "agent_assignment"`);
    await queryRunner.query(
      `ALTER TABLE "temporary_agent_assignment" RENAME TO "agent_assignment"`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_agent_assignment_transaction" ON "agent_assignment" ("transaction_id", "assignment_id") `,
    );
  }
}
