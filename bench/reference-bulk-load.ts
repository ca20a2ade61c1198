import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { type DatasetSize, transactionAt } from './dataset';

/** As the import writes them: 1,000 transactions, and checklist rows 5,000 a statement. */
const TRANSACTIONS_PER_STATEMENT = 1000;
const CHECKLIST_ROWS_PER_STATEMENT = 5000;

type Row = unknown[];

interface GeneratedTransaction {
  readonly requirements: readonly {
    requirement_id: number;
    submitted: boolean;
    stamp: string | null;
  }[];
  readonly [member: string]: unknown;
}

/** A value of the generated record as its column takes it: dates as Date, absent members as NULL. */
const columnValue = (value: unknown, type: string): unknown =>
  value === undefined
    ? null
    : type === 'datetime' && typeof value === 'string'
      ? new Date(value)
      : value;

const placeholders = (rows: number, columns: number) =>
  new Array<string>(rows).fill(`(${new Array<string>(columns).fill('?').join(', ')})`).join(', ');

/**
 * The database's own ceiling for the import's writes: the same transactions and checklists as
 * multi-row INSERTs of rows already in memory, in one transaction, with the import's statement sizes
 * and, as the import, without the server's foreign key checks; no file, no parsing, no validation.
 * Each batch's rows are built before its clock starts, so only the statements are timed. `url` names
 * a migrated database holding the catalogue and no transactions.
 */
export async function referenceBulkLoad(url: string, size: DatasetSize): Promise<number> {
  const connection = await createConnection({
    uri: url.replace(/^mariadb:/, 'mysql:'),
    timezone: 'Z',
  });
  try {
    const [columns] = await connection.query<(RowDataPacket & { name: string; type: string })[]>(
      `SELECT column_name AS name, data_type AS type FROM information_schema.columns
        WHERE table_schema = DATABASE() AND table_name = 'sales_transaction' ORDER BY ordinal_position`,
    );
    const insertTransactions = `INSERT INTO sales_transaction (${columns
      .map(({ name }) => `\`${name}\``)
      .join(', ')}) VALUES `;
    const insertChecklist =
      'INSERT INTO transaction_requirement (transaction_id, requirement_id, submitted, stamp) VALUES ';
    let milliseconds = 0;
    const timed = async (sql: string, rows: readonly Row[], width: number) => {
      const started = performance.now();
      await connection.query(sql + placeholders(rows.length, width), rows.flat());
      milliseconds += performance.now() - started;
    };
    await connection.query('SET SESSION foreign_key_checks = 0');
    await connection.query('START TRANSACTION');
    for (let first = 0; first < size.transactions; first += TRANSACTIONS_PER_STATEMENT) {
      const transactions: Row[] = [];
      const checklist: Row[] = [];
      const last = Math.min(size.transactions, first + TRANSACTIONS_PER_STATEMENT);
      for (let index = first; index < last; index++) {
        const record = transactionAt(size, index) as GeneratedTransaction;
        transactions.push(
          columns.map(({ name, type }) =>
            name === 'row_version' ? 1 : columnValue(record[name], type),
          ),
        );
        for (const item of record.requirements)
          checklist.push([
            index + 1,
            item.requirement_id,
            item.submitted,
            columnValue(item.stamp, 'datetime'),
          ]);
      }
      await timed(insertTransactions, transactions, columns.length);
      for (let start = 0; start < checklist.length; start += CHECKLIST_ROWS_PER_STATEMENT)
        await timed(
          insertChecklist,
          checklist.slice(start, start + CHECKLIST_ROWS_PER_STATEMENT),
          4,
        );
    }
    const started = performance.now();
    await connection.query('COMMIT');
    milliseconds += performance.now() - started;
    return Math.round(size.transactions / (milliseconds / 1000));
  } finally {
    await connection.end();
  }
}
