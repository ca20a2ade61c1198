/** A row as a driver returns it: column names to values. */
export type Row = Record<string, unknown>;

/** One SQL statement with its `?` parameters. */
export interface Statement {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

/**
 * A write of a statement unit, and the rows it changes when it runs inside its transaction. On
 * MariaDB it is written to change nothing outside one (`AND @@in_transaction = 1`): a Galera node may
 * end the transaction under the batch and run the rest of it in autocommit.
 */
export interface Write extends Statement {
  readonly rows: number;
}
