/**
 * Runs a task when asked, one run at a time, and after a run that counted (one that says so) no
 * other start for an interval from its start (as long as `intervalMs` says when a run is asked for):
 * the first ask after a quiet spell starts a run at once, and the asks that come within the interval
 * after a counted run are gathered into one more run at the interval's end (or once the run under way
 * ends, when that is later). So counted runs start at most once an interval, and an ask waits for a
 * run that starts after it no longer than an interval and the run under way.
 */
export class Throttle {
  private lastStart = Number.NEGATIVE_INFINITY;
  private asked = false;
  private running?: Promise<unknown>;
  private timer?: NodeJS.Timeout;
  private stopped = false;

  /**
   * `task` resolves with whether its run counted; it never rejects: it answers for its own
   * failures.
   */
  constructor(
    private readonly task: () => Promise<boolean>,
    private readonly intervalMs: () => number,
  ) {}

  /** Asks for a run: now, or at the end of the interval, or after the run under way. */
  ask(): void {
    this.asked = true;
    this.schedule();
  }

  /** No more runs; resolves once the run under way has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (!this.asked || this.running || this.timer || this.stopped) return;
    const wait = this.lastStart + this.intervalMs() - performance.now();
    if (wait > 0) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.schedule();
      }, wait);
      this.timer.unref();
      return;
    }
    this.asked = false;
    const start = performance.now();
    this.running = this.task().then((counted) => {
      if (counted) this.lastStart = start;
      this.running = undefined;
      this.schedule();
    });
  }
}
