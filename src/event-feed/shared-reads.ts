/**
 * Reads under way, by what they read: a reader that asks for what a read under way answers joins
 * it, so the readers one commit wakes at a position cost one database read and one body between
 * them.
 */
export class SharedReads<T> {
  private readonly underway = new Map<string, Promise<T>>();

  /** The answer for `key`: the read under way for it, or `load`'s, shared until it settles. */
  read(key: string, load: () => Promise<T>): Promise<T> {
    const current = this.underway.get(key);
    if (current) return current;
    const started = load().finally(() => this.underway.delete(key));
    this.underway.set(key, started);
    return started;
  }
}
