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

/**
 * ListTransactions' keyset indexes, (column, transaction_id). Written by hand: status and financetype
 * are TEXT, which MariaDB and MySQL index only by a prefix; 255 characters hold every value the
 * listing is meant to filter on, and a longer one is still found, its full value checked on the row.
 */
export class ListingIndexes1795600000000 implements MigrationInterface {
  name = 'ListingIndexes1795600000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    const keyPart = (column: string) =>
      column === 'status' || column === 'financetype' ? `\`${column}\`(255)` : `\`${column}\``;
    await queryRunner.query(
      `ALTER TABLE \`sales_transaction\` ${COLUMNS.map(
        (column) =>
          `ADD INDEX \`IDX_sales_transaction_${column}\` (${keyPart(column)}, \`transaction_id\`)`,
      ).join(', ')}`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE \`sales_transaction\` ${COLUMNS.map(
        (column) => `DROP INDEX \`IDX_sales_transaction_${column}\``,
      ).join(', ')}`,
    );
  }
}
