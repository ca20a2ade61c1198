import { type UnitOfWork } from '../database/unit-of-work';
import { type OutboxStore, type StoredEvent } from '../event-relay/outbox-store';

/** The events a run of deliveries takes: the ones of its kinds past its checkpoint, in order. */
export interface EventPage {
  readonly events: readonly StoredEvent[];
  /**
   * The last position given when it was read: no event of its kinds lies between its last event
   * and this one, unless the page is full.
   */
  readonly lastGiven: number;
}

/** Full pages kept for the subscriptions that come to the same place later. */
const KEPT_PAGES = 32;

/**
 * The outbox's events read once for every subscription at the same place: the runs that start from
 * one checkpoint with the same kinds share one read and one copy of the bodies, as subscriptions
 * that deliver in step do. A full page never changes (its events' positions are given for good) and
 * is kept, the least recently used dropped past KEPT_PAGES; a page that is not full is shared only
 * while it is read.
 */
export class EventPages {
  private readonly pages = new Map<string, Promise<EventPage>>();

  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly store: OutboxStore,
    private readonly size: number,
  ) {}

  /** The page of up to `size` events of `kinds` (absent: every kind) past `position`. */
  after(position: number, kinds: readonly string[] | undefined): Promise<EventPage> {
    const key = `${position}|${kinds?.join(' ') ?? '*'}`;
    const known = this.pages.get(key);
    if (known) {
      // Most recently used last.
      this.pages.delete(key);
      this.pages.set(key, known);
      return known;
    }
    const page = this.unitOfWork.read(async (manager): Promise<EventPage> => {
      // The last position given first: every event up to it is then there to read.
      const lastGiven = await this.store.lastGiven(manager);
      const events =
        kinds === undefined
          ? await this.store.after(manager, position, this.size)
          : kinds.length === 0
            ? []
            : await this.store.ofKinds(manager, position, kinds, this.size);
      return { events, lastGiven };
    });
    this.pages.set(key, page);
    const forget = () => {
      if (this.pages.get(key) === page) this.pages.delete(key);
    };
    page.then(({ events }) => {
      if (events.length < this.size) forget();
      else this.keepAtMost(KEPT_PAGES);
    }, forget);
    return page;
  }

  private keepAtMost(count: number): void {
    for (const key of this.pages.keys()) {
      if (this.pages.size <= count) return;
      this.pages.delete(key);
    }
  }
}
