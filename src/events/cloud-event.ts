import { JsonCodec, formatWireDate, wireModelOf } from '../wire';
import { type IntegrationEvent, type IntegrationEventType } from './integration-event';

/** The media type of a CloudEvent in structured mode (the whole event, data included, as JSON). */
export const CLOUD_EVENT_MEDIA_TYPE = 'application/cloudevents+json';

/** The media type of a batch of CloudEvents in the JSON format: a JSON array of events. */
export const CLOUD_EVENTS_BATCH_MEDIA_TYPE = 'application/cloudevents-batch+json';

/** The character encoding of the body, sent as the AMQP `content-encoding` property. */
export const CLOUD_EVENT_ENCODING = 'utf-8';

/**
 * Where the AsyncAPI document keeps the schema of a kind's data, as a JSON Pointer: its message's
 * name (the data's wire schema name), which a kind whose data changes incompatibly does not keep.
 */
export const dataSchemaPointer = (type: IntegrationEventType) =>
  `/components/schemas/${wireModelOf(type.payload).schemaName}`;

export interface EnvelopeContext {
  readonly id: string;
  readonly source: string;
  /** The address of the AsyncAPI document (EVENTS_SCHEMA_URL), where `dataschema` points into. */
  readonly schemaUrl: string;
  /** The W3C trace context of the request that made the change, when tracing is on. */
  readonly traceparent?: string;
}

const codec = new JsonCodec();

/**
 * The CloudEvents 1.0 event in structured JSON mode, as written to the outbox and published as is.
 * Written out here rather than through the SDK's CloudEvent, which validates and copies each event
 * with Ajv on the write path of every UpdateAgents; the tests validate every published event with the
 * SDK instead. Its data is the payload's wire JSON, dates in the service's format; `time` too. Its
 * `dataschema` is the data's schema in the AsyncAPI document, an address a consumer can fetch.
 */
export function cloudEventJson(event: IntegrationEvent, context: EnvelopeContext): string {
  const data = codec.encode(wireModelOf(event.type.payload), event.data);
  const attributes: Record<string, string> = {
    specversion: '1.0',
    id: context.id,
    source: context.source,
    type: event.type.type,
    ...(event.subject !== undefined && { subject: event.subject }),
    time: formatWireDate(event.time),
    datacontenttype: 'application/json',
    dataschema: `${context.schemaUrl}#${dataSchemaPointer(event.type)}`,
    ...(context.traceparent && { traceparent: context.traceparent }),
  };
  return `${JSON.stringify(attributes).slice(0, -1)},"data":${data}}`;
}
