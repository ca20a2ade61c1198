import { Logger } from '@nestjs/common';
import * as mysql2 from 'mysql2';
import {
  type Connection,
  type Pool,
  type PoolCluster,
  type PoolClusterOptions,
  type PoolConnection,
  type PoolOptions,
} from 'mysql2';
import { isServerAway } from './database-errors';
import { withinTrace } from '../tracing/background';

/** Where reads go while no replica serves: to the primary, or nowhere (503). */
export type ReplicaFallback = 'primary' | 'none';

export interface ReplicaSettings {
  readonly fallback: ReplicaFallback;
  /** A replica further behind its primary than this many seconds is left out; 0 checks no lag. */
  readonly maxLagSeconds: number;
  /** How often each replica is checked. */
  readonly checkMs: number;
  /** How long a replica that does not answer is left out before it is checked again. */
  readonly retryMs: number;
}

/** A replica as readiness and the metrics tell it. */
export interface ReplicaStatus {
  /** `host:port`, never the credentials. */
  readonly replica: string;
  /**
   * `serving`: it takes reads; `out`: it does not answer (or refuses the service's account);
   * `lagging`: it answers, but its replication is stopped or further behind than the bound.
   */
  readonly state: ReplicaState;
  /**
   * Seconds_Behind_Master at its last check; `null` while its replication is stopped; absent when
   * not known (out, not a replica, an account that may not ask, or the lag not checked).
   */
  readonly lagSeconds?: number | null;
  /** Why it is left out. */
  readonly reason?: string;
}

export type ReplicaState = 'serving' | 'out' | 'lagging';

export interface ReplicaReport {
  /** Where plain reads go now: to the replicas that serve, to the primary, or nowhere (503). */
  readonly reads: 'replicas' | 'primary' | 'refused';
  readonly replicas: readonly ReplicaStatus[];
}

/** How long a replica's check may take before the replica counts as not answering. */
const CHECK_TIMEOUT_MS = 2000;

/** mysql2's callback for a pooled connection. */
type ConnectionCallback = (
  error: NodeJS.ErrnoException | null,
  connection?: PoolConnection,
) => void;

/** TypeORM names the nodes of its PoolCluster so: `MASTER`, and `SLAVE0`, `SLAVE1`… in list order. */
const PRIMARY_NODE = 'MASTER';
const REPLICA_NODE = /^SLAVE\d+$/;
const REPLICA_PATTERN = 'SLAVE*';

const SLAVE_STATUS = 'SHOW SLAVE STATUS';
const REPLICA_STATUS = 'SHOW REPLICA STATUS';

/** What a check found. */
interface Finding {
  readonly state: ReplicaState;
  readonly lagSeconds?: number | null;
  readonly reason?: string;
}

interface Replica {
  /** Its node id in the PoolCluster. */
  readonly id: string;
  /** `host:port`. */
  readonly address: string;
  readonly options: PoolOptions;
  state: ReplicaState;
  lagSeconds?: number | null;
  reason?: string;
  /** Once out, not checked again before then (ms since the epoch). */
  retryAt: number;
  /** A check is in flight: the next one waits for it. */
  checking: boolean;
  /** The checks' own connection, outside the pool: a check never queues behind requests. */
  probe?: Connection;
  /** Its lag cannot be known (its account may not ask, say); said once. */
  lagUnknownTold: boolean;
  /** SHOW SLAVE STATUS, or SHOW REPLICA STATUS where only that is known. */
  statusSql: string;
  /** Counts the states set by reads, so that a check begun before one does not undo it. */
  changes: number;
}

/** Which set a PoolCluster's replicas belong to, for readiness and the metrics. */
const SETS = new WeakMap<object, ReplicaSet>();

/** A failure of the server or of the service's access to it: the replica cannot take reads. */
function unusable(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return (
    isServerAway(error) ||
    code === 'ER_ACCESS_DENIED_ERROR' ||
    code === 'ER_DBACCESS_DENIED_ERROR' ||
    code === 'ER_BAD_DB_ERROR'
  );
}

/** The driver's message of a failure (mysql2's errors may come from another realm than Error). */
function messageOf(error: unknown): string {
  const message = (error as { message?: unknown })?.message;
  return typeof message === 'string' ? message : String(error);
}

/** Seconds_Behind_Master (MariaDB, MySQL before 8.0.22) or Seconds_Behind_Source. */
function lagOf(row: Record<string, unknown>): number | null {
  const value = row.Seconds_Behind_Master ?? row.Seconds_Behind_Source ?? null;
  return value === null ? null : Number(value);
}

/** Why a replica whose Seconds_Behind_Master is NULL is behind: its threads, its last error. */
function stoppedReason(row: Record<string, unknown>): string {
  const io = (row.Slave_IO_Running ?? row.Replica_IO_Running ?? '?') as string;
  const sql = (row.Slave_SQL_Running ?? row.Replica_SQL_Running ?? '?') as string;
  const error = [row.Last_IO_Error, row.Last_SQL_Error].find(
    (text) => typeof text === 'string' && text !== '',
  ) as string | undefined;
  return `its replication is stopped (IO thread ${io}, SQL thread ${sql}${error ? `: ${error}` : ''})`;
}

/**
 * The read replicas of DATABASE_READ_URLS, as the PoolCluster TypeORM's MySQL driver builds of the
 * primary and its replicas (its `driver` option: mysql2, with `createPoolCluster` wrapped). A plain
 * read (TypeORM's `SLAVE*` connection) goes round robin to a replica that serves, by its node id; a
 * replica whose connection fails is left out at once and the read takes the next one. While none
 * serves, reads go to the primary, or with fallback `none` are refused (503). Every `checkMs` each
 * replica is asked `SHOW SLAVE STATUS` on a connection of the checks' own: one that does not answer
 * within CHECK_TIMEOUT_MS is out (and asked again once `retryMs` has passed); one whose replication
 * is stopped, or further behind than `maxLagSeconds`, is left out until it catches up. Each change
 * is logged once, never per request.
 */
export class ReplicaSet {
  private readonly logger = new Logger('ReadReplicas');
  private readonly replicas: Replica[] = [];
  /** Which replica a connection handed out came from. */
  private readonly owners = new WeakMap<object, Replica>();
  private cluster?: PoolCluster;
  private primaryConnection?: (callback: ConnectionCallback) => void;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  /** The replicas' first check, which the first reads wait for: a start uses no replica lagging. */
  private firstCheck: Promise<void> = Promise.resolve();
  private turn = 0;
  private reads: ReplicaReport['reads'] = 'replicas';

  constructor(private readonly settings: ReplicaSettings) {}

  /** The set whose replicas a PoolCluster holds, if one does. */
  static of(cluster: unknown): ReplicaSet | undefined {
    return typeof cluster === 'object' && cluster !== null ? SETS.get(cluster) : undefined;
  }

  /** mysql2 as TypeORM loads it, whose PoolCluster takes its replica connections from this set. */
  driver(): object {
    return {
      ...mysql2,
      createPoolCluster: (options?: PoolClusterOptions) => this.open(options),
    };
  }

  /** Each replica, in DATABASE_READ_URLS's order, and where reads go. */
  status(): ReplicaReport {
    return {
      reads: this.reads,
      replicas: this.replicas.map(({ address, state, lagSeconds, reason }) => ({
        replica: address,
        state,
        ...(lagSeconds !== undefined && { lagSeconds }),
        ...(state !== 'serving' && reason !== undefined && { reason }),
      })),
    };
  }

  /**
   * Tells the set that a read failed on `connection`: when it came from a replica that is away, the
   * replica is left out and the answer is true, for the read to be sent again (it changes nothing).
   */
  lost(connection: object, error: unknown): boolean {
    const replica = this.owners.get(connection);
    if (!replica || !isServerAway(error)) return false;
    this.owners.delete(connection);
    this.leaveOut(replica, error);
    return true;
  }

  private open(options?: PoolClusterOptions): PoolCluster {
    // A start that failed before it could close its cluster (TypeORM tries again with the same
    // options): its checks stop, and the new cluster's replicas are checked instead.
    this.cluster?.end(() => undefined);
    this.replicas.length = 0;
    this.stopped = false;
    this.reads = 'replicas';
    const cluster = mysql2.createPoolCluster(options);
    const add = cluster.add.bind(cluster) as (id: string, config: PoolOptions) => void;
    const getConnection = cluster.getConnection.bind(cluster) as (
      pattern: string,
      callback: ConnectionCallback,
    ) => void;
    const end = cluster.end.bind(cluster);
    this.primaryConnection = (callback) => getConnection(PRIMARY_NODE, callback);
    Object.assign(cluster, {
      add: (id: string, config: PoolOptions) => {
        add(id, config);
        if (REPLICA_NODE.test(id)) this.replicas.push(this.replicaOf(id, config));
      },
      getConnection: (
        pattern: string,
        selector: string | ConnectionCallback,
        callback?: ConnectionCallback,
      ) => {
        const done = typeof selector === 'function' ? selector : callback!;
        if (pattern === REPLICA_PATTERN) this.connect(done);
        else if (typeof selector === 'function') getConnection(pattern, done);
        else
          (
            cluster.of(pattern, selector) as { getConnection(cb: ConnectionCallback): void }
          ).getConnection(done);
      },
      end: (callback?: (error: NodeJS.ErrnoException | null) => void) => {
        this.stop();
        end(callback);
      },
    });
    this.cluster = cluster;
    SETS.set(cluster, this);
    // TypeORM adds the nodes right after it creates the cluster, before anything else runs.
    this.firstCheck = new Promise<void>((resolve) => setImmediate(resolve)).then(() =>
      this.checkAll(),
    );
    this.timer = setInterval(
      () => void withinTrace(() => this.checkAll()),
      this.settings.checkMs,
    ).unref();
    return cluster;
  }

  private replicaOf(id: string, options: PoolOptions): Replica {
    return {
      id,
      address: `${options.host ?? 'localhost'}:${options.port ?? 3306}`,
      options,
      state: 'serving',
      retryAt: 0,
      checking: false,
      lagUnknownTold: false,
      statusSql: SLAVE_STATUS,
      changes: 0,
    };
  }

  private stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    for (const replica of this.replicas) this.dropProbe(replica);
  }

  /** A connection for a plain read: of a replica that serves, else of the primary or none. */
  private connect(callback: ConnectionCallback): void {
    void this.firstCheck.then(() => this.attempt(callback, new Set()));
  }

  private attempt(callback: ConnectionCallback, tried: Set<Replica>): void {
    const serving = this.replicas.filter(
      (replica) => replica.state === 'serving' && !tried.has(replica),
    );
    if (serving.length === 0) return this.fallBack(callback);
    const replica = serving[this.turn++ % serving.length];
    this.poolOf(replica).getConnection((error, connection) => {
      if (!error) {
        this.owners.set(connection, replica);
        return callback(null, connection);
      }
      // A refusal of the pool itself (its queue is full) says nothing of the server.
      if (!unusable(error)) return callback(error);
      this.leaveOut(replica, error);
      tried.add(replica);
      this.attempt(callback, tried);
    });
  }

  private fallBack(callback: ConnectionCallback): void {
    if (this.settings.fallback === 'primary' && this.primaryConnection)
      return this.primaryConnection(callback);
    const error: NodeJS.ErrnoException = new Error(
      'No read replica serves, and DATABASE_REPLICA_FALLBACK=none keeps reads off the primary',
    );
    // As mysql2's PoolCluster says it: the read is refused as the database being unavailable (503).
    error.code = 'POOL_NONEONLINE';
    callback(error);
  }

  /** The replica's pool in the cluster, by its exact node id. */
  private poolOf(replica: Replica): Pool {
    const nodes = (this.cluster as unknown as { _nodes: Record<string, { pool: Pool }> })._nodes;
    return nodes[replica.id].pool;
  }

  /** Checks every replica not left out for its retry time, and not still being checked. */
  private async checkAll(): Promise<void> {
    await Promise.all(this.replicas.map((replica) => this.check(replica)));
  }

  private async check(replica: Replica): Promise<void> {
    if (this.stopped || replica.checking) return;
    if (replica.state === 'out' && replica.retryAt > Date.now()) return;
    replica.checking = true;
    const changes = replica.changes;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<Finding>((resolve) => {
      timer = setTimeout(resolve, CHECK_TIMEOUT_MS, {
        state: 'out',
        reason: `No answer within ${CHECK_TIMEOUT_MS} ms`,
      });
    });
    try {
      const finding = await Promise.race([
        this.probe(replica).catch((error: unknown): Finding => ({
          state: 'out',
          reason: messageOf(error),
        })),
        timeout,
      ]);
      // A read that found the replica away meanwhile has the last word until the next check.
      if (!this.stopped && replica.changes === changes && this.replicas.includes(replica))
        this.apply(replica, finding);
    } finally {
      clearTimeout(timer);
      replica.checking = false;
    }
  }

  /** Asks the replica how far behind its primary it is, on the checks' own connection. */
  private async probe(replica: Replica): Promise<Finding> {
    const connection = (replica.probe ??= this.openProbe(replica)).promise();
    if (this.settings.maxLagSeconds === 0) {
      await connection.query('SELECT 1');
      return { state: 'serving' };
    }
    let rows: Record<string, unknown>[];
    try {
      rows = (await connection.query(replica.statusSql))[0] as Record<string, unknown>[];
    } catch (error) {
      if (unusable(error)) throw error;
      // MySQL 8.4 knows only SHOW REPLICA STATUS (MariaDB from 10.5.1 and MySQL from 8.0.22 take both).
      if (
        (error as { code?: unknown }).code === 'ER_PARSE_ERROR' &&
        replica.statusSql !== REPLICA_STATUS
      ) {
        replica.statusSql = REPLICA_STATUS;
        return this.probe(replica);
      }
      // It answers, but will not say how far behind it is: it serves, its lag unknown.
      this.tellLagUnknown(replica, error);
      return { state: 'serving' };
    }
    // Not a replica of anything (or the primary itself): nothing to be behind.
    if (rows.length === 0) return { state: 'serving' };
    const lagSeconds = lagOf(rows[0]);
    if (lagSeconds === null)
      return { state: 'lagging', lagSeconds, reason: stoppedReason(rows[0]) };
    if (lagSeconds > this.settings.maxLagSeconds)
      return {
        state: 'lagging',
        lagSeconds,
        reason: `${lagSeconds} s behind its primary, more than DATABASE_REPLICA_MAX_LAG_SECONDS (${this.settings.maxLagSeconds} s)`,
      };
    return { state: 'serving', lagSeconds };
  }

  private openProbe(replica: Replica): Connection {
    const connection = mysql2.createConnection({ ...replica.options });
    // An idle connection the server closes reports it here; the next check opens another.
    connection.on('error', () => {
      if (replica.probe === connection) replica.probe = undefined;
    });
    return connection;
  }

  private dropProbe(replica: Replica): void {
    replica.probe?.destroy();
    replica.probe = undefined;
  }

  private tellLagUnknown(replica: Replica, error: unknown): void {
    if (replica.lagUnknownTold) return;
    replica.lagUnknownTold = true;
    const denied = (error as { code?: unknown }).code === 'ER_SPECIFIC_ACCESS_DENIED_ERROR';
    this.logger.warn(
      `The replication lag of read replica ${replica.address} cannot be checked (${messageOf(error)}): it takes reads whatever its lag.${denied ? ' Grant its account REPLICA MONITOR (MariaDB) or REPLICATION CLIENT (MySQL) for DATABASE_REPLICA_MAX_LAG_SECONDS to hold.' : ''}`,
    );
  }

  /** Leaves out a replica a read found away. */
  private leaveOut(replica: Replica, error: unknown): void {
    replica.changes++;
    this.apply(replica, { state: 'out', reason: messageOf(error) });
  }

  /** Records what a check or a failed connection found, and says so when the replica's state changes. */
  private apply(replica: Replica, finding: Finding): void {
    const before = replica.state;
    replica.state = finding.state;
    replica.lagSeconds = finding.state === 'out' ? undefined : finding.lagSeconds;
    replica.reason = finding.reason;
    if (finding.state === 'out') {
      replica.retryAt = Date.now() + this.settings.retryMs;
      this.dropProbe(replica);
    }
    if (finding.state === before) return;
    if (finding.state === 'out')
      this.logger.warn(
        `Read replica ${replica.address} is out: ${finding.reason ?? 'it does not answer'}. It is checked again in ${this.settings.retryMs} ms.`,
      );
    else if (finding.state === 'lagging')
      this.logger.warn(
        `Read replica ${replica.address} is left out: ${finding.reason ?? 'it lags'}. It takes reads again once it catches up.`,
      );
    else
      this.logger.log(
        `Read replica ${replica.address} serves again${typeof finding.lagSeconds === 'number' ? ` (${finding.lagSeconds} s behind its primary)` : ''}.`,
      );
    this.settle();
  }

  /** Where reads go now; said once when it changes. */
  private settle(): void {
    const serving = this.replicas.filter((replica) => replica.state === 'serving').length;
    const reads: ReplicaReport['reads'] =
      serving > 0 ? 'replicas' : this.settings.fallback === 'primary' ? 'primary' : 'refused';
    if (reads === this.reads) return;
    this.reads = reads;
    if (reads === 'primary')
      this.logger.warn(
        'No read replica serves: reads go to the primary until one does (DATABASE_REPLICA_FALLBACK=primary).',
      );
    else if (reads === 'refused')
      this.logger.error(
        'No read replica serves: reads are refused (503) until one does (DATABASE_REPLICA_FALLBACK=none).',
      );
    else
      this.logger.log(
        `Read replicas serve again: reads go to ${serving === 1 ? 'one replica' : `${serving} replicas`}, not the primary.`,
      );
  }
}
