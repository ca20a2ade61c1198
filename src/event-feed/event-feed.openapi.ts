import { applyDecorators } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiProduces,
  ApiProperty,
  ApiPropertyOptional,
  ApiQuery,
  ApiResponse,
  ApiSchema,
  getSchemaPath,
} from '@nestjs/swagger';
import { DEFAULT_EVENTS_SOURCE } from '../config/app-config';
import { DATA_IMPORTED } from '../data-import';
import { CLOUD_EVENTS_BATCH_MEDIA_TYPE } from '../events/cloud-event';
import { exampleEvent } from '../openapi/asyncapi-document';
import { AGENTS_CHANGED } from '../transaction';
import { JSON_MEDIA_TYPES } from '../wire';
import { FEED_LIMIT, FEED_MAX_TIMEOUT_MS } from './dto/event-feed-query.dto';

/** The media types of the feed's answer, in the order that wins ties: JSON first. */
export const FEED_MEDIA_TYPES = [...JSON_MEDIA_TYPES, CLOUD_EVENTS_BATCH_MEDIA_TYPE];

/** How long a full page may be kept by the reader's cache: it never changes. */
export const FULL_PAGE_MAX_AGE_SECONDS = 86_400;

@ApiSchema({
  name: 'CloudEvent',
  description:
    'One integration event: a CloudEvents 1.0 event in its JSON format, exactly as the broker ' +
    "publishes it. Each type's data schema is in the AsyncAPI document (GET /asyncapi-json).",
})
export class CloudEventSchema {
  @ApiProperty({ enum: ['1.0'], description: 'The CloudEvents version.' }) specversion!: string;
  @ApiProperty({
    format: 'uuid',
    description:
      "The event's id, the same as the broker's message id: what a consumer deduplicates by, and " +
      'what the next read of the feed names as lastEventId.',
  })
  id!: string;
  @ApiProperty({
    format: 'uri-reference',
    description: 'The service that published the event: EVENTS_SOURCE.',
  })
  source!: string;
  @ApiProperty({
    description: 'The kind of event, such as property-sales.transaction.agents-changed.',
  })
  type!: string;
  @ApiPropertyOptional({ description: 'What the event is about: the transaction id, as text.' })
  subject?: string;
  @ApiProperty({
    format: 'date-time',
    description:
      'When the change was made, in the format and offset of the service (APP_TIMEZONE).',
  })
  time!: string;
  @ApiProperty({ enum: ['application/json'] }) datacontenttype!: string;
  @ApiPropertyOptional({
    description:
      'The W3C trace context of the request that made the change, while the service traces.',
  })
  traceparent?: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: "The event's payload, as its type's schema in the AsyncAPI document describes it.",
  })
  data!: Record<string, unknown>;
}

/** Where the examples' `dataschema` points: the AsyncAPI document of a service on port 3000. */
const EXAMPLE_SCHEMA_URL = 'http://localhost:3000/asyncapi-json';

/** A page of two events, as the service writes them. */
const PAGE_EXAMPLE = [
  exampleEvent(
    DATA_IMPORTED,
    DEFAULT_EVENTS_SOURCE,
    EXAMPLE_SCHEMA_URL,
    '5b0e3c9a-2f4d-4e8b-9a61-7c3d2e1f0a9b',
  ),
  exampleEvent(
    AGENTS_CHANGED,
    DEFAULT_EVENTS_SOURCE,
    EXAMPLE_SCHEMA_URL,
    '0f885bb6-753a-41fd-8260-12984b535119',
  ),
];

/** GetEvents' query parameters. Only `limit` has an example: "Try it out" sends every example. */
const FEED_QUERY = applyDecorators(
  ApiQuery({
    name: 'lastEventId',
    required: false,
    description:
      'The `id` of the last event the reader holds: the answer starts after it. Without it, the ' +
      'feed starts at its oldest event. An id the feed no longer holds (older than ' +
      'EVENTS_RETENTION_MS), or never held, answers 410.',
    schema: { type: 'string' },
  }),
  ApiQuery({
    name: 'limit',
    required: false,
    description: `Events per answer, at most ${FEED_LIMIT.max}; more answers 400.`,
    schema: {
      type: 'integer',
      format: 'int32',
      minimum: 1,
      maximum: FEED_LIMIT.max,
      default: FEED_LIMIT.default,
      example: FEED_LIMIT.default,
    },
  }),
  ApiQuery({
    name: 'timeout',
    required: false,
    description:
      'When no event follows lastEventId, how long to wait for one, in milliseconds (a long ' +
      `poll), at most ${FEED_MAX_TIMEOUT_MS}: the answer comes once one commits, at the ` +
      "instance's next wake-up of its waiting readers (at once after a quiet spell, else within " +
      'EVENTS_FEED_WAKE_MS, longer with many readers waiting), or empty when the time is up. 0 ' +
      'answers at once.',
    schema: {
      type: 'integer',
      format: 'int32',
      minimum: 0,
      maximum: FEED_MAX_TIMEOUT_MS,
      default: 0,
    },
  }),
);

const page = { type: 'array', items: { $ref: getSchemaPath(CloudEventSchema) } };

/** GetEvents' query and its answer, under each media type it is written in. */
export const FeedDocumentation = () =>
  applyDecorators(
    FEED_QUERY,
    ApiExtraModels(CloudEventSchema),
    ApiProduces(...FEED_MEDIA_TYPES),
    ApiResponse({
      status: 200,
      description:
        'The events after lastEventId, oldest first, as a JSON array (empty when none came). ' +
        `Written as application/json unless Accept asks for ${CLOUD_EVENTS_BATCH_MEDIA_TYPE} (the ` +
        'CloudEvents JSON batch format) or text/json; the body is the same.',
      content: Object.fromEntries(
        FEED_MEDIA_TYPES.map((mediaType) => [mediaType, { schema: page, example: PAGE_EXAMPLE }]),
      ),
      headers: {
        'Cache-Control': {
          description:
            `A full page (limit events) never changes: \`private, max-age=${FULL_PAGE_MAX_AGE_SECONDS}, ` +
            'immutable`. A shorter one grows as events commit: `no-store`.',
          required: true,
          schema: { type: 'string', example: 'no-store' },
        },
      },
    }),
  );
