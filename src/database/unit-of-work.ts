import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Mutex } from 'async-mutex';
import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource, type EntityManager, type QueryRunner } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { type IntegrationEvent, type Publish } from '../events/integration-event';
import { Outbox, type PreparedEvent } from '../events/outbox';
import { type NodeStatus, NodePools } from './node-pools';
import { type ReplicaReport, ReplicaSet } from './replica-set';
import { type Row, type Statement, type Write } from '../common/statement';
import {
  type MysqlConnection,
  type SqliteConnection,
  type StatementResult,
  StatementBatches,
} from './statement-batches';
import {
  CommitOutcomeUnknownError,
  DatabaseUnavailableError,
  isConnectionLost,
  isContention,
  isUnreachable,
  TransactionEndedError,
} from './database-errors';
import { withinTrace } from '../tracing/background';

/** Attempts of a write that meets a deadlock or lock-wait timeout, before giving up with 503. */
const WRITE_ATTEMPTS = 5;
const BACKOFF_BASE_MS = 20;

/** Where a unit stands: its time bound passed (its request was answered), its COMMIT sent. */
interface Deadline {
  passed: boolean;
  committing: boolean;
  /** What a client whose COMMIT went unanswered is told it can do. */
  readonly advice: string;
}

/**
 * A read sent after the COMMIT, in the same round trip and on the same connection, whose rows say
 * whether the unit committed (say, its history entry by LAST_INSERT_ID()). On MySQL a COMMIT that
 * answers OK may have had nothing to commit, its transaction ended by the server before it.
 */
export interface CommitProof extends Statement {
  committed(rows: readonly Row[]): boolean;
}

/**
 * A write unit run as plain statements, in as few round trips as the database allows: on MySQL its
 * read travels with START TRANSACTION and its writes with COMMIT and its proof, two round trips in
 * all; on SQLite every statement runs at once on the one connection.
 */
export interface StatementTransaction {
  /** Starts the transaction with `read` (on MySQL, a locking read: FOR UPDATE); its rows. */
  begin(read: Statement): Promise<Row[]>;
  /**
   * Runs `writes`, stores `events` in the outbox, and commits them. On MySQL, unless every write
   * changed its rows inside the transaction and `proof` finds the unit committed, it fails with
   * TransactionEndedError and is run again. A unit that never calls it is rolled back: it wrote
   * nothing, and published nothing.
   */
  commit(
    writes: readonly Write[],
    proof: CommitProof,
    events?: readonly IntegrationEvent[],
  ): Promise<void>;
}

/** SERVER_STATUS_IN_TRANS, in the status flags of a statement's OK packet. */
const IN_TRANSACTION = 1;

/** Whether each write changed its rows inside the transaction (its results, in order). */
function ranInside(writes: readonly Write[], results: readonly StatementResult[]): boolean {
  return writes.every((write, index) => {
    const { affectedRows, serverStatus = 0 } = results[index] as {
      affectedRows?: number;
      serverStatus?: number;
    };
    return affectedRows === write.rows && (serverStatus & IN_TRANSACTION) !== 0;
  });
}

/** Whether each write changed its rows inside the transaction, and the proof found the commit. */
function committedAsSent(
  writes: readonly Write[],
  results: readonly StatementResult[],
  proof: CommitProof,
): boolean {
  // After the writes, COMMIT, then the proof's rows.
  return ranInside(writes, results) && proof.committed(results[writes.length + 1] as Row[]);
}

/**
 * The transaction a unit runs, as the work it calls sees it: the unit of work's reads and writes
 * called from inside a unit (an event handler's, another module's queries) join it.
 */
interface Joined {
  readonly manager: EntityManager;
  readonly publish: Publish;
  /** What to run once the unit committed. */
  readonly committed: (() => void)[];
}

/** What a unit's work settled: its result, its events, and what runs after its commit. */
interface Settled<T> {
  readonly result: T;
  readonly events: PreparedEvent[];
  readonly committed: readonly (() => void)[];
}

/** Database connections by state, as the pool (or SQLite's one connection) stands now. */
export interface PoolUsage {
  readonly inUse: number;
  readonly idle: number;
  /** Units waiting for a connection. */
  readonly waiting: number;
}

/** What `poolUsage` reads of a mysql2 pool: its own bookkeeping, which it does not publish. */
interface MysqlPoolState {
  _allConnections?: { length: number };
  _freeConnections?: { length: number };
  _connectionQueue?: { length: number };
}

export interface WriteOptions {
  /**
   * Running the work again after it committed changes nothing (it writes values, not increments), so
   * a client whose COMMIT went unanswered can send the same request again.
   */
  readonly idempotent?: boolean;
}

/**
 * Where services touch the database. On MySQL each unit runs on a pooled connection; the embedded
 * SQLite database has a single connection, so its units run one at a time and never see each other's
 * uncommitted writes. No unit outlasts DATABASE_TIMEOUT_MS, and a database that cannot be reached
 * is reported as unavailable (503 with Retry-After), never as an internal error.
 */
@Injectable()
export class UnitOfWork {
  private readonly exclusive?: Mutex;
  private readonly batches: StatementBatches;
  /** Units waiting for the SQLite connection. */
  private queued = 0;
  /** The unit the calling code runs inside, if any. */
  private readonly joined = new AsyncLocalStorage<Joined>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly outbox: Outbox,
  ) {
    if (dataSource.options.type === 'better-sqlite3') this.exclusive = new Mutex();
    this.batches = new StatementBatches(dataSource);
  }

  /**
   * Runs `work` in one database transaction: all of it commits, or none of it, the events it hands to
   * `publish` included. A deadlock or lock-wait timeout rolls it back and runs it again, after a
   * jittered, growing pause. Work whose request was already answered 503 (the time bound passed) rolls
   * back instead of committing late.
   * Once its COMMIT is sent, it can no longer be held back: if the bound passes before the answer, or
   * the connection breaks under it, the outcome is unknown and the error says so (504).
   */
  write<T>(work: ManagedWork<T>, options: WriteOptions = {}): Promise<T> {
    const joined = this.joined.getStore();
    if (joined) return work(joined.manager, joined.publish);
    return this.bounded((deadline) => this.retried(this.managed(work), deadline), options);
  }

  /**
   * As `write`, for a unit written as statements (StatementTransaction): the same retries, time bound
   * and outcome, in fewer round trips than TypeORM's transaction, which sends START TRANSACTION and
   * COMMIT on their own.
   */
  writeStatements<T>(
    work: (transaction: StatementTransaction) => Promise<T>,
    options: WriteOptions = {},
  ): Promise<T> {
    const joined = this.joined.getStore();
    if (joined) return work(this.joinedStatements(joined));
    return this.bounded(
      (deadline) =>
        this.retried(
          (guard) => (this.exclusive ? this.onSqlite(work, guard) : this.onMysql(work, guard)),
          deadline,
        ),
      options,
    );
  }

  /** As `write`, without the time bound: for commands such as an import, not for requests. */
  bulkWrite<T>(work: ManagedWork<T>): Promise<T> {
    const joined = this.joined.getStore();
    if (joined) return work(joined.manager, joined.publish);
    return this.retried(this.managed(work), newDeadline({}));
  }

  /**
   * Runs `callback` once the unit the caller runs in has committed (not at all if it rolls back), or
   * at once outside a unit.
   */
  afterCommit(callback: () => void): void {
    const joined = this.joined.getStore();
    if (joined) joined.committed.push(callback);
    else callback();
  }

  /** A statement unit run inside the unit the caller joined: its statements one by one. */
  private joinedStatements({ manager, publish }: Joined): StatementTransaction {
    return {
      begin: (read) => manager.query<Row[]>(read.sql, [...read.parameters]),
      commit: async (writes, _proof, events = []) => {
        for (const { sql, parameters } of writes) await manager.query(sql, [...parameters]);
        for (const event of events) publish(event);
      },
    };
  }

  /**
   * Runs `work` as part of the transaction `manager` runs: what it calls of the unit of work joins it,
   * and the events it publishes, with those the in-transaction handlers add, are settled after it.
   */
  private async settled<T>(
    manager: EntityManager,
    work: (publish: Publish) => Promise<T>,
  ): Promise<Settled<T>> {
    const published: IntegrationEvent[] = [];
    const publish: Publish = (event) => {
      published.push(event);
    };
    const committed: (() => void)[] = [];
    return this.joined.run({ manager, publish, committed }, async () => {
      const result = await work(publish);
      return { result, events: await this.outbox.settle(manager, published), committed };
    });
  }

  /** Tells of a settled unit's commit: its events to the relay, then what waited for it. */
  private tellCommitted({ events, committed }: Omit<Settled<unknown>, 'result'>): void {
    this.outbox.committed(events);
    for (const callback of committed) callback();
  }

  /** In-transaction handlers of a statement unit's events, on its connection: what they commit with. */
  private async settledOn(
    runner: QueryRunner,
    events: readonly IntegrationEvent[],
  ): Promise<Settled<void>> {
    // The transaction is open on the runner's connection: TypeORM must not begin another.
    const state = runner as { isTransactionActive: boolean };
    const wasActive = state.isTransactionActive;
    state.isTransactionActive = true;
    try {
      return await this.settled(runner.manager, (publish) => {
        events.forEach(publish);
        return Promise.resolve();
      });
    } finally {
      state.isTransactionActive = wasActive;
    }
  }

  /**
   * `work` in TypeORM's transaction, `guard` run once it is done, before the COMMIT. On MariaDB the
   * transaction is first checked to be still open: a Galera node may have ended it under a statement
   * that answered OK, the statements after it running in autocommit (an import's are upserts, so the
   * unit run again still leaves each row as the files say).
   */
  private managed<T>(work: ManagedWork<T>): Attempt<T> {
    return async (guard) => {
      let settled: Settled<T> | undefined;
      const guarded = async (manager: EntityManager) => {
        settled = await this.settled(manager, (publish) => work(manager, publish));
        const { result, events } = settled;
        await this.outbox.insert(manager, events);
        if (this.dataSource.options.type === 'mariadb') {
          const [{ open }] = await manager.query<[{ open: number | string }]>(
            'SELECT @@in_transaction AS open',
          );
          if (Number(open) !== 1) throw new TransactionEndedError();
        }
        guard();
        return result;
      };
      const result = await (this.exclusive
        ? this.exclusively(() => this.dataSource.transaction(guarded))
        : // The server's default isolation: writes lock the rows they read (FOR UPDATE), and naming a
          // level would cost a SET TRANSACTION round trip on every call.
          this.dataSource.transaction(guarded));
      this.tellCommitted(settled!);
      return result;
    };
  }

  /** A statement unit on a pooled MySQL connection: two round trips, or one when it writes nothing. */
  private async onMysql<T>(
    work: (transaction: StatementTransaction) => Promise<T>,
    guard: () => void,
  ): Promise<T> {
    const connection = await this.mysqlConnection(false);
    let open = false;
    const send = (statements: readonly Statement[]) =>
      this.batches.sendMysql(connection, statements);
    try {
      const result = await work({
        begin: async (read) => {
          open = true;
          const [, rows] = await send([{ sql: 'START TRANSACTION', parameters: [] }, read]);
          return rows as Row[];
        },
        commit: async (unitWrites, proof, events = []) => {
          let pending = unitWrites;
          let settled: Omit<Settled<unknown>, 'result'>;
          if (this.outbox.heardInTransaction(events)) {
            // Its writes first, then what its in-transaction handlers add: all before the COMMIT.
            if (!ranInside(unitWrites, await send(unitWrites))) throw new TransactionEndedError();
            pending = [];
            settled = await this.settledOn(this.runnerOn(connection), events);
          } else settled = { events: this.outbox.prepare(events), committed: [] };
          guard();
          const writes = [...this.outbox.writes(settled.events), ...pending];
          const results = await send([...writes, COMMIT, proof]);
          open = false;
          if (!committedAsSent(writes, results, proof)) throw new TransactionEndedError();
          this.tellCommitted(settled);
        },
      });
      if (open) {
        open = false;
        await send([ROLLBACK]);
      }
      return result;
    } catch (error) {
      // A failed statement of a batch stops the batch: the transaction may still be open.
      if (open) await send([ROLLBACK]).catch(() => undefined);
      throw error;
    } finally {
      connection.release();
    }
  }

  /** A statement unit on the SQLite connection, which it holds for its length. */
  private onSqlite<T>(
    work: (transaction: StatementTransaction) => Promise<T>,
    guard: () => void,
  ): Promise<T> {
    return this.exclusively(async () => {
      const connection = this.sqliteConnection();
      const run = (statements: readonly Statement[]) =>
        this.batches.runSqlite(connection, statements);
      try {
        const result = await work({
          begin: (read) =>
            Promise.resolve(run([{ sql: 'BEGIN TRANSACTION', parameters: [] }, read])[1] as Row[]),
          // One writer, one server: a transaction ends only as its unit ends it.
          commit: async (writes, _proof, events = []) => {
            let pending = writes;
            let settled: Omit<Settled<unknown>, 'result'>;
            if (this.outbox.heardInTransaction(events)) {
              run(writes);
              pending = [];
              settled = await this.settledOn(this.dataSource.createQueryRunner(), events);
            } else settled = { events: this.outbox.prepare(events), committed: [] };
            guard();
            run([...this.outbox.writes(settled.events), ...pending, COMMIT]);
            this.tellCommitted(settled);
          },
        });
        if (connection.inTransaction) run([ROLLBACK]);
        return result;
      } catch (error) {
        if (connection.inTransaction) run([ROLLBACK]);
        throw error;
      }
    });
  }

  /**
   * Runs `attempt` until it succeeds or fails for good. `guard`, which the attempt runs just before
   * its COMMIT, abandons it when its request was already answered, and otherwise marks its outcome as
   * depending on that COMMIT.
   */
  private async retried<T>(attempt: Attempt<T>, deadline: Deadline): Promise<T> {
    const guard = () => {
      // Thrown inside the transaction, so it rolls back.
      if (deadline.passed)
        throw new DatabaseUnavailableError('The database did not answer in time.');
      // Nothing but the COMMIT follows: from here, no answer means no knowing.
      deadline.committing = true;
    };
    for (let attemptNumber = 1; ; attemptNumber++) {
      try {
        return await attempt(guard);
      } catch (error) {
        if (deadline.committing && isConnectionLost(error))
          throw new CommitOutcomeUnknownError(deadline.advice, error);
        if (!isContention(error) || attemptNumber === WRITE_ATTEMPTS || deadline.passed)
          throw error;
        // A COMMIT refused for contention (a certification failure on a cluster), or a transaction
        // the server ended under the unit's statements, applied nothing.
        deadline.committing = false;
        await sleep(Math.random() * BACKOFF_BASE_MS * 2 ** attemptNumber);
      }
    }
  }

  /** Reads that must agree with each other: one snapshot (a REPEATABLE READ transaction on MySQL). */
  readSnapshot<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    if (this.exclusive || this.joined.getStore()) return this.read(work);
    return this.bounded(() => this.dataSource.transaction('REPEATABLE READ', work));
  }

  /**
   * Read statements sent together, each one's rows: on MySQL in one round trip, on the primary or, with
   * `replica`, as a plain read outside a transaction goes (a replica when there are replicas). On
   * SQLite, while no unit holds the connection inside a transaction, they run at once: better-sqlite3
   * is synchronous, so nothing interleaves with them and they see only committed rows. Each statement
   * is its own snapshot: a caller that needs them to agree checks it, or uses `readSnapshot`.
   */
  async readStatements(
    statements: readonly Statement[],
    { replica = false }: { replica?: boolean } = {},
  ): Promise<Row[][]> {
    const rowsOf = (results: StatementResult[]) => results as Row[][];
    const joined = this.joined.getStore();
    if (joined) {
      // Inside a unit: in its transaction, seeing what it wrote.
      const rows: Row[][] = [];
      for (const { sql, parameters } of statements)
        rows.push(await joined.manager.query<Row[]>(sql, [...parameters]));
      return rows;
    }
    if (this.exclusive) {
      const connection = this.sqliteConnection();
      const run = () => rowsOf(this.batches.runSqlite(connection, statements));
      return connection.inTransaction
        ? this.read(() => Promise.resolve(run()))
        : Promise.resolve(run());
    }
    return this.bounded(async () => {
      for (;;) {
        const connection = await this.mysqlConnection(replica);
        try {
          return rowsOf(await this.batches.sendMysql(connection, statements));
        } catch (error) {
          // A replica that went away under the read is left out, and the read (which changes
          // nothing) sent again: to another replica, or the primary.
          if (!(replica && this.replicaSet()?.lost(connection, error))) throw error;
        } finally {
          connection.release();
        }
      }
    });
  }

  /**
   * A pooled connection of TypeORM's MySQL driver: the primary's, or with `replica` a replica's when
   * there are replicas (as a plain read outside a transaction goes: ReplicaSet picks it, or the primary
   * while none serves).
   */
  /** A query runner on a pooled MySQL connection the unit holds (and releases itself). */
  private runnerOn(connection: MysqlConnection): QueryRunner {
    const runner = this.dataSource.createQueryRunner('master');
    (runner as unknown as { databaseConnection: MysqlConnection }).databaseConnection = connection;
    return runner;
  }

  private mysqlConnection(replica: boolean): Promise<MysqlConnection> {
    const driver = this.dataSource.driver as unknown as {
      obtainMasterConnection(): Promise<MysqlConnection>;
      obtainSlaveConnection(): Promise<MysqlConnection>;
    };
    return replica ? driver.obtainSlaveConnection() : driver.obtainMasterConnection();
  }

  /**
   * Connections in use, idle and awaited: on MySQL summed over the pools (the primary's, and each
   * replica's), on SQLite its one connection and the units queued for it.
   */
  poolUsage(): PoolUsage {
    if (this.exclusive) {
      const inUse = this.exclusive.isLocked() ? 1 : 0;
      return { inUse, idle: 1 - inUse, waiting: this.queued };
    }
    const driver = this.dataSource.driver as unknown as {
      pool?: MysqlPoolState | NodePools;
      poolCluster?: { _nodes?: Record<string, { pool: MysqlPoolState }> };
    };
    const pools: MysqlPoolState[] =
      driver.pool instanceof NodePools
        ? (driver.pool.pools() as unknown as MysqlPoolState[])
        : driver.pool
          ? [driver.pool]
          : Object.values(driver.poolCluster?._nodes ?? {}).map((node) => node.pool);
    let all = 0;
    let idle = 0;
    let waiting = 0;
    for (const pool of pools) {
      all += pool._allConnections?.length ?? 0;
      idle += pool._freeConnections?.length ?? 0;
      waiting += pool._connectionQueue?.length ?? 0;
    }
    return { inUse: all - idle, idle, waiting };
  }

  /** The read replicas of DATABASE_READ_URLS and where reads go, when there are some; else undefined. */
  replicas(): ReplicaReport | undefined {
    return this.replicaSet()?.status();
  }

  private replicaSet(): ReplicaSet | undefined {
    return ReplicaSet.of(
      (this.dataSource.driver as unknown as { poolCluster?: unknown }).poolCluster,
    );
  }

  /** The nodes DATABASE_URL names and which one is in use, when it names several; else undefined. */
  nodes(): NodeStatus[] | undefined {
    const { pool } = this.dataSource.driver as unknown as { pool?: unknown };
    return pool instanceof NodePools ? pool.status() : undefined;
  }

  /** Runs `work` holding the SQLite connection; counts the units waiting for it meanwhile. */
  private exclusively<T>(work: () => Promise<T>): Promise<T> {
    this.queued++;
    return this.exclusive!.runExclusive(() => {
      this.queued--;
      return work();
    });
  }

  private sqliteConnection(): SqliteConnection {
    return (this.dataSource.driver as unknown as { databaseConnection: SqliteConnection })
      .databaseConnection;
  }

  read<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    const joined = this.joined.getStore();
    if (joined) return work(joined.manager);
    const run = () => work(this.dataSource.manager);
    return this.bounded(() => (this.exclusive ? this.exclusively(run) : run()));
  }

  /**
   * Answers 503 once DATABASE_TIMEOUT_MS has passed, or 504 if a COMMIT is then in flight;
   * `deadline.passed` tells the work it was abandoned.
   */
  private async bounded<T>(
    operation: (deadline: Deadline) => Promise<T>,
    options: WriteOptions = {},
  ): Promise<T> {
    const deadline = newDeadline(options);
    let timer: NodeJS.Timeout | undefined;
    // A plain timer: this runs on every request, and an AbortSignal would cost an exception each time.
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        deadline.passed = true;
        reject(
          deadline.committing
            ? new CommitOutcomeUnknownError(deadline.advice)
            : new DatabaseUnavailableError('The database did not answer in time.'),
        );
      }, this.config.databaseTimeoutMs);
    });
    try {
      return await Promise.race([withinTrace(() => operation(deadline)), timeout]);
    } catch (error) {
      if (isUnreachable(error)) throw new DatabaseUnavailableError(undefined, error);
      if (isContention(error))
        throw new DatabaseUnavailableError('The transaction stayed locked by others.', error);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** A unit run in TypeORM's transaction; the events it hands to `publish` commit with it. */
export type ManagedWork<T> = (manager: EntityManager, publish: Publish) => Promise<T>;

/** One try of a unit; it runs `guard` just before its COMMIT. */
type Attempt<T> = (guard: () => void) => Promise<T>;

const COMMIT: Statement = { sql: 'COMMIT', parameters: [] };
const ROLLBACK: Statement = { sql: 'ROLLBACK', parameters: [] };

function newDeadline({ idempotent = false }: WriteOptions): Deadline {
  return {
    passed: false,
    committing: false,
    advice: idempotent
      ? 'Sending the same request again is safe: it applies the change once.'
      : 'Read the data back before sending the request again.',
  };
}
