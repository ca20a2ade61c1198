import { DomainError } from '../common/domain-error';

/** The longest part of a client's id a message repeats. */
const QUOTED_ID_LENGTH = 64;

export class EventFeedOffError extends DomainError {
  static readonly status = 404;
  static readonly description =
    'The event feed is off on this service (EVENTS_FEED): its operator turns it on.';
  static readonly example = new EventFeedOffError();
  readonly code = 'event_feed_off';
  readonly title = 'Event feed off';
  constructor() {
    super(
      'The event feed is off on this service: its operator turns it on with EVENTS_FEED=true. ' +
        'The events are published to the broker when EVENTS_URL is set.',
    );
  }
}

/**
 * The reader's last event is not in the feed: purged once past its retention, or never one of this
 * service's. What came after it may be gone too, so the reader rebuilds what it holds.
 */
export class EventGoneError extends DomainError {
  static readonly status = 410;
  static readonly description =
    "lastEventId names no event the feed still holds (past EVENTS_RETENTION_MS, or unknown): the events after it may be gone. Rebuild from ListTransactions' changed_since, then read the feed from its oldest event.";
  static readonly example = new EventGoneError('0f885bb6-753a-41fd-8260-12984b535119');
  readonly code = 'event_gone';
  readonly title = 'Event gone';
  constructor(lastEventId: string) {
    const quoted =
      lastEventId.length > QUOTED_ID_LENGTH
        ? `${lastEventId.slice(0, QUOTED_ID_LENGTH)}…`
        : lastEventId;
    super(
      `The event '${quoted}' is no longer in the feed (it is kept EVENTS_RETENTION_MS), or never ` +
        'was: events after it may be gone. Rebuild what you hold from ' +
        'ListTransactions?changed_since= (the latest stamp you hold, less a few seconds; or a full ' +
        'listing), then read the feed from its oldest event (no lastEventId).',
    );
  }
}

/** How soon a refused long poll may ask again: a wait ends within the longest timeout, most sooner. */
const WAIT_REFUSED_RETRY_AFTER_SECONDS = 2;

export class FeedWaitsExceededError extends DomainError {
  static readonly status = 429;
  static readonly description =
    'This caller already has EVENTS_FEED_MAX_WAITING_PER_CALLER readers waiting with timeout on this instance; retry after Retry-After seconds, or read without timeout.';
  static readonly example = new FeedWaitsExceededError(20);
  readonly code = 'event_feed_waits_exceeded';
  readonly title = 'Too many feed readers waiting';
  constructor(max: number) {
    super(
      `This caller already has ${max} feed readers waiting with timeout (the most one caller may have ` +
        `on an instance); retry after ${WAIT_REFUSED_RETRY_AFTER_SECONDS} seconds, once one is answered.`,
      { 'Retry-After': String(WAIT_REFUSED_RETRY_AFTER_SECONDS) },
    );
  }
}

export class FeedFullError extends DomainError {
  static readonly status = 503;
  static readonly description =
    'EVENTS_FEED_MAX_WAITING readers already wait with timeout on this instance; retry after Retry-After seconds (another instance may take it).';
  static readonly example = new FeedFullError();
  readonly code = 'event_feed_full';
  readonly title = 'Event feed full';
  constructor() {
    super(
      'As many feed readers wait with timeout on this instance as it takes; retry after ' +
        `${WAIT_REFUSED_RETRY_AFTER_SECONDS} seconds.`,
      { 'Retry-After': String(WAIT_REFUSED_RETRY_AFTER_SECONDS) },
    );
  }
}
