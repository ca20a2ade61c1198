import { NewEvents } from './new-events';

/** Whether `promise` has settled by the time pending callbacks have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('NewEvents, the readers waiting for an event past their last one', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate'] }));
  afterEach(() => jest.useRealTimers());

  it('wakes a reader once a position past its own is given, not before', async () => {
    const events = new NewEvents();
    const at7 = events.past(7, 30_000);
    const at9 = events.past(9, 30_000);
    events.reached(7);
    expect(await settled(at7)).toBe(false);
    events.reached(8);
    expect(await settled(at7)).toBe(true);
    expect(await settled(at9)).toBe(false);
    expect(events.waiting).toBe(1);
    events.reached(10);
    expect(await settled(at9)).toBe(true);
    expect(events.waiting).toBe(0);
  });

  it('does not wait for what is known to be given already', async () => {
    const events = new NewEvents();
    events.reached(12);
    events.reached(10);
    expect(events.latest).toBe(12);
    expect(await settled(events.past(11, 30_000))).toBe(true);
    expect(await settled(events.past(12, 30_000))).toBe(false);
  });

  it('wakes many readers a slice at a time, each slice in a turn of the event loop of its own', async () => {
    const events = new NewEvents();
    let woken = 0;
    for (let reader = 0; reader < 60; reader++) void events.past(1, 30_000).then(() => woken++);
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    events.reached(2);
    await Promise.resolve();
    expect(woken).toBe(25);
    await turn();
    expect(woken).toBe(50);
    await turn();
    expect(woken).toBe(60);
    expect(events.waiting).toBe(0);
  });

  it('lets a reader go when its time is up, when its client leaves, and all at the end', async () => {
    const events = new NewEvents();
    const timed = events.past(1, 5000);
    const left = new AbortController();
    const leaving = events.past(1, 30_000, left.signal);
    const ended = events.past(1, 30_000);
    jest.advanceTimersByTime(4999);
    expect(await settled(timed)).toBe(false);
    jest.advanceTimersByTime(1);
    expect(await settled(timed)).toBe(true);
    left.abort();
    expect(await settled(leaving)).toBe(true);
    expect(await settled(ended)).toBe(false);
    events.endAll();
    expect(await settled(ended)).toBe(true);
    expect(events.waiting).toBe(0);
    // A client gone before it waits does not wait.
    expect(await settled(events.past(1, 30_000, left.signal))).toBe(true);
  });
});
