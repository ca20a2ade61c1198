import { FeedFullError, FeedWaitsExceededError } from './event-feed.errors';

/**
 * The places for feed readers that wait (long polls), in all and per caller: each holds a
 * connection and a waiter, so that a caller cannot take them all, nor all callers the instance.
 */
export class LongPolls {
  private held = 0;
  private readonly byCaller = new Map<string, number>();

  constructor(
    private readonly max: number,
    private readonly maxPerCaller: number,
  ) {}

  /** Takes a place for `caller`, or refuses; gives back the function that frees it. */
  admit(caller: string): () => void {
    const callers = this.byCaller.get(caller) ?? 0;
    if (callers >= this.maxPerCaller) throw new FeedWaitsExceededError(this.maxPerCaller);
    if (this.held >= this.max) throw new FeedFullError();
    this.held++;
    this.byCaller.set(caller, callers + 1);
    return () => {
      this.held--;
      const left = this.byCaller.get(caller)! - 1;
      if (left === 0) this.byCaller.delete(caller);
      else this.byCaller.set(caller, left);
    };
  }
}
