import { Throttle } from './throttle';

/** A task whose runs end when the test says, counted or not: when each started, by the fake clock. */
function task() {
  const starts: number[] = [];
  const ends: ((counted: boolean) => void)[] = [];
  const run = () => {
    starts.push(performance.now());
    return new Promise<boolean>((resolve) => ends.push(resolve));
  };
  /** Ends the run under way, and lets what follows its end happen. */
  const end = async (counted = true) => {
    ends.shift()!(counted);
    await jest.advanceTimersByTimeAsync(0);
  };
  return { starts, run, end };
}

describe('Throttle, one run at a time and at most one counted run per interval', () => {
  beforeEach(() => jest.useFakeTimers({ now: 0 }));
  afterEach(() => jest.useRealTimers());

  it('runs at once when asked after a quiet spell, and gathers the asks of the interval into one run at its end', async () => {
    const { starts, run, end } = task();
    const throttle = new Throttle(run, () => 250);
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
    const throttle = new Throttle(run, () => 100);
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
    const throttle = new Throttle(run, () => 0);
    throttle.ask();
    throttle.ask();
    throttle.ask();
    expect(starts).toEqual([0]);
    await end();
    expect(starts).toEqual([0, 0]);
    await end();
    expect(starts).toEqual([0, 0]);
  });

  it('lets a run that did not count leave the next ask its leading edge', async () => {
    const { starts, run, end } = task();
    const throttle = new Throttle(run, () => 250);
    throttle.ask();
    await end(false);
    await jest.advanceTimersByTimeAsync(10);
    throttle.ask();
    expect(starts).toEqual([0, 10]);
    await end();
    await jest.advanceTimersByTimeAsync(10);
    throttle.ask();
    await jest.advanceTimersByTimeAsync(239);
    expect(starts).toEqual([0, 10]);
    await jest.advanceTimersByTimeAsync(1);
    expect(starts).toEqual([0, 10, 260]);
    await end();
  });

  it('takes the interval as it is when a run is asked for', async () => {
    const { starts, run, end } = task();
    let interval = 100;
    const throttle = new Throttle(run, () => interval);
    throttle.ask();
    await end();
    interval = 400;
    throttle.ask();
    await jest.advanceTimersByTimeAsync(399);
    expect(starts).toEqual([0]);
    await jest.advanceTimersByTimeAsync(1);
    expect(starts).toEqual([0, 400]);
    await end();
  });

  it('runs no more once stopped, and waits for the run under way', async () => {
    const { starts, run, end } = task();
    const throttle = new Throttle(run, () => 100);
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
