/** What a log line says of a failure. Never sent to a client. */
export interface FailureDetails {
  /** The error's class: `DatabaseUnavailableError`, `QueryFailedError`, `SqliteError`… */
  readonly type: string;
  readonly message: string;
  /** The driver's or the system's code: `ECONNREFUSED`, `ER_ACCESS_DENIED_ERROR`, `SQLITE_BUSY`. */
  readonly code?: string;
  readonly stack?: string;
  /** What it was raised for: the driver's own error beneath the service's. */
  readonly cause?: FailureDetails;
}

function asText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    // A cycle: its kind, at least.
    return Object.prototype.toString.call(value);
  }
}

/** Causes followed at most: a chain longer than this is a loop. */
const CAUSE_DEPTH = 4;

/**
 * A failure as the log line carries it: class, message and code, then what caused it, down to the
 * driver's error (the service's errors keep it as `cause`, TypeORM's as `driverError`). Named fields
 * only: a driver's error also carries the statement's parameters, which may hold a request's data.
 */
export function describeFailure(failure: unknown, depth = 0): FailureDetails {
  if (!(failure instanceof Error)) {
    // A check's report (`{ database: { status: 'down', message: … } }`), or a value thrown as is.
    return { type: typeof failure, message: asText(failure) };
  }
  const { code, cause, driverError } = failure as Error & { code?: unknown; driverError?: unknown };
  const beneath = cause ?? (driverError !== failure ? driverError : undefined);
  return {
    type: failure.constructor.name,
    message: failure.message,
    code: typeof code === 'string' ? code : undefined,
    stack: depth === 0 ? failure.stack : undefined,
    cause:
      beneath !== undefined && depth < CAUSE_DEPTH
        ? describeFailure(beneath, depth + 1)
        : undefined,
  };
}
