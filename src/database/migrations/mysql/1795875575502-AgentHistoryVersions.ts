import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each history entry records the transaction's row version after its change. Entries written before
 * get it where it can be derived exactly: a transaction is created at version 1, and UpdateAgents and
 * the import advance it by one with each history entry they write; so when a transaction's version is
 * one more than its entries, nothing else ever changed it, and its k-th entry (by assignment_id) left
 * version k + 1. A transaction changed otherwise too (an import that changed no agent, or replaced
 * its checklist) is past that count, and which of its entries came before those changes is not
 * known: they stay null rather than guessed. The numbering is a derived table (materialized, as it
 * holds window functions), so the UPDATE may read the table it writes.
 */
export class AgentHistoryVersions1795875575502 implements MigrationInterface {
  name = 'AgentHistoryVersions1795875575502';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE \`agent_assignment\` ADD \`row_version\` int NULL`);
    await queryRunner.query(
      `UPDATE \`agent_assignment\` \`entry\` JOIN (` +
        `SELECT \`assignment_id\`, \`transaction_id\`, ` +
        `ROW_NUMBER() OVER (PARTITION BY \`transaction_id\` ORDER BY \`assignment_id\`) + 1 AS \`version\`, ` +
        `COUNT(*) OVER (PARTITION BY \`transaction_id\`) AS \`entries\` FROM \`agent_assignment\`) \`numbered\` ` +
        `ON \`numbered\`.\`assignment_id\` = \`entry\`.\`assignment_id\` ` +
        `JOIN \`sales_transaction\` \`owner\` ON \`owner\`.\`transaction_id\` = \`numbered\`.\`transaction_id\` ` +
        `AND \`owner\`.\`row_version\` = \`numbered\`.\`entries\` + 1 ` +
        `SET \`entry\`.\`row_version\` = \`numbered\`.\`version\``,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE \`agent_assignment\` DROP COLUMN \`row_version\``);
  }
}
