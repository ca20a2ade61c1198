/**
 * A domain error class: the HTTP status every error of the class answers with, and what that answer
 * means to a client, as the OpenAPI document describes it. A module declares its errors this way, so
 * a 403 or a 422 needs no change to the wire layer.
 */
export interface DomainErrorClass {
  readonly name: string;
  readonly status: number;
  readonly description: string;
  readonly prototype: DomainError;
}

/** A domain error class the OpenAPI document shows: one error of it, as a client would receive it. */
export interface DocumentedErrorClass extends DomainErrorClass {
  readonly example: DomainError;
}

/**
 * A failure services report in their own terms (`TransactionLockedError`). Each subclass declares
 * `static readonly status` and `static readonly description`; the exception filter answers with them.
 * A class a route documents also declares `static readonly example`, an error of its own.
 */
export abstract class DomainError extends Error {
  /** Stable, machine-readable: the tail of the problem `type`. */
  abstract readonly code: string;
  /** Short summary of the problem type: the problem `title`. */
  abstract readonly title: string;

  /**
   * @param message What the client reads (the legacy `Message`): nothing internal.
   * @param headers What the answer carries besides: a 401's `WWW-Authenticate`, a `Retry-After`.
   * @param options `cause`: what it was raised for (a driver's error), for the log line alone.
   */
  constructor(
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
    // TypeScript has no abstract statics: a subclass that forgets them is caught where it is first used.
    const { status, description } = new.target as unknown as Partial<DomainErrorClass>;
    if (!Number.isInteger(status) || typeof description !== 'string') {
      throw new TypeError(`${new.target.name} declares no static status and description`);
    }
  }

  get status(): number {
    return (this.constructor as unknown as DomainErrorClass).status;
  }
}
