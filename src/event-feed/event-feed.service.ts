import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { UnitOfWork } from '../database/unit-of-work';
import { OutboxStore, POSITION_BATCH } from '../event-relay/outbox-store';
import { Outbox } from '../events/outbox';
import { Readiness } from '../health/readiness';
import { EventGoneError } from './event-feed.errors';
import { LongPolls } from './long-polls';
import { NewEvents } from './new-events';
import { SharedReads } from './shared-reads';
import { Throttle } from './throttle';

/** One read of the outbox for a reader: its page, or that its last event is gone. */
type Read = { readonly found: false } | Found;

/** A read that found the reader's last event (or read from the oldest): the page after it. */
interface Found {
  readonly found: true;
  readonly page: FeedPage;
  readonly empty: boolean;
}

/**
 * What the pages kept for waiting readers may weigh, for one latest position: the readers a wake-up
 * answers, and those that ask again after it, share them.
 */
const KEPT_PAGES_BYTES = 16 * 1024 * 1024;

/** The reads of waiting readers up to one latest position given, and their pages kept. */
interface ReadsUpTo {
  readonly upTo: number;
  readonly reads: SharedReads<Read>;
}

const keptReads = (upTo: number): ReadsUpTo => ({
  upTo,
  reads: new SharedReads<Read>({
    budget: KEPT_PAGES_BYTES,
    weigh: (read) => (read.found ? read.page.body.length : 0),
  }),
});

/** What a reader asks of the feed. */
export interface FeedQuery {
  /** The id of the last event it holds; undefined to read from the oldest the feed holds. */
  readonly lastEventId?: string;
  readonly limit: number;
  /** How long to wait for an event when none follows its last one, in ms; 0 answers at once. */
  readonly timeout: number;
  /** Who asks (the caller, or without authentication the client's address): whose waits count. */
  readonly caller: string;
}

/** One answer of the feed. */
export interface FeedPage {
  /**
   * The events, a JSON array of the CloudEvents as stored: what the broker gets, byte for byte. The
   * readers answered from one read share it.
   */
  readonly body: Buffer;
  /** Whether it holds as many events as were asked for: then it never changes. */
  readonly full: boolean;
}

/**
 * The committed events in outbox position order (the order the broker and the handlers get them),
 * for readers that poll with the id of the last event they hold, or wait for the next one. Only
 * positioned events are served: besides the relay, the feed gives positions itself every
 * EVENTS_POLL_MS, and after a commit here while a reader waits, or when a reader is about to wait;
 * a look that finds new positions wakes the waiting readers, and no other look is made for
 * EVENTS_FEED_WAKE_MS after it (longer with many readers waiting), the commits meanwhile gathered
 * into one look at its end: the readers are woken once per batch of commits, not per commit. A
 * waiting reader reads up to the latest position given as this instance last looked, so that the
 * readers one wake-up answers all read the same events, whenever they ask: each page is read and
 * built once, and kept for them until a later position is given.
 */
@Injectable()
export class EventFeed implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('EventFeed');
  private readonly store: OutboxStore;
  private readonly newEvents = new NewEvents();
  /** Reads of readers that do not wait, as of now. */
  private readonly reads = new SharedReads<Read>();
  /** Reads of waiting readers, up to the latest position given. */
  private readsUpTo = keptReads(0);
  private readonly longPolls: LongPolls;
  /** Once the shutdown begins, when its drain ends: no reader waits past it. */
  private closingAt = Number.POSITIVE_INFINITY;
  private stopping = false;
  private readonly checks: Throttle;
  private failing = false;
  private readonly stops: (() => void)[] = [];

  constructor(
    @InjectDataSource() dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly unitOfWork: UnitOfWork,
    private readonly outbox: Outbox,
    private readonly readiness: Readiness,
  ) {
    this.store = new OutboxStore(dataSource);
    this.longPolls = new LongPolls(
      config.events.feedMaxWaiting,
      config.events.feedMaxWaitingPerCaller,
    );
    // Each answer costs the instance, and its reader's next request: with many waiting, they are
    // woken less often, so that they cost the same share of it however many they are.
    const { feedWakeMs, feedWakeMsPerReader } = config.events;
    this.checks = new Throttle(
      () => this.check(),
      () => Math.max(feedWakeMs, this.newEvents.waiting * feedWakeMsPerReader),
    );
  }

  /** Whether the feed is served (EVENTS_FEED). */
  get on(): boolean {
    return this.config.events.feed;
  }

  onApplicationBootstrap(): void {
    if (!this.on) return;
    // A commit here matters at once only to a reader waiting: the others read it when they next ask.
    this.stops.push(
      this.outbox.onCommitted(() => {
        if (this.newEvents.waiting > 0) this.checks.ask();
      }),
    );
    // Readers that come at once find the events given before the start.
    this.checks.ask();
    const poll = setInterval(() => this.checks.ask(), this.config.events.pollMs);
    poll.unref();
    this.stops.push(() => clearInterval(poll));
    // Readers are answered by the end of the drain, before the listener closes.
    this.stops.push(
      this.readiness.onShutdown(() => {
        this.closingAt = Date.now() + this.config.shutdownDrainMs;
        setTimeout(() => this.newEvents.endAll(), this.config.shutdownDrainMs).unref();
      }),
    );
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    for (const stop of this.stops) stop();
    this.newEvents.endAll();
    await this.checks.stop();
  }

  /**
   * Up to `limit` events after the reader's last one, waiting up to `timeout` for one when none
   * follows it (and no longer than `signal`, its client, stays); EventGoneError when its last event
   * is no longer in the outbox. A reader that would wait takes one of the places for waiting readers,
   * or is refused (FeedWaitsExceededError, FeedFullError).
   */
  async read(query: FeedQuery, signal: AbortSignal): Promise<FeedPage> {
    if (query.timeout === 0)
      return found(query, await this.reads.read(keyOf(query), () => this.readPage(query))).page;
    const release = this.longPolls.admit(query.caller);
    try {
      return await this.readOrWait(query, signal);
    } finally {
      release();
    }
  }

  /**
   * A waiting reader's page up to the latest position given, or once a later one is given the page
   * up to it; the page of events up to then, perhaps none, when its time is up.
   */
  private async readOrWait(query: FeedQuery, signal: AbortSignal): Promise<FeedPage> {
    const until = Date.now() + query.timeout;
    for (;;) {
      const { upTo, reads } = this.upToLatest();
      const read = found(query, await reads.read(keyOf(query), () => this.readPage(query, upTo)));
      // A shutdown that began meanwhile cuts the wait short.
      const left = Math.min(until, this.closingAt) - Date.now();
      if (!read.empty || left <= 0 || signal.aborted) return read.page;
      // Events committed since the last look (by another instance, or while no reader waited) get
      // their positions within EVENTS_FEED_WAKE_MS.
      this.checks.ask();
      await this.newEvents.past(upTo, left, signal);
      // The application is closing (its database with it): answered at once, without a read.
      if (this.stopping) return read.page;
    }
  }

  /** The reads of waiting readers up to the latest position given: anew once it moves. */
  private upToLatest(): ReadsUpTo {
    const latest = this.newEvents.latest;
    if (this.readsUpTo.upTo !== latest) this.readsUpTo = keptReads(latest);
    return this.readsUpTo;
  }

  /** The page after the reader's last event, as of now or up to position `upTo`. */
  private async readPage(query: FeedQuery, upTo?: number): Promise<Read> {
    const read = this.store.feedRead(
      await this.unitOfWork.readStatements(
        this.store.feedStatements(query.lastEventId, query.limit, upTo),
      ),
    );
    if (!read.found) return { found: false };
    const page = {
      body: Buffer.from(`[${read.bodies.join(',')}]`),
      full: read.bodies.length === query.limit,
    };
    return { found: true, page, empty: read.bodies.length === 0 };
  }

  /**
   * Gives the committed events their positions and wakes the readers waiting for them; run by
   * `checks`, one at a time: whether it woke any, which no other check does for the interval after.
   */
  private async check(): Promise<boolean> {
    try {
      const last = await this.givePositions();
      const wakes = last > this.newEvents.latest && this.newEvents.waiting > 0;
      this.newEvents.reached(last);
      if (this.failing) this.logger.log('The event feed finds new events again.');
      this.failing = false;
      return wakes;
    } catch (error) {
      if (!this.failing)
        this.logger.warn(
          `The event feed cannot look for new events; waiting readers are answered when their time is up, and it tries again: ${(error as Error).message}`,
        );
      this.failing = true;
      return false;
    }
  }

  /** Positions for every committed event without one; the last position given. */
  private givePositions(): Promise<number> {
    return this.unitOfWork.write(async (manager) => {
      let given: number;
      do given = await this.store.givePositions(manager);
      while (given === POSITION_BATCH);
      return this.store.lastGiven(manager);
    });
  }
}

/** What a reader asks for, as its reads are shared: its last event and its limit. */
const keyOf = (query: FeedQuery) => `${query.lastEventId ?? ''}|${query.limit}`;

/** The read, which found the reader's last event; else EventGoneError. */
function found(query: FeedQuery, read: Read): Found {
  if (!read.found) throw new EventGoneError(query.lastEventId!);
  return read;
}
