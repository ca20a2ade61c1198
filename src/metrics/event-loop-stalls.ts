/** How often the monitor's timer is due: a hold shorter than this is not told from a busy turn. */
const TICK_MS = 20;

/**
 * The longest the event loop was held since it was last asked, measured by how late a timer fires:
 * one request that held it held every other. Node.js 24's monitorEventLoopDelay, behind prom-client's
 * `nodejs_eventloop_lag_max_seconds`, does not show such a hold (a loop held 300 ms reads as 10 ms),
 * so the service measures it itself.
 */
export class EventLoopStalls {
  private longestMs = 0;
  private readonly timer: NodeJS.Timeout;

  constructor() {
    let due = performance.now() + TICK_MS;
    this.timer = setInterval(() => {
      const now = performance.now();
      this.longestMs = Math.max(this.longestMs, now - due);
      due = now + TICK_MS;
    }, TICK_MS);
    // A measure, not work: it never keeps the process alive.
    this.timer.unref();
  }

  /** Seconds: the longest hold since the previous call, which starts the next period. */
  takeLongestSeconds(): number {
    const seconds = this.longestMs / 1000;
    this.longestMs = 0;
    return seconds;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
