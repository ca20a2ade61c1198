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

/** The columns UpdateAgents reads of the row it locks, in the real schema (both databases). */
export const LOCKED_COLUMNS = ['transaction_id', 'locked', 'row_version', ...AGENT_CHAIN_FIELDS];

const LOCK_COLUMNS = LOCKED_COLUMNS.map((name) => `\`${name}\``).join(', ');

/**
 * UpdateAgents' SQL written by hand on one connection, in the service's two round trips (the pool must
 * allow several statements per query): START TRANSACTION with the locking read, then the broker and
 * the stamp, the history entry and COMMIT. Rolls back and rethrows on failure.
 */
export async function updateAgentsByHand(
  connection: PoolConnection,
  transactionId: number,
  brokerid: number,
  brokername: string,
): Promise<void> {
  try {
    const [[, rows]] = (await connection.query(
      `START TRANSACTION; SELECT ${LOCK_COLUMNS} FROM \`sales_transaction\` WHERE \`transaction_id\` = ? FOR UPDATE`,
      [transactionId],
    )) as unknown as [[unknown, Array<Record<string, unknown>>]];
    const before = rows[0];
    const stamp = new Date();
    await connection.query(
      'UPDATE `sales_transaction` SET `brokerid` = ?, `brokername` = ?, `stamp` = ?, `row_version` = `row_version` + 1 WHERE `transaction_id` = ?; ' +
        'INSERT INTO `agent_assignment` (`transaction_id`, `stamp`, `changed_by`, `changes`, `row_version`) VALUES (?, ?, NULL, ?, ?); COMMIT',
      [
        brokerid,
        brokername,
        stamp,
        transactionId,
        transactionId,
        stamp,
        JSON.stringify([{ field: 'brokerid', before: before?.brokerid ?? null, after: brokerid }]),
        Number(before?.row_version) + 1,
      ],
    );
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
  const pool = createPool({
    uri: url,
    connectionLimit: connections,
    timezone: 'Z',
    multipleStatements: true,
  });
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
