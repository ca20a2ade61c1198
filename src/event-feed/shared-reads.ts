/** How much of their answers reads whose answers never change may keep. */
export interface Keeping<T> {
  /** The most the answers kept may weigh in all; an answer that would pass it is not kept. */
  readonly budget: number;
  readonly weigh: (answer: T) => number;
}

/**
 * Reads under way, by what they read: a reader that asks for what a read under way answers joins
 * it, so the readers one wake-up answers at a position cost one database read and one body between
 * them. With `keeping`, for reads whose answer never changes, an answer stays once read (a failure
 * does not), for the readers that ask for it later: while the answers kept weigh `budget` in all.
 */
export class SharedReads<T> {
  private readonly underway = new Map<string, Promise<T>>();
  private readonly kept = new Map<string, Promise<T>>();
  private weight = 0;

  constructor(private readonly keeping?: Keeping<T>) {}

  /** The answer for `key`: the one kept, or the read under way for it, or `load`'s. */
  read(key: string, load: () => Promise<T>): Promise<T> {
    const current = this.kept.get(key) ?? this.underway.get(key);
    if (current) return current;
    const started = load()
      .then((answer) => this.keep(key, answer))
      .finally(() => this.underway.delete(key));
    this.underway.set(key, started);
    return started;
  }

  /** Keeps `answer` when keeping and its weight fits; gives it back. */
  private keep(key: string, answer: T): T {
    const weight = this.keeping?.weigh(answer) ?? Number.POSITIVE_INFINITY;
    if (this.weight + weight <= (this.keeping?.budget ?? 0)) {
      this.weight += weight;
      this.kept.set(key, Promise.resolve(answer));
    }
    return answer;
  }
}
