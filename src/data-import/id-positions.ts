/**
 * Where each integer id was first seen, kept in typed arrays outside the JavaScript heap: a million
 * ids take 16 MB that the garbage collector never traces, where a Map of them takes over 40 MB of
 * heap, doubled while it grows. Open addressing with linear probing, at most half full.
 */
export class IdPositions {
  private ids: Int32Array;
  /** Position + 1 of the id in the same slot; 0 marks a free slot. */
  private positions: Int32Array;
  private count = 0;

  /** `expected`: how many ids the table holds before it first grows. */
  constructor(expected = 512) {
    const slots = 2 ** Math.ceil(Math.log2(Math.max(4, expected * 2)));
    this.ids = new Int32Array(slots);
    this.positions = new Int32Array(slots);
  }

  /** The position first recorded for `id`; when there is none, `position` is recorded for it. */
  firstPosition(id: number, position: number): number | undefined {
    const slot = this.slotOf(id);
    if (this.positions[slot] !== 0) return this.positions[slot] - 1;
    this.ids[slot] = id;
    this.positions[slot] = position + 1;
    if (++this.count * 2 > this.ids.length) this.grow();
    return undefined;
  }

  /** The slot holding `id`, or the free slot where it belongs. */
  private slotOf(id: number): number {
    const mask = this.ids.length - 1;
    // Fibonacci hashing spreads consecutive ids, the usual case, over the whole table.
    let slot = Math.imul(id, 0x9e3779b1) & mask;
    while (this.positions[slot] !== 0 && this.ids[slot] !== id) slot = (slot + 1) & mask;
    return slot;
  }

  private grow(): void {
    const { ids, positions } = this;
    this.ids = new Int32Array(ids.length * 2);
    this.positions = new Int32Array(ids.length * 2);
    for (let slot = 0; slot < ids.length; slot++) {
      if (positions[slot] === 0) continue;
      const free = this.slotOf(ids[slot]);
      this.ids[free] = ids[slot];
      this.positions[free] = positions[slot];
    }
  }
}
