import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each history entry records the transaction's row version after its change. Entries written before
 * get it where it can be derived exactly: a transaction is created at version 1, and UpdateAgents and
 * the import advance it by one with each history entry they write; so when a transaction's version is
 * one more than its entries, nothing else ever changed it, and its k-th entry (by assignment_id) left
 * version k + 1. A transaction changed otherwise too (an import that changed no agent, or replaced
 * its checklist) is past that count, and which of its entries came before those changes is not
 * known: they stay null rather than guessed. A column added in place: no table copy.
 */
export class AgentHistoryVersions1795875530975 implements MigrationInterface {
  name = 'AgentHistoryVersions1795875530975';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "agent_assignment" ADD COLUMN "row_version" integer`);
    await queryRunner.query(
      `UPDATE "agent_assignment" SET "row_version" = "numbered"."version" FROM (` +
        `SELECT "assignment_id", "transaction_id", ` +
        `ROW_NUMBER() OVER (PARTITION BY "transaction_id" ORDER BY "assignment_id") + 1 AS "version", ` +
        `COUNT(*) OVER (PARTITION BY "transaction_id") AS "entries" FROM "agent_assignment") AS "numbered" ` +
        `JOIN "sales_transaction" AS "owner" ON "owner"."transaction_id" = "numbered"."transaction_id" ` +
        `AND "owner"."row_version" = "numbered"."entries" + 1 ` +
        `WHERE "numbered"."assignment_id" = "agent_assignment"."assignment_id"`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "agent_assignment" DROP COLUMN "row_version"`);
  }
}
