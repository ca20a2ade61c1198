import { setImmediate as nextTurn } from 'node:timers/promises';
import { eachSteps, runSteps, runStepsCooperatively, SLICE_MS, type Steps } from './steps';

/** Steps that each keep the CPU busy for `ms`, counting how many ran. */
function* busySteps(count: number, ms: number, done: { steps: number }): Steps<string> {
  for (let step = 0; step < count; step++) {
    const until = performance.now() + ms;
    while (performance.now() < until);
    done.steps++;
    yield;
  }
  return 'finished';
}

describe('steps', () => {
  it('run to the end at once', () => {
    const done = { steps: 0 };
    expect(runSteps(busySteps(5, 0, done))).toBe('finished');
    expect(done.steps).toBe(5);
  });

  it('run cooperatively, let other work run between slices, and end with the same result', async () => {
    const done = { steps: 0 };
    const seenByOthers: number[] = [];
    const others = (async () => {
      while (done.steps < 20) {
        seenByOthers.push(done.steps);
        await nextTurn();
      }
    })();
    await expect(runStepsCooperatively(busySteps(20, SLICE_MS / 2, done))).resolves.toBe(
      'finished',
    );
    await others;
    // Others ran while the steps were under way, not only before or after them.
    expect(seenByOthers.some((steps) => steps > 0 && steps < 20)).toBe(true);
  });

  it('stop at the first error, cooperatively too', async () => {
    function* failing(): Steps<void> {
      yield;
      throw new Error('refused');
    }
    expect(() => runSteps(failing())).toThrow('refused');
    await expect(runStepsCooperatively(failing())).rejects.toThrow('refused');
  });

  it('visit every item of a list in order, pausing between groups of items', () => {
    const items = Array.from({ length: 200 }, (_, index) => index);
    const visited: number[] = [];
    const steps = eachSteps(items, (item, index) => visited.push(item * 1000 + index));
    let pauses = 0;
    while (!steps.next().done) pauses++;
    expect(visited).toEqual(items.map((item) => item * 1000 + item));
    expect(pauses).toBeGreaterThan(1);
    expect(pauses).toBeLessThan(items.length);
  });
});
