import { createPool, type PoolConnection } from 'mysql2/promise';
import { AGENT_CHAIN_FIELDS } from '../src/transaction/agent-chain';

export interface LoopResult {
  readonly requestsPerSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly errors: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

const LOCK_COLUMNS = ['transaction_id', 'locked', 'row_version', ...AGENT_CHAIN_FIELDS]
  .map((name) => `\`${name}\``)
  .join(', ');

/**
 * UpdateAgents' SQL written by hand on one connection: lock the row, write the broker and the stamp,
 * append the history, commit. Rolls back and rethrows on failure.
 */
export async function updateAgentsByHand(
  connection: PoolConnection,
  transactionId: number,
  brokerid: number,
  brokername: string,
): Promise<void> {
  try {
    await connection.query('START TRANSACTION');
    const [rows] = await connection.query(
      `SELECT ${LOCK_COLUMNS} FROM \`sales_transaction\` WHERE \`transaction_id\` = ? FOR UPDATE`,
      [transactionId],
    );
    const before = (rows as Array<Record<string, unknown>>)[0];
    const stamp = new Date();
    await connection.query(
      'UPDATE `sales_transaction` SET `brokerid` = ?, `brokername` = ?, `stamp` = ?, `row_version` = `row_version` + 1 WHERE `transaction_id` = ?',
      [brokerid, brokername, stamp, transactionId],
    );
    await connection.query(
      'INSERT INTO `agent_assignment` (`transaction_id`, `stamp`, `changed_by`, `changes`) VALUES (?, ?, NULL, ?)',
      [
        transactionId,
        stamp,
        JSON.stringify([{ field: 'brokerid', before: before?.brokerid ?? null, after: brokerid }]),
      ],
    );
    await connection.query('COMMIT');
  } catch (error) {
    await connection.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** `updateAgentsByHand` in a loop on `connections` concurrent connections for `seconds`. */
export async function runMysqlReference(
  url: string,
  connections: number,
  seconds: number,
  transactionCount: number,
): Promise<LoopResult> {
  const pool = createPool({ uri: url, connectionLimit: connections, timezone: 'Z' });
  const latencies: number[] = [];
  let errors = 0;
  let counter = 0;
  const deadline = Date.now() + seconds * 1000;
  const worker = async () => {
    const connection = await pool.getConnection();
    try {
      while (Date.now() < deadline) {
        const id = 1 + Math.floor(Math.random() * transactionCount);
        const brokerid = 100000 + (counter++ % 1000000);
        const started = performance.now();
        try {
          await updateAgentsByHand(connection, id, brokerid, `Broker ${brokerid}`);
          latencies.push(performance.now() - started);
        } catch {
          errors++;
        }
      }
    } finally {
      connection.release();
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  await pool.end();
  latencies.sort((a, b) => a - b);
  return {
    requestsPerSecond: latencies.length / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    errors,
  };
}
