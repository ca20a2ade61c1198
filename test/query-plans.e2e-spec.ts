import { AbstractLogger, DataSource } from 'typeorm';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { fullScans, type Statement } from './support/query-plans';
import { inRequest, RequestContextModule } from './support/request-context.module';
import { describeOnEachDatabase, type SuiteContext } from './support/test-app';

/** Enough rows that a scan and an index lookup differ, for the planner as for the tests. */
const TRANSACTIONS = 400;
const PROBED = 237;
/** Clients sending the UpdateAgents that give each imported transaction its history entry. */
const CLIENTS = 4;
/**
 * Rows added in bulk for ListTransactions, whose statements read ranges of the whole table: its plans
 * are checked at a million rows, as a production table holds (`QUERY_PLAN_ROWS` sets fewer for a
 * quick run).
 */
const LISTED = Number(process.env.QUERY_PLAN_ROWS ?? 1_000_000);
/** Loading a million rows takes up to about a minute on MariaDB, more on a busy machine. */
const LOAD_TIMEOUT_MS = 10 * 60 * 1000;
const STATUSES = ['Reserved', 'Approved', 'Cancelled', 'Closed'];
const FINANCE_TYPES = ['Cash', 'Bank Financing', 'Pag-IBIG'];

/** Records every statement TypeORM sends, with its parameters, while `recording` is set. */
class StatementRecorder extends AbstractLogger {
  recording = false;
  readonly statements: Statement[] = [];

  /** Sent for a request: the relay's and the event handlers' own statements are left out. */
  override logQuery(query: string, parameters?: unknown[]): void {
    if (this.recording && inRequest.getStore())
      this.statements.push({ sql: query, parameters: parameters ?? [] });
  }

  /** Nothing is printed: the statements are only kept. */
  protected writeLog(): void {}
}

/** The statements whose plan matters: reads and writes of rows, not transaction control or inserts. */
const planned = (statements: readonly Statement[]) =>
  statements.filter((statement) => /^\s*(SELECT|UPDATE|DELETE)\b/i.test(statement.sql));

/**
 * ListTransactions' rows beyond the imported ones, written by one statement: statuses, finance types
 * and agents spread as a real book's, a stamp per second with ties, ids after the imported ones.
 */
function bulkListed(dataSource: DataSource, count: number): string {
  const sqlite = dataSource.options.type === 'better-sqlite3';
  const pick = (values: readonly string[], modulus: string) =>
    `CASE ${modulus} ${values.map((value, index) => `WHEN ${index} THEN '${value}'`).join(' ')} END`;
  const id = `${TRANSACTIONS} + n`;
  const stamp = sqlite
    ? `strftime('%Y-%m-%d %H:%M:%f', '2025-01-01', '+' || (n / 3) || ' seconds')`
    : `TIMESTAMPADD(SECOND, n DIV 3, '2025-01-01')`;
  const rows = sqlite
    ? `WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ${count}) SELECT`
    : 'SELECT';
  const columns =
    'transaction_id, row_version, status, financetype, stamp, brokerid, directorid, ' +
    'directorid_recruit, managerid, managerid_recruit, salesagentid, salesagentid_recruit';
  const values = [
    id,
    '1',
    pick(STATUSES, 'n % 4'),
    pick(FINANCE_TYPES, 'n % 3'),
    stamp,
    ...[50, 70, 90, 300, 400, 2000, 3000].map((agents) => `n % ${agents}`),
  ].join(', ');
  const from = sqlite ? 'FROM s' : `FROM (SELECT seq AS n FROM seq_1_to_${count}) s`;
  return `INSERT INTO sales_transaction (${columns}) ${rows} ${values} ${from}`;
}

/**
 * Writes ListTransactions' rows into the empty table as a bulk load does, the indexes built by sorting
 * the rows once rather than updated row by row (ten of them: most of the load's time). MariaDB does
 * so itself for an insert into an empty table without unique and foreign key checks; SQLite builds
 * the table's indexes after the rows, from their own definitions, so that the schema is the
 * migrations' again.
 */
async function loadListed(dataSource: DataSource, count: number): Promise<void> {
  const insert = bulkListed(dataSource, count);
  if (dataSource.options.type !== 'better-sqlite3') {
    await dataSource.query(`SET STATEMENT unique_checks = 0, foreign_key_checks = 0 FOR ${insert}`);
    return;
  }
  const indexes = await dataSource.query<{ name: string; sql: string }[]>(
    "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'sales_transaction' " +
      'AND sql IS NOT NULL',
  );
  for (const { name } of indexes) await dataSource.query(`DROP INDEX "${name}"`);
  await dataSource.query(insert);
  for (const { sql } of indexes) await dataSource.query(sql);
}

const LIST = '/api/Transaction/ListTransactions';

describeOnEachDatabase(
  'Query plans of the per-transaction routes',
  (context: SuiteContext) => {
    const recorder = new StatementRecorder();
    let dataSource: DataSource;

    beforeAll(async () => {
      const transactions = Array.from({ length: TRANSACTIONS }, (_, index) =>
        transactionRecord(index + 1, {
          status: STATUSES[index % STATUSES.length],
          financetype: FINANCE_TYPES[index % FINANCE_TYPES.length],
          requirements: [
            { requirement_id: 11, submitted: true, stamp: null },
            { requirement_id: 12, submitted: false, stamp: null },
            { requirement_id: 21, submitted: null, stamp: null },
          ],
        }),
      );
      dataSource = context.running.app.get(DataSource);
      // First, into the empty table: MariaDB builds the indexes of a bulk load only there.
      await loadListed(dataSource, LISTED);
      await context.running.seed({ requirements: CATALOGUE, transactions });
      // Every transaction gets a history entry, so the history table is as large as the transactions';
      // from a few clients at once, as a service serves them.
      await Promise.all(
        Array.from({ length: CLIENTS }, async (_, client) => {
          for (let id = client + 1; id <= TRANSACTIONS; id += CLIENTS) {
            await context.http
              .post('/api/Transaction/UpdateAgents')
              .set('Content-Type', 'application/json')
              .send(JSON.stringify({ transaction_id: id, financetype: 'Cash', brokerid: id }))
              .expect(204);
          }
        }),
      );
      // Fresh statistics, as a database that has served for a while has them.
      await dataSource.query(
        dataSource.options.type === 'better-sqlite3'
          ? 'ANALYZE'
          : 'ANALYZE TABLE sales_transaction, transaction_requirement, agent_assignment',
      );
      (dataSource as { logger: DataSource['logger'] }).logger = recorder;
    }, LOAD_TIMEOUT_MS);

    /**
     * The statements one request sends, recorded around it (the relay's and the event handlers' are
     * not its own), then each one's plan checked.
     */
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
        // Its locking read and its UPDATE, and on MariaDB the read after the COMMIT that proves it.
        { sqlite: 2, mariadb: 3 },
      ],
    ] as const)(
      '%s looks its rows up by index: no statement scans a table',
      async (_, send, count) => {
        const statements = await statementsOf(send);
        expect(statements).toHaveLength(
          typeof count === 'number' ? count : count[context.database.kind],
        );
        for (const statement of statements) {
          expect({ sql: statement.sql, scans: await fullScans(dataSource, statement) }).toEqual({
            sql: statement.sql,
            scans: [],
          });
        }
      },
    );

    /** A cursor of ListTransactions: the next_cursor of its first page with `query`. */
    async function cursorOf(query: string): Promise<string> {
      const { body } = await context.http.get(`${LIST}?${query}`).expect(200);
      return (body as { next_cursor: string }).next_cursor;
    }

    const since = 'changed_since=2025-01-01T01:00:00Z';
    it.each<[string, () => Promise<string>]>([
      ['no filter', () => Promise.resolve('')],
      ['no filter, a later page', async () => `cursor=${await cursorOf('')}`],
      ['status', () => Promise.resolve('status=Approved')],
      ['financetype', () => Promise.resolve('financetype=Pag-IBIG')],
      ['agent_id', () => Promise.resolve('agent_id=17')],
      ['agent_id, a later page', async () => `agent_id=17&cursor=${await cursorOf('agent_id=17')}`],
      ['changed_since', () => Promise.resolve(since)],
      ['changed_since, a later page', async () => `${since}&cursor=${await cursorOf(since)}`],
      [
        'status, financetype and agent_id, a later page',
        async () => {
          const query = 'status=Closed&financetype=Cash&agent_id=3';
          return `${query}&cursor=${await cursorOf(query)}`;
        },
      ],
      [
        'changed_since and status, a later page',
        async () => {
          const query = `${since}&status=Cancelled`;
          return `${query}&cursor=${await cursorOf(query)}`;
        },
      ],
    ])(
      'ListTransactions with %s reads index ranges in key order: no scan, no sort of the table',
      async (_, queryOf) => {
        const query = await queryOf();
        const statements = await statementsOf(() =>
          context.http.get(`${LIST}?${query}`).expect(200),
        );
        // The page's rows, then the checklists of all of them: that one looks the listed transactions
        // up by key and sorts only their items (MariaDB's filesort over a join ordered by two tables).
        expect(statements).toHaveLength(2);
        const [page, checklists] = statements;
        for (const [statement, sorts] of [
          [page, true],
          [checklists, false],
        ] as const) {
          expect({
            sql: statement.sql,
            scans: await fullScans(dataSource, statement, { sorts }),
          }).toEqual({ sql: statement.sql, scans: [] });
        }
      },
    );

    it('reports a scan when a statement filters on a column without an index', async () => {
      const scans = await fullScans(dataSource, {
        sql: 'SELECT transaction_id FROM sales_transaction WHERE brokername = ?',
        parameters: ['Indexed'],
      });
      expect(scans).toHaveLength(1);
    });

    it('reports a sort when a statement orders a table by a column without an index', async () => {
      const scans = await fullScans(
        dataSource,
        {
          sql: 'SELECT transaction_id FROM sales_transaction WHERE status = ? ORDER BY brokername LIMIT 5',
          parameters: ['Approved'],
        },
        { sorts: true },
      );
      expect(scans).toHaveLength(1);
    });
  },
  {},
  // Marks each request's own statements.
  [RequestContextModule],
);
