import { AbstractLogger, DataSource } from 'typeorm';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { describeOnEachDatabase, type SuiteContext } from './support/test-app';

/** Enough rows that a scan and an index lookup differ, for the planner as for the tests. */
const TRANSACTIONS = 400;
const PROBED = 237;

interface Statement {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

/** Records every statement TypeORM sends, with its parameters, while `recording` is set. */
class StatementRecorder extends AbstractLogger {
  recording = false;
  readonly statements: Statement[] = [];

  override logQuery(query: string, parameters?: unknown[]): void {
    if (this.recording) this.statements.push({ sql: query, parameters: parameters ?? [] });
  }

  /** Nothing is printed: the statements are only kept. */
  protected writeLog(): void {}
}

/** The statements whose plan matters: reads and writes of rows, not transaction control or inserts. */
const planned = (statements: readonly Statement[]) =>
  statements.filter((statement) => /^\s*(SELECT|UPDATE|DELETE)\b/i.test(statement.sql));

/**
 * The steps of a statement's plan that read a whole table or index instead of looking rows up:
 * `ALL`/`index` access in MariaDB's EXPLAIN, `SCAN` in SQLite's EXPLAIN QUERY PLAN.
 */
async function fullScans(dataSource: DataSource, statement: Statement): Promise<string[]> {
  const parameters = [...statement.parameters];
  if (dataSource.options.type === 'better-sqlite3') {
    const plan: Array<{ detail: string }> = await dataSource.query(
      `EXPLAIN QUERY PLAN ${statement.sql}`,
      parameters,
    );
    return plan.map((step) => step.detail).filter((detail) => /^SCAN\b/.test(detail));
  }
  const plan: Array<{ table: string; type: string | null; key: string | null }> =
    await dataSource.query(`EXPLAIN ${statement.sql}`, parameters);
  return plan
    .filter((step) => step.type === 'ALL' || step.type === 'index')
    .map((step) => `${step.type} on ${step.table} (key ${step.key ?? 'none'})`);
}

describeOnEachDatabase('Query plans of the per-transaction routes', (context: SuiteContext) => {
  const recorder = new StatementRecorder();
  let dataSource: DataSource;

  beforeAll(async () => {
    const transactions = Array.from({ length: TRANSACTIONS }, (_, index) =>
      transactionRecord(index + 1, {
        requirements: [
          { requirement_id: 11, submitted: true, stamp: null },
          { requirement_id: 12, submitted: false, stamp: null },
          { requirement_id: 21, submitted: null, stamp: null },
        ],
      }),
    );
    await context.running.seed({ requirements: CATALOGUE, transactions });
    dataSource = context.running.app.get(DataSource);
    // Every transaction gets a history entry, so the history table is as large as the transactions'.
    for (let id = 1; id <= TRANSACTIONS; id++) {
      await context.http
        .post('/api/Transaction/UpdateAgents')
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ transaction_id: id, financetype: 'Cash', brokerid: id }))
        .expect(204);
    }
    // Fresh statistics, as a database that has served for a while has them.
    await dataSource.query(
      dataSource.options.type === 'better-sqlite3'
        ? 'ANALYZE'
        : 'ANALYZE TABLE sales_transaction, transaction_requirement, agent_assignment',
    );
    (dataSource as { logger: DataSource['logger'] }).logger = recorder;
  });

  /** The statements one request sends: recorded around it, then each one's plan checked. */
  async function statementsOf(send: () => Promise<unknown>): Promise<Statement[]> {
    recorder.statements.length = 0;
    recorder.recording = true;
    try {
      await send();
    } finally {
      recorder.recording = false;
    }
    return planned(recorder.statements);
  }

  it.each([
    [
      'GetTransaction',
      () => context.http.get(`/api/Transaction/GetTransaction/${PROBED}`).expect(200),
      // The transaction's row, then its checklist with the catalogue and the row's version.
      2,
    ],
    [
      'GetAgentHistory',
      () => context.http.get(`/api/Transaction/GetAgentHistory/${PROBED}`).expect(200),
      1,
    ],
    [
      'UpdateAgents',
      () =>
        context.http
          .post('/api/Transaction/UpdateAgents')
          .set('Content-Type', 'application/json')
          .send(
            JSON.stringify({
              transaction_id: PROBED,
              financetype: 'Cash',
              brokerid: 9001,
              brokername: 'Indexed',
            }),
          )
          .expect(204),
      2,
    ],
  ])('%s looks its rows up by index: no statement scans a table', async (_, send, count) => {
    const statements = await statementsOf(send);
    expect(statements).toHaveLength(count);
    for (const statement of statements) {
      expect({ sql: statement.sql, scans: await fullScans(dataSource, statement) }).toEqual({
        sql: statement.sql,
        scans: [],
      });
    }
  });

  it('reports a scan when a statement filters on a column without an index', async () => {
    const scans = await fullScans(dataSource, {
      sql: 'SELECT transaction_id FROM sales_transaction WHERE brokername = ?',
      parameters: ['Indexed'],
    });
    expect(scans).toHaveLength(1);
  });
});
