import { TypeORMError } from 'typeorm';
import { DomainError } from '../common/domain-error';
import { SchemaMismatchError } from './schema-check';

/** Seconds a client should wait before retrying when the database is away. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

export class DatabaseUnavailableError extends DomainError {
  static readonly status = 503;
  static readonly description = 'The database is unreachable; retry after Retry-After seconds.';
  static readonly example = new DatabaseUnavailableError();
  readonly code = 'database_unavailable';
  readonly title = 'Database unavailable';
  /**
   * @param reason What the client reads.
   * @param cause The driver's error, which the log line of the request carries.
   */
  constructor(reason = 'The database does not answer.', cause?: unknown) {
    super(
      `${reason} Retry later.`,
      { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) },
      { cause },
    );
  }
}

/**
 * A write whose COMMIT was sent but not answered: the time bound passed while it was in flight, or the
 * connection broke under it. The database may have applied the change or not; nothing was rolled back.
 */
export class CommitOutcomeUnknownError extends DomainError {
  static readonly status = 504;
  static readonly description =
    'The database did not confirm the commit: the change may or may not have been applied.';
  static readonly example = new CommitOutcomeUnknownError(
    'Sending the same request again is safe: it applies the change once.',
  );
  readonly code = 'commit_outcome_unknown';
  readonly title = 'Commit outcome unknown';
  /**
   * @param advice What the client can do: whether sending the same request again is safe.
   * @param cause The driver's error when the connection broke, for the log line.
   */
  constructor(advice: string, cause?: unknown) {
    super(
      `The database did not confirm the change in time: it may or may not have been applied. ${advice}`,
      { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) },
      { cause },
    );
  }
}

/** Driver codes and MySQL errors that say a server is away: refused, reset, silent, not serving. */
const SERVER_AWAY_CODES = [
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  // A Galera node outside the cluster's primary component, or not yet synced, answers every
  // statement with it ("WSREP has not yet prepared node for application use"): it applied nothing.
  'ER_UNKNOWN_COM_ERROR',
];

/**
 * Driver codes and MySQL errors that mean the database cannot be reached or used right now. A missing
 * table or column (ER_NO_SUCH_TABLE, ER_BAD_FIELD_ERROR) is not among them: the server answered, and
 * the schema is wrong; that is a 500, logged with the server's message, and readiness fails.
 */
const UNREACHABLE_CODES = new Set([
  ...SERVER_AWAY_CODES,
  'ER_ACCESS_DENIED_ERROR',
  'ER_BAD_DB_ERROR',
  'SQLITE_BUSY',
  // mysql2's PoolCluster (DATABASE_READ_URLS): every node the query may use is out of the rotation,
  // or no replica serves and DATABASE_REPLICA_FALLBACK=none keeps reads off the primary (ReplicaSet).
  'POOL_NONEONLINE',
]);

/**
 * MySQL's answers to lock contention, which a retry of the whole transaction can overcome, and a
 * transaction the server ended under its statements (TransactionEndedError), which is one.
 */
const CONTENTION_CODES = new Set(['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT', 'TRANSACTION_ENDED']);

/**
 * The server rolled a unit's transaction back under its statements and still answered them as run:
 * a Galera node aborts a local transaction that a write committed through another node conflicts
 * with, and the statement it interrupts can answer OK, the statements after it then running outside
 * any transaction, COMMIT included. The unit's writes are written so that they change nothing outside
 * their transaction, so nothing of it was applied: it is run again, as after a deadlock.
 */
export class TransactionEndedError extends Error {
  readonly code = 'TRANSACTION_ENDED';

  constructor() {
    super('The database ended the transaction under its statements; nothing of it was applied.');
  }
}

interface DriverError {
  code?: unknown;
  fatal?: unknown;
  message?: unknown;
}

/** TypeORM wraps driver errors in QueryFailedError; pool errors come bare. */
function driverErrorOf(error: unknown): DriverError {
  const candidate = (error as { driverError?: unknown })?.driverError ?? error;
  return typeof candidate === 'object' && candidate !== null ? candidate : {};
}

/**
 * Whether a failure says the server itself is away (as a node of several is left out for), rather
 * than refusing this one request (a full pool's queue) or this one query.
 */
export function isServerAway(error: unknown): boolean {
  const driver = driverErrorOf(error);
  return (
    driver.fatal === true ||
    (typeof driver.code === 'string' && SERVER_AWAY_CODES.includes(driver.code))
  );
}

export function isUnreachable(error: unknown): boolean {
  const driver = driverErrorOf(error);
  if (typeof driver.code === 'string' && UNREACHABLE_CODES.has(driver.code)) return true;
  if (driver.fatal === true) return true;
  // mysql2's pool refusals carry no code.
  return (
    typeof driver.message === 'string' && /Pool is closed|Queue limit reached/.test(driver.message)
  );
}

/**
 * Whether a failure came from the database or its driver (unreachable, refused, a schema it does not
 * have): at start-up, DATABASE_URL is the variable to look at.
 */
export function isDatabaseFailure(error: unknown): boolean {
  if (error instanceof TypeORMError || error instanceof SchemaMismatchError) return true;
  if (isUnreachable(error)) return true;
  const { code } = driverErrorOf(error);
  return typeof code === 'string' && /^(ER_|SQLITE_)/.test(code);
}

/** Driver codes of a connection that broke under a statement, which the server may have run or not. */
const CONNECTION_LOST_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_SERVER_SHUTDOWN',
]);

export function isConnectionLost(error: unknown): boolean {
  const driver = driverErrorOf(error);
  return (
    driver.fatal === true ||
    (typeof driver.code === 'string' && CONNECTION_LOST_CODES.has(driver.code))
  );
}

export function isContention(error: unknown): boolean {
  const { code } = driverErrorOf(error);
  return typeof code === 'string' && CONTENTION_CODES.has(code);
}
