import { IntField, TextField, WireRecord } from '../../wire';

/** The largest page of the feed, and the size of a page the reader does not size. */
export const FEED_LIMIT = { max: 1000, default: 100 } as const;

/**
 * The longest a reader may wait for an event, in ms: below the minute after which gateways and load
 * balancers commonly drop an idle response.
 */
export const FEED_MAX_TIMEOUT_MS = 30_000;

/**
 * GetEvents' query string, read as the service reads every query string: names in any case, the
 * first of repeated names, an empty value as absent; violations in ModelState keyed `query.<name>`.
 */
@WireRecord({ name: 'Query', schemaName: 'GetEventsQuery' })
export class EventFeedQueryDto {
  @TextField() lastEventId?: string | null;
  @IntField({ min: 1, max: FEED_LIMIT.max }) limit?: number | null;
  @IntField({ min: 0, max: FEED_MAX_TIMEOUT_MS }) timeout?: number | null;
}
