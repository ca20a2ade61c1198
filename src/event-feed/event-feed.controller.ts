import { Controller, Get, Req, Res } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { type Response } from 'express';
import { type AuthenticatedRequest } from '../auth/auth.guard';
import { AuthenticationError } from '../auth/authenticator';
import { RateLimitedError } from '../auth/rate-limit.guard';
import { declareScope, RequiresScope } from '../auth/scopes';
import { DatabaseUnavailableError } from '../database/database-errors';
import { CLOUD_EVENTS_BATCH_MEDIA_TYPE } from '../events/cloud-event';
import {
  JsonCodec,
  NEGOTIATED_BY,
  queryStringOf,
  readQuery,
  requestMediaType,
  WireErrors,
  WireFormats,
  type WireWriter,
  WireTag,
} from '../wire';
import { EventFeedQueryDto, FEED_LIMIT } from './dto/event-feed-query.dto';
import {
  EventFeedOffError,
  EventGoneError,
  FeedFullError,
  FeedWaitsExceededError,
} from './event-feed.errors';
import { FeedDocumentation, FULL_PAGE_MAX_AGE_SECONDS } from './event-feed.openapi';
import { EventFeed } from './event-feed.service';

export const EVENTS_READ = declareScope(
  'events:read',
  'Read the committed integration events from the event feed (GetEvents), as the broker gets them.',
);

const json = new JsonCodec();

/** CloudEvents' JSON batch format: a JSON array of events, which is JSON under a name of its own. */
const cloudEventsBatch: WireWriter = {
  responseTypes: [CLOUD_EVENTS_BATCH_MEDIA_TYPE],
  encode: (model, value) => json.encode(model, value),
  encodeError: (error) => json.encodeError(error),
};

/**
 * The feed's media types, chosen as every answer's is: JSON unless the Accept header asks for the
 * batch type (or text/json), since JSON is what every client reads (a .NET client's ReadAsAsync
 * reads no `+json` type); the body is the same in each.
 */
const FEED_FORMATS = new WireFormats([], [json, cloudEventsBatch]);

@WireTag(
  'Events',
  'The committed integration events, as CloudEvents: for consumers that catch up from the last ' +
    'event they hold, or cannot reach the broker.',
)
@Controller('Events')
export class EventFeedController {
  constructor(private readonly feed: EventFeed) {}

  @Get()
  @ApiOperation({
    operationId: 'GetEvents',
    summary: 'The committed events after the last one the reader holds, oldest first.',
    description:
      'An HTTP feed of the integration events (the http-feeds style: CloudEvents over HTTP, polled ' +
      'with the last event id): each event exactly as the broker gets it, in the order the broker ' +
      'gets them. A reader sends the id of the last event it holds as lastEventId, or none to ' +
      'start at the oldest; with timeout it waits for the next event instead of polling. Events ' +
      'are kept EVENTS_RETENTION_MS; a reader whose last event is gone gets 410 and rebuilds from ' +
      'ListTransactions. On only when the service is run with EVENTS_FEED=true; otherwise 404.',
  })
  @FeedDocumentation()
  @RequiresScope(EVENTS_READ)
  @WireErrors(
    400,
    AuthenticationError,
    EventFeedOffError,
    EventGoneError,
    RateLimitedError,
    FeedWaitsExceededError,
    500,
    DatabaseUnavailableError,
    FeedFullError,
  )
  async getEvents(
    @Req() request: AuthenticatedRequest,
    @Res({ passthrough: true }) response: Response,
  ): Promise<Buffer> {
    if (!this.feed.on) throw new EventFeedOffError();
    const query = readQuery(EventFeedQueryDto, queryStringOf(request));
    // A client that leaves stops its wait. Once the page is read, its leaving stops nothing: an
    // abort then would cost each answer an error with its stack, and a wake-up answers hundreds.
    const left = new AbortController();
    const leave = () => left.abort();
    response.once('close', leave);
    const page = await this.feed
      .read(
        {
          ...(query.lastEventId != null && { lastEventId: query.lastEventId }),
          limit: query.limit ?? FEED_LIMIT.default,
          timeout: query.timeout ?? 0,
          caller: request.caller?.id ?? request.ip ?? 'unknown',
        },
        left.signal,
      )
      .finally(() => response.off('close', leave));
    const { mediaType } = FEED_FORMATS.forResponse(
      request.headers.accept,
      requestMediaType(request),
    );
    response.setHeader('Content-Type', `${mediaType}; charset=utf-8`);
    response.setHeader('Vary', NEGOTIATED_BY);
    response.setHeader(
      'Cache-Control',
      page.full ? `private, max-age=${FULL_PAGE_MAX_AGE_SECONDS}, immutable` : 'no-store',
    );
    return page.body;
  }
}
