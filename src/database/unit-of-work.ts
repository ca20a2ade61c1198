import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Mutex } from 'async-mutex';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource, type EntityManager } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import {
  CommitOutcomeUnknownError,
  DatabaseUnavailableError,
  isConnectionLost,
  isContention,
  isUnreachable,
} from './database-errors';

/** Attempts of a write that meets a deadlock or lock-wait timeout, before giving up with 503. */
const WRITE_ATTEMPTS = 5;
const BACKOFF_BASE_MS = 20;

/** What a unit uses of better-sqlite3's connection, which is synchronous. */
interface SqliteConnection {
  readonly inTransaction: boolean;
  prepare(sql: string): { all(): unknown[] };
}

/** Where a unit stands: its time bound passed (its request was answered), its COMMIT sent. */
interface Deadline {
  passed: boolean;
  committing: boolean;
  /** What a client whose COMMIT went unanswered is told it can do. */
  readonly advice: string;
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
  private readonly sqliteStatements = new Map<string, { all(): unknown[] }>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    if (dataSource.options.type === 'better-sqlite3') this.exclusive = new Mutex();
  }

  /**
   * Runs `work` in one database transaction: all of it commits, or none of it. A deadlock or
   * lock-wait timeout rolls it back and runs it again, after a jittered, growing pause. Work whose
   * request was already answered 503 (the time bound passed) rolls back instead of committing late.
   * Once its COMMIT is sent, it can no longer be held back: if the bound passes before the answer, or
   * the connection breaks under it, the outcome is unknown and the error says so (504).
   */
  write<T>(work: (manager: EntityManager) => Promise<T>, options: WriteOptions = {}): Promise<T> {
    return this.bounded((deadline) => this.retried(work, deadline), options);
  }

  /** As `write`, without the time bound: for commands such as an import, not for requests. */
  bulkWrite<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.retried(work, newDeadline({}));
  }

  private async retried<T>(
    work: (manager: EntityManager) => Promise<T>,
    deadline: Deadline,
  ): Promise<T> {
    const guarded = async (manager: EntityManager) => {
      const result = await work(manager);
      // Thrown inside the transaction, so it rolls back.
      if (deadline.passed)
        throw new DatabaseUnavailableError('The database did not answer in time.');
      // Nothing but the COMMIT follows: from here, no answer means no knowing.
      deadline.committing = true;
      return result;
    };
    for (let attempt = 1; ; attempt++) {
      try {
        return await (this.exclusive
          ? this.exclusive.runExclusive(() => this.dataSource.transaction(guarded))
          : // The server's default isolation: writes lock the rows they read (FOR UPDATE), and naming a
            // level would cost a SET TRANSACTION round trip on every call.
            this.dataSource.transaction(guarded));
      } catch (error) {
        if (deadline.committing && isConnectionLost(error))
          throw new CommitOutcomeUnknownError(deadline.advice, error);
        if (!isContention(error) || attempt === WRITE_ATTEMPTS || deadline.passed) throw error;
        // A COMMIT refused for contention (a certification failure on a cluster) applied nothing.
        deadline.committing = false;
        await sleep(Math.random() * BACKOFF_BASE_MS * 2 ** attempt);
      }
    }
  }

  /** Reads that must agree with each other: one snapshot (a REPEATABLE READ transaction on MySQL). */
  readSnapshot<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    if (this.exclusive) return this.read(work);
    return this.bounded(() => this.dataSource.transaction('REPEATABLE READ', work));
  }

  /**
   * One read statement without parameters. On SQLite, while no unit holds the connection inside a
   * transaction, it runs at once: better-sqlite3 is synchronous, so nothing interleaves with it and it
   * sees only committed rows. Otherwise it is a read like any other.
   */
  async readStatement<T>(sql: string): Promise<T[]> {
    const connection = this.exclusive && this.sqliteConnection();
    if (!connection || connection.inTransaction) return this.read((manager) => manager.query(sql));
    let statement = this.sqliteStatements.get(sql);
    if (!statement) {
      statement = connection.prepare(sql);
      this.sqliteStatements.set(sql, statement);
    }
    return statement.all() as T[];
  }

  private sqliteConnection(): SqliteConnection {
    return (this.dataSource.driver as unknown as { databaseConnection: SqliteConnection })
      .databaseConnection;
  }

  read<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    const run = () => work(this.dataSource.manager);
    return this.bounded(() => (this.exclusive ? this.exclusive.runExclusive(run) : run()));
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
      return await Promise.race([operation(deadline), timeout]);
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

function newDeadline({ idempotent = false }: WriteOptions): Deadline {
  return {
    passed: false,
    committing: false,
    advice: idempotent
      ? 'Sending the same request again is safe: it applies the change once.'
      : 'Read the data back before sending the request again.',
  };
}
