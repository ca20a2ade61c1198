import { MigrationInterface, QueryRunner } from 'typeorm';

/** The columns ListTransactions filters or orders on; each index ends with the key it pages by. */
const COLUMNS = [
  'status',
  'financetype',
  'stamp',
  'brokerid',
  'directorid',
  'directorid_recruit',
  'managerid',
  'managerid_recruit',
  'salesagentid',
  'salesagentid_recruit',
];

/** ListTransactions' keyset indexes, (column, transaction_id). */
export class ListingIndexes1795600000000 implements MigrationInterface {
  name = 'ListingIndexes1795600000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    for (const column of COLUMNS)
      await queryRunner.query(
        `CREATE INDEX "IDX_sales_transaction_${column}" ON "sales_transaction" ("${column}", "transaction_id") `,
      );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    for (const column of COLUMNS)
      await queryRunner.query(`DROP INDEX "IDX_sales_transaction_${column}"`);
  }
}
