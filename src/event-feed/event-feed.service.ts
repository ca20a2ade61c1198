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

/** One read of the outbox for a reader: its page, or that its last event is gone. */
type Read =
  | { readonly found: false }
  | {
      readonly found: true;
      readonly page: FeedPage;
      readonly empty: boolean;
      readonly lastGiven: number;
    };

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
 * EVENTS_POLL_MS, and at once after a commit here while a reader waits, so that a waiting reader
 * gets an event as soon as it commits, and another instance's within EVENTS_POLL_MS.
 */
@Injectable()
export class EventFeed implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('EventFeed');
  private readonly store: OutboxStore;
  private readonly newEvents = new NewEvents();
  private readonly reads = new SharedReads<Read>();
  private readonly longPolls: LongPolls;
  /** Once the shutdown begins, when its drain ends: no reader waits past it. */
  private closingAt = Number.POSITIVE_INFINITY;
  private stopping = false;
  private checking?: Promise<void>;
  private checkAgain = false;
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
        if (this.newEvents.waiting > 0) this.check();
      }),
    );
    const poll = setInterval(() => this.check(), this.config.events.pollMs);
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
    await this.checking;
  }

  /**
   * Up to `limit` events after the reader's last one, waiting up to `timeout` for one when none
   * follows it (and no longer than `signal`, its client, stays); EventGoneError when its last event
   * is no longer in the outbox. A reader that would wait takes one of the places for waiting readers,
   * or is refused (FeedWaitsExceededError, FeedFullError).
   */
  async read(query: FeedQuery, signal: AbortSignal): Promise<FeedPage> {
    if (query.timeout === 0) return this.readOrWait(query, signal);
    const release = this.longPolls.admit(query.caller);
    try {
      return await this.readOrWait(query, signal);
    } finally {
      release();
    }
  }

  private async readOrWait(query: FeedQuery, signal: AbortSignal): Promise<FeedPage> {
    const until = Date.now() + query.timeout;
    for (;;) {
      const read = await this.reads.read(`${query.lastEventId ?? ''}|${query.limit}`, () =>
        this.readPage(query),
      );
      if (!read.found) throw new EventGoneError(query.lastEventId!);
      // A shutdown that began meanwhile cuts the wait short.
      const left = Math.min(until, this.closingAt) - Date.now();
      if (!read.empty || left <= 0 || signal.aborted) return read.page;
      await this.newEvents.past(read.lastGiven, left, signal);
      // The application is closing (its database with it): answered at once, without a read.
      if (this.stopping) return read.page;
    }
  }

  /** The page after the reader's last event, as of now: read once for all who ask together. */
  private async readPage(query: FeedQuery): Promise<Read> {
    const read = this.store.feedRead(
      await this.unitOfWork.readStatements(
        this.store.feedStatements(query.lastEventId, query.limit),
      ),
    );
    if (!read.found) return { found: false };
    const page = {
      body: Buffer.from(`[${read.bodies.join(',')}]`),
      full: read.bodies.length === query.limit,
    };
    return { found: true, page, empty: read.bodies.length === 0, lastGiven: read.lastGiven };
  }

  /**
   * Gives the committed events their positions and wakes the readers waiting for them: one check at
   * a time, and once more after it when asked for meanwhile.
   */
  private check(): void {
    if (this.checking) {
      this.checkAgain = true;
      return;
    }
    this.checking = this.givePositions()
      .then(
        (last) => {
          this.newEvents.reached(last);
          if (this.failing) this.logger.log('The event feed finds new events again.');
          this.failing = false;
        },
        (error: unknown) => {
          if (!this.failing)
            this.logger.warn(
              `The event feed cannot look for new events; waiting readers are answered when their time is up, and it tries again: ${(error as Error).message}`,
            );
          this.failing = true;
        },
      )
      .finally(() => {
        this.checking = undefined;
        if (this.checkAgain && !this.stopping) {
          this.checkAgain = false;
          this.check();
        }
      });
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
