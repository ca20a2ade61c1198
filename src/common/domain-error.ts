/**
 * What kind of failure a domain error is. Services speak only in these terms; the exception filter alone
 * turns a kind into an HTTP status, so a new module's errors need no change to the wire layer.
 */
export type DomainErrorKind =
  | 'unauthenticated'
  | 'not_found'
  | 'conflict'
  | 'precondition_failed'
  | 'rate_limited'
  | 'unavailable';

export abstract class DomainError extends Error {
  abstract readonly kind: DomainErrorKind;
  /** Stable, machine-readable: the tail of the problem `type`. */
  abstract readonly code: string;
  /** Short summary of the problem type: the problem `title`. */
  abstract readonly title: string;
  /** For `rate_limited` and `unavailable`: when a retry may succeed. */
  readonly retryAfterSeconds?: number;
  /** For `unauthenticated`: the scheme and parameters the caller must answer with. */
  readonly challenge?: string;
}
