/**
 * Runs a task when asked, one run at a time and at most one start per interval: the first ask after a
 * quiet spell starts it at once, and the asks that come within the interval after a start are
 * gathered into one more run at the interval's end (or once the run under way ends, when that is
 * later). So a burst of asks costs two runs an interval at most, and the last ask is never later than
 * an interval, plus the run under way, from a run that started after it.
 */
export class Throttle {
  private lastStart = Number.NEGATIVE_INFINITY;
  private asked = false;
  private running?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private stopped = false;

  /** `task` settles, never rejects: it answers for its own failures. */
  constructor(
    private readonly task: () => Promise<void>,
    private readonly intervalMs: number,
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
    const wait = this.lastStart + this.intervalMs - performance.now();
    if (wait > 0) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.schedule();
      }, wait);
      this.timer.unref();
      return;
    }
    this.asked = false;
    this.lastStart = performance.now();
    this.running = this.task().finally(() => {
      this.running = undefined;
      this.schedule();
    });
  }
}
