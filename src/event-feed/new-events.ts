/**
 * The readers one turn of the event loop wakes: each answers in that turn (its page shared, its
 * response written), so that hundreds woken together hold requests back a few milliseconds at a
 * time rather than for as long as they all take.
 */
const WAKE_SLICE = 25;

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
  private latestGiven = 0;
  private readonly waiters = new Set<Waiter>();

  /** The latest position known to be given: every position up to it is. */
  get latest(): number {
    return this.latestGiven;
  }

  /** How many readers wait. */
  get waiting(): number {
    return this.waiters.size;
  }

  /**
   * Resolves once a position later than `after` is given, or `ms` have passed, or `signal` aborts,
   * or `endAll` is called: whichever comes first.
   */
  past(after: number, ms: number, signal?: AbortSignal): Promise<void> {
    if (this.latestGiven > after || signal?.aborted) return Promise.resolve();
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

  /**
   * Every position up to `last` is given: wakes the readers waiting for one of them, WAKE_SLICE at a
   * time, each slice in a turn of the event loop of its own.
   */
  reached(last: number): void {
    if (last > this.latestGiven) this.latestGiven = last;
    const woken = [...this.waiters].filter((waiter) => waiter.after < last);
    const wake = (from: number) => {
      for (const waiter of woken.slice(from, from + WAKE_SLICE)) waiter.done();
      if (from + WAKE_SLICE < woken.length) setImmediate(wake, from + WAKE_SLICE);
    };
    wake(0);
  }

  /** Wakes every reader: the service is stopping. */
  endAll(): void {
    for (const waiter of this.waiters) waiter.done();
  }
}
