import { type DataSource } from 'typeorm';

/** A statement as sent, with its parameters. */
export interface Statement {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

/**
 * The names a statement gives its subqueries (`(SELECT …) page`): their rows are ones the statement
 * already read through an index and cut with LIMIT, so reading or sorting them all is no table scan.
 */
const subqueryNames = (sql: string) =>
  new Set([...sql.matchAll(/\)\s+[`"]?(\w+)[`"]?/g)].map((match) => match[1]));

/**
 * The steps of a statement's plan that read a whole table or index instead of looking rows up:
 * `ALL`/`index` access in MariaDB's EXPLAIN, `SCAN` in SQLite's EXPLAIN QUERY PLAN. With `sorts`,
 * also the steps that sort a table's rows instead of reading them in index order: `Using filesort`
 * on a table in MariaDB, a temporary B-tree for ORDER BY in SQLite (in a statement reading only
 * tables; over a subquery's rows, it sorts the few that subquery kept).
 */
export async function fullScans(
  dataSource: DataSource,
  statement: Statement,
  { sorts = false } = {},
): Promise<string[]> {
  const parameters = [...statement.parameters];
  const subqueries = subqueryNames(statement.sql);
  if (dataSource.options.type === 'better-sqlite3') {
    const plan: Array<{ detail: string }> = await dataSource.query(
      `EXPLAIN QUERY PLAN ${statement.sql}`,
      parameters,
    );
    return plan
      .map((step) => step.detail)
      .filter(
        (detail) =>
          (/^SCAN\b/.test(detail) && !subqueries.has(detail.split(' ')[1])) ||
          (sorts && subqueries.size === 0 && /^USE TEMP B-TREE FOR ORDER BY/.test(detail)),
      );
  }
  const plan: Array<{ table: string; type: string | null; key: string | null; Extra: string }> =
    await dataSource.query(`EXPLAIN ${statement.sql}`, parameters);
  return plan
    .filter((step) => !/^<(derived|union)/.test(step.table))
    .filter(
      (step) =>
        step.type === 'ALL' ||
        step.type === 'index' ||
        (sorts && (step.Extra ?? '').includes('Using filesort')),
    )
    .map((step) => `${step.type} on ${step.table} (key ${step.key ?? 'none'}; ${step.Extra})`);
}
