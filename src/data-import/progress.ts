import { SingleBar } from 'cli-progress';

/** How far one file has come: records so far, and the units done of a known total (bytes, rows). */
export interface ProgressMeasure {
  readonly records: number;
  readonly done: number;
  readonly total: number;
}

/** A plain line at most this often when stderr is not a terminal (a log, a pipe). */
const LINE_INTERVAL_MS = 5000;

/** A count as the summaries and messages write it: `40,000`. */
export const count = (value: number) => value.toLocaleString('en-US');

/** `1 record`, `19,000 records`. */
export const records = (value: number) => `${count(value)} ${value === 1 ? 'record' : 'records'}`;

function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  // Under ten seconds a tenth still tells something: a short export is not "0s".
  if (seconds < 9.95) return `${seconds.toFixed(1)}s`;
  const whole = Math.round(seconds);
  if (whole < 60) return `${whole}s`;
  const minutes = Math.floor(whole / 60);
  return minutes < 60
    ? `${minutes}m${String(whole % 60).padStart(2, '0')}s`
    : `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

/**
 * Progress of a command on stderr, for a person: on a terminal a bar per file (records, percent, rate
 * and time left); elsewhere one plain line every few seconds; nothing with `quiet`. `unit` names what
 * `total` counts (`bytes`, `transactions`).
 */
export class ProgressReport {
  private bar?: SingleBar;
  private source?: string;
  private started = 0;
  private lastLine = 0;

  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly quiet: boolean,
  ) {}

  /** Starts reporting on a file; the previous one's report ends. */
  begin(source: string, total: number): void {
    this.end();
    this.source = source;
    this.started = Date.now();
    this.lastLine = this.started;
    if (this.quiet) return;
    if (this.stream.isTTY) {
      this.bar = new SingleBar({
        stream: this.stream,
        // The time left is ours ({left}): cli-progress's ETA reads "NFs" until it has a rate.
        format: `${source} [{bar}] {percentage}% | {records} records | {rate}/s{left}`,
        barsize: 24,
        hideCursor: true,
        etaBuffer: 50,
      });
      this.bar.start(Math.max(total, 1), 0, { records: '0', rate: '0', left: '' });
    } else this.stream.write(`${source}: started\n`);
  }

  update(source: string, { records, done, total }: ProgressMeasure): void {
    if (this.quiet || source !== this.source) return;
    const now = Date.now();
    const rate = records / Math.max((now - this.started) / 1000, 0.001);
    const fraction = total > 0 ? done / total : 0;
    const left = fraction > 0 ? ((now - this.started) / 1000) * (1 / fraction - 1) : Infinity;
    // Until some of the total is done, there is no time left to tell.
    const known = Number.isFinite(left);
    if (this.bar) {
      this.bar.setTotal(Math.max(total, 1));
      this.bar.update(done, {
        records: count(records),
        rate: count(Math.round(rate)),
        left: known ? ` | about ${duration(left)} left` : '',
      });
    } else if (now - this.lastLine >= LINE_INTERVAL_MS) {
      this.lastLine = now;
      this.stream.write(
        `${source}: ${count(records)} records, ${Math.floor(fraction * 100)}%, ` +
          `${count(Math.round(rate))} records/s${known ? `, about ${duration(left)} left` : ''}\n`,
      );
    }
  }

  /** Ends the bar of the current file, if any. */
  end(): void {
    this.bar?.stop();
    this.bar = undefined;
    this.source = undefined;
  }
}

/**
 * `1,000,000 transactions in 3m12s (5,208 transactions/s)`, for the summary. Under a second a rate
 * measures start-up more than work: `6 transactions in 0.1s`.
 */
export function rateLine(records: number, what: string, milliseconds: number): string {
  const seconds = milliseconds / 1000;
  const took = `${count(records)} ${what} in ${duration(seconds)}`;
  return seconds < 1 ? took : `${took} (${count(Math.round(records / seconds))} ${what}/s)`;
}

/** `peak memory: 141 MB`: the process's peak resident set size so far. */
export function peakMemoryLine(): string {
  return `peak memory: ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`;
}
