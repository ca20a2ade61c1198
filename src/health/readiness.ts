import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/domain-error';

export class ShuttingDownError extends DomainError {
  static readonly status = 503;
  static readonly description = 'Shutting down: the gateway should send requests elsewhere.';
  readonly code = 'not_ready';
  readonly title = 'Not ready';
  constructor() {
    super('The service is shutting down.');
  }
}

/** Whether the process still takes new work: false from SIGTERM on, while requests drain. */
@Injectable()
export class Readiness {
  private stopping = false;
  private readonly listeners = new Set<() => void>();

  get shuttingDown(): boolean {
    return this.stopping;
  }

  /** Readiness answers 503 from now on, so the gateway stops sending requests here. */
  beginShutdown(): void {
    this.stopping = true;
    for (const listener of this.listeners) listener();
  }

  /**
   * Calls `listener` when the shutdown begins, for work that must end before the listener closes
   * (a long poll); returns what stops it.
   */
  onShutdown(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Throws ShuttingDownError once the shutdown has begun. */
  assertServing(): void {
    if (this.stopping) throw new ShuttingDownError();
  }
}
