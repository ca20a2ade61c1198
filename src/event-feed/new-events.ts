interface Waiter {
  /** The last position the reader saw: it waits for a later one. */
  readonly after: number;
  readonly done: () => void;
}

/**
 * Feed readers waiting for an event past the last position they saw (a long poll), and what wakes
 * them: a later position given, their time running out, their client leaving, or the end.
 */
export class NewEvents {
  /** The latest position known to be given. */
  private latest = 0;
  private readonly waiters = new Set<Waiter>();

  /** How many readers wait. */
  get waiting(): number {
    return this.waiters.size;
  }

  /**
   * Resolves once a position later than `after` is given, or `ms` have passed, or `signal` aborts,
   * or `endAll` is called: whichever comes first.
   */
  past(after: number, ms: number, signal?: AbortSignal): Promise<void> {
    if (this.latest > after || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter: Waiter = {
        after,
        done: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', waiter.done);
          this.waiters.delete(waiter);
          resolve();
        },
      };
      const timer = setTimeout(waiter.done, ms);
      signal?.addEventListener('abort', waiter.done);
      this.waiters.add(waiter);
    });
  }

  /** Every position up to `last` is given: wakes the readers waiting for one of them. */
  reached(last: number): void {
    if (last > this.latest) this.latest = last;
    for (const waiter of this.waiters) if (waiter.after < last) waiter.done();
  }

  /** Wakes every reader: the service is stopping. */
  endAll(): void {
    for (const waiter of this.waiters) waiter.done();
  }
}
