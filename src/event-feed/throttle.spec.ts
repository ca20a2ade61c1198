import { Throttle } from './throttle';

/** A task whose runs end when the test says: when each started, by the fake clock. */
function task() {
  const starts: number[] = [];
  const ends: (() => void)[] = [];
  const run = () => {
    starts.push(performance.now());
    return new Promise<void>((resolve) => ends.push(resolve));
  };
  /** Ends the run under way, and lets what follows its end happen. */
  const end = async () => {
    ends.shift()!();
    await jest.advanceTimersByTimeAsync(0);
  };
  return { starts, run, end };
}

describe('Throttle, one run at a time and at most one start per interval', () => {
  beforeEach(() => jest.useFakeTimers({ now: 0 }));
  afterEach(() => jest.useRealTimers());

  it('runs at once when asked after a quiet spell, and gathers the asks of the interval into one run at its end', async () => {
    const { starts, run, end } = task();
    const throttle = new Throttle(run, 250);
    throttle.ask();
    expect(starts).toEqual([0]);
    await end();
    // A burst of asks within the interval: one run, as it ends.
    for (const at of [10, 60, 200, 249]) {
      await jest.advanceTimersByTimeAsync(at - performance.now());
      throttle.ask();
    }
    await jest.advanceTimersByTimeAsync(1);
    expect(starts).toEqual([0, 250]);
    await end();
    // Nothing asked in its interval: no run.
    await jest.advanceTimersByTimeAsync(1000);
    expect(starts).toEqual([0, 250]);
    // After a quiet spell, at once again.
    throttle.ask();
    expect(starts).toEqual([0, 250, 1250]);
    await end();
  });

  it('starts the next run once the one under way ends, when that is past the interval', async () => {
    const { starts, run, end } = task();
    const throttle = new Throttle(run, 100);
    throttle.ask();
    await jest.advanceTimersByTimeAsync(50);
    throttle.ask();
    throttle.ask();
    await jest.advanceTimersByTimeAsync(200);
    // The run under way is never joined by another.
    expect(starts).toEqual([0]);
    await end();
    expect(starts).toEqual([0, 250]);
    await end();
  });

  it('runs after every commit with an interval of 0, one at a time, asks during a run gathered', async () => {
    const { starts, run, end } = task();
    const throttle = new Throttle(run, 0);
    throttle.ask();
    throttle.ask();
    throttle.ask();
    expect(starts).toEqual([0]);
    await end();
    expect(starts).toEqual([0, 0]);
    await end();
    expect(starts).toEqual([0, 0]);
  });

  it('runs no more once stopped, and waits for the run under way', async () => {
    const { starts, run, end } = task();
    const throttle = new Throttle(run, 100);
    throttle.ask();
    throttle.ask();
    let stopped = false;
    const stopping = throttle.stop().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    await end();
    await stopping;
    throttle.ask();
    await jest.advanceTimersByTimeAsync(1000);
    expect(starts).toEqual([0]);
  });
});
