import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Work that may pause: a generator that yields wherever stopping costs nothing (between slices of a
 * document, between the items of a list) and returns its result. Run to the end at once, or run
 * cooperatively, so that a megabyte of body never holds the event loop for more than a slice.
 */
export type Steps<T> = Generator<void, T, void>;

/** Runs steps to the end at once, for callers that are not serving others meanwhile. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * The longest a request's body may hold the event loop at a time. Other requests' I/O runs between
 * slices, so this bounds what one large body adds to everyone else's latency.
 */
export const SLICE_MS = 4;

/** Runs steps, letting the event loop serve others whenever a slice of `SLICE_MS` is spent. */
export async function runStepsCooperatively<T>(steps: Steps<T>): Promise<T> {
  let sliceStart = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() - sliceStart >= SLICE_MS) {
      await nextTurn();
      sliceStart = performance.now();
    }
  }
}

/** How many items of a list are worked on between pauses: each is cheap, but there may be many. */
const ITEMS_PER_STEP = 64;

/** Visits a list's items, pausing every few. */
export function* eachSteps<T>(
  items: readonly T[],
  visit: (item: T, index: number) => void,
): Steps<void> {
  for (let index = 0; index < items.length; index++) {
    visit(items[index], index);
    if (index % ITEMS_PER_STEP === ITEMS_PER_STEP - 1) yield;
  }
}

/** Gives a record's member its list: bound at once, or left raw to be bound in steps. */
export type ListBinder = (
  name: string,
  items: readonly unknown[],
  bindItem: (item: unknown) => unknown,
) => unknown;

/** Binds every item of a list at once: for the records inside a list, whose own lists are short. */
export const bindListNow: ListBinder = (_name, items, bindItem) => items.map(bindItem);

/**
 * Binds a record whose lists may be long. `bindRecord` binds everything else at once and gives each
 * list member its raw items; those still holding them when it is done (a member given twice keeps
 * its later value) are then bound item by item, pausing every few items.
 */
export function* bindWithListsInSteps(
  bindRecord: (bindList: ListBinder) => Record<string, unknown>,
): Steps<Record<string, unknown>> {
  const deferred = new Map<string, Parameters<ListBinder>>();
  const bound = bindRecord((...list) => {
    deferred.set(list[0], list);
    return list[1];
  });
  for (const [name, items, bindItem] of deferred.values()) {
    if (bound[name] !== items) continue;
    const list: unknown[] = [];
    yield* eachSteps(items, (item) => list.push(bindItem(item)));
    bound[name] = list;
  }
  return bound;
}
