import * as mysql2 from 'mysql2';
import { type Pool, type PoolConnection, type PoolOptions } from 'mysql2';
import { isServerAway } from './database-errors';
import { withinTrace } from '../tracing/background';

/** A node as readiness and the metrics tell it: its address, and whether it serves. */
export interface NodeStatus {
  /** `host:port`, never the credentials. */
  readonly node: string;
  /** `in use`: connections are taken from it; `standby`: it serves, after a node in use; `out`. */
  readonly state: 'in use' | 'standby' | 'out';
  /** Why it is out: the last failure, or its wsrep state. */
  readonly reason?: string;
}

/** How long a node's check may take before the node counts as away (a connection attempt's bound). */
const CHECK_TIMEOUT_MS = 2000;

interface Node {
  readonly host: string;
  readonly port: number;
  /** `host:port`, as readiness and the metrics name it. */
  readonly address: string;
  pool?: Pool;
  /** A check is in flight: the next one waits for it. */
  checking?: boolean;
  /** Once left out, not asked again before then (ms since the epoch). */
  outUntil: number;
  /** Left out, and back only once a check finds it serving (a rejoining node answers before). */
  out: boolean;
  reason?: string;
}

/** What a Galera node reports of itself: its state, and whether it may serve. */
type WsrepStatus = Record<string, string>;

/**
 * The nodes DATABASE_URL names (`mysql://user:pass@host1:3306,host2:3306/db`, a Galera cluster), as the
 * one pool TypeORM's MySQL driver takes (its `driver` option: mysql2, with `createPool` replaced).
 * Every connection comes from the first node, in the URL's order, that is not left out, so that every
 * instance of the service writes through the same node while it is up and Galera has no conflicting
 * writes to settle between nodes. A node is left out for `retryMs` when a connection to it fails, or
 * when its check (every `checkMs`) finds it away or, on Galera, not Synced in the primary component;
 * its idle connections are closed then. Once the time has passed it is checked again, and serves
 * again when the check finds it serving (a rejoining Galera node takes connections before it is
 * Synced). While every node is left out, each is tried in turn: a node back early serves at once.
 */
export class NodePools {
  private readonly nodes: Node[];
  private options?: PoolOptions;
  private timer?: NodeJS.Timeout;
  /** The nodes' first check, which the first connections wait for: a start uses no node out of sync. */
  private firstCheck: Promise<void> = Promise.resolve();

  constructor(
    addresses: readonly { host: string; port: number }[],
    private readonly retryMs: number,
    private readonly checkMs: number,
  ) {
    this.nodes = addresses.map(({ host, port }) => ({
      host,
      port,
      address: `${host}:${port}`,
      outUntil: 0,
      out: false,
    }));
  }

  /** mysql2 as TypeORM loads it, whose pools are these nodes'. */
  driver(): object {
    return { ...mysql2, createPool: (options: PoolOptions) => this.open(options) };
  }

  /** Each node, in the URL's order. */
  status(): NodeStatus[] {
    let inUse = false;
    return this.nodes.map((node) => {
      if (node.out) return { node: node.address, state: 'out', reason: node.reason };
      const state = inUse ? 'standby' : 'in use';
      inUse = true;
      return { node: node.address, state };
    });
  }

  /** Every pool, for the connection counts. */
  pools(): Pool[] {
    return this.nodes.flatMap((node) => (node.pool ? [node.pool] : []));
  }

  private open(options: PoolOptions): this {
    this.options = options;
    this.firstCheck = this.checkAll();
    this.timer = setInterval(() => void withinTrace(() => this.checkAll()), this.checkMs).unref();
    return this;
  }

  /** A connection of the first node that serves, as mysql2's `Pool.getConnection` hands one out. */
  getConnection(callback: (error: Error | null, connection?: PoolConnection) => void): void {
    void this.firstCheck.then(() => this.connect(callback));
  }

  private connect(callback: (error: Error | null, connection?: PoolConnection) => void): void {
    const serving = this.nodes.filter((node) => !node.out);
    const candidates = serving.length > 0 ? serving : this.nodes;
    const attempt = (index: number, lastError?: Error) => {
      if (index === candidates.length) return callback(lastError ?? new Error('No node serves'));
      const node = candidates[index];
      const pool = this.poolOf(node);
      pool.getConnection((error, connection) => {
        if (!error) {
          node.out = false;
          return callback(null, connection);
        }
        // A pool closed meanwhile was left out by a request that met the same failure first.
        const replaced = node.pool !== pool;
        if (!replaced && !isServerAway(error)) return callback(error);
        if (!replaced) this.leaveOut(node, error.message);
        attempt(index + 1, error);
      });
    };
    attempt(0);
  }

  /** Closes every node's pool, as mysql2's `Pool.end`. */
  end(callback: (error?: Error | null) => void): void {
    clearInterval(this.timer);
    const pools = this.pools();
    for (const node of this.nodes) node.pool = undefined;
    Promise.all(pools.map((pool) => pool.promise().end())).then(
      () => callback(null),
      (error: Error) => callback(error),
    );
  }

  /**
   * The node's pool. Each of its connections reads causally (`wsrep_sync_wait = 1`): a read waits
   * until the node has applied every write the cluster committed before it, so a caller reads its
   * own write even when it went through another node (before a failover, or from an instance whose
   * list differs). A server without Galera refuses the setting, and reads as it always does.
   */
  private poolOf(node: Node): Pool {
    if (!node.pool) {
      node.pool = mysql2.createPool({ ...this.options, host: node.host, port: node.port });
      node.pool.on('connection', (connection) =>
        connection.query('SET SESSION wsrep_sync_wait = 1', () => undefined),
      );
    }
    return node.pool;
  }

  /** Leaves a node out for the retry time, closing its pool: its idle connections may be dead. */
  private leaveOut(node: Node, reason: string): void {
    node.out = true;
    node.outUntil = Date.now() + this.retryMs;
    node.reason = reason;
    const pool = node.pool;
    node.pool = undefined;
    // Connections in use end with their requests; nothing waits for this.
    pool?.end(() => undefined);
  }

  /**
   * Asks each node whether it serves: it answers within CHECK_TIMEOUT_MS and, on Galera, is Synced
   * in the primary component. A node left out is not asked until its time out has passed.
   */
  private async checkAll(): Promise<void> {
    await Promise.all(
      this.nodes.map(async (node) => {
        if (node.outUntil > Date.now() || node.checking) return;
        node.checking = true;
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<string>((resolve) => {
          timer = setTimeout(resolve, CHECK_TIMEOUT_MS, `No answer within ${CHECK_TIMEOUT_MS} ms`);
        });
        try {
          const problem = await Promise.race([this.check(node), timeout]);
          if (problem) this.leaveOut(node, problem);
          else node.out = false;
        } catch (error) {
          if (isServerAway(error)) this.leaveOut(node, (error as Error).message);
        } finally {
          clearTimeout(timer);
          node.checking = false;
        }
      }),
    );
  }

  private async check(node: Node): Promise<string | undefined> {
    const pool = this.poolOf(node).promise();
    const values = async (sql: string): Promise<WsrepStatus> =>
      Object.fromEntries(
        ((await pool.query(sql))[0] as { Variable_name: string; Value: string }[]).map((row) => [
          row.Variable_name.toLowerCase(),
          row.Value,
        ]),
      );
    // A server without Galera (MySQL, or MariaDB with wsrep off) serves once it answers.
    if ((await values("SHOW VARIABLES WHERE Variable_name = 'wsrep_on'")).wsrep_on !== 'ON')
      return undefined;
    const status = await values(
      "SHOW STATUS WHERE Variable_name IN ('wsrep_ready', 'wsrep_local_state_comment', 'wsrep_cluster_status')",
    );
    const synced =
      status.wsrep_ready === 'ON' &&
      status.wsrep_local_state_comment === 'Synced' &&
      status.wsrep_cluster_status === 'Primary';
    return synced
      ? undefined
      : `wsrep: ${status.wsrep_local_state_comment ?? '?'}, ${status.wsrep_cluster_status ?? '?'}, ready ${status.wsrep_ready ?? '?'}`;
  }
}
