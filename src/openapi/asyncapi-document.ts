import { type INestApplication } from '@nestjs/common';
import { type OpenAPIObject } from '@nestjs/swagger';
import { type Request, type Response } from 'express';
import { type AppConfig } from '../config/app-config';
import {
  CLOUD_EVENT_ENCODING,
  CLOUD_EVENT_MEDIA_TYPE,
  cloudEventJson,
  dataSchemaPointer,
} from '../events/cloud-event';
import { type IntegrationEventType } from '../events/integration-event';
import { publishedEvents } from '../events/module-events';
import { wireModelOf } from '../wire';
import { canonical, createOpenApiDocument, reachable } from './openapi-document';

/** A part of the document, read and written as plain JSON. */
type Json = Record<string, unknown>;

/** The AsyncAPI 3.0 document of the integration events, as served and committed. */
export interface AsyncApiDocument extends Json {
  readonly asyncapi: '3.0.0';
  readonly info: Json;
  readonly servers: Record<string, Json>;
  readonly channels: Record<string, Json>;
  readonly operations: Record<string, Json>;
  readonly components: { readonly messages: Record<string, Json>; readonly schemas: Json };
}

/** Where the document is served, outside the API prefix, beside `/swagger-json`. */
export const ASYNCAPI_PATH = '/asyncapi-json';

/** The server's name in the document; channels and consumers' tools refer to it. */
const SERVER = 'broker';
/** The version of the AMQP bindings every binding object states. */
const AMQP_BINDINGS = '0.3.0';
/** The broker's host when EVENTS_URL is not set: a placeholder, as a container network names it. */
const PLACEHOLDER_HOST = 'rabbitmq:5672';
/** The CloudEvents id and time of the examples: a fixed event, so the committed document is stable. */
const EXAMPLE_ID = '0f8e6b1c-3d2a-4c5e-9b7f-1a2b3c4d5e6f';
const EXAMPLE_TIME = new Date('2024-05-06T09:30:15.250Z');

const DESCRIPTION =
  'The integration events of the Property Sales Service: CloudEvents 1.0 in structured JSON mode ' +
  `(\`${CLOUD_EVENT_MEDIA_TYPE}\`, the whole event with its data in the message body), published ` +
  'to a durable topic exchange (EVENTS_EXCHANGE) with the routing key of their kind, persistent, ' +
  'with the CloudEvents id as the AMQP message id and the CloudEvents type as the AMQP type. ' +
  'Delivery is at least once: an event is written in the transaction of its change, so it exists ' +
  'exactly when the change committed, and it is published again until the broker confirms it, so a ' +
  'consumer may receive an event more than once: deduplicate by its CloudEvents `id`. The events ' +
  'about one subject (one transaction) are published in the order their changes committed. The ' +
  'broker drops an event no queue is bound for: bind a durable queue before relying on the events. ' +
  "Each event's `dataschema` names its data's schema in this document. Under one type the data " +
  'only grows (members added); an incompatible change comes as a new type beside the old one, ' +
  'both published for a deprecation period.';

/** Text as a regular expression matches it literally. */
const escapedForPattern = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A message example's `payload`: the event as the service publishes it. */
const EXAMPLE_PAYLOAD = (key: string, parentKey?: string) =>
  key === 'payload' && parentKey === 'examples';

/** Keywords whose value is one schema, and those whose value is a list of schemas. */
const SUBSCHEMA = new Set(['items', 'not', 'additionalProperties']);
const SUBSCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf']);

/**
 * An OpenAPI 3.0 schema as the JSON Schema of an AsyncAPI schema, for each keyword the wire fields
 * write that JSON Schema reads otherwise: `nullable` becomes a `null` type, a boolean
 * `exclusiveMinimum`/`exclusiveMaximum` (decimals) becomes the bound itself, and the XML names go.
 */
function jsonSchemaOf(schema: Json): Json {
  const { nullable, exclusiveMinimum, exclusiveMaximum, ...rest } = schema;
  const translated: Json = {};
  for (const [keyword, value] of Object.entries(rest)) {
    if (keyword === 'xml') continue;
    if (keyword === 'properties')
      translated[keyword] = Object.fromEntries(
        Object.entries(value as Record<string, Json>).map(([name, property]) => [
          name,
          jsonSchemaOf(property),
        ]),
      );
    else if (SUBSCHEMA.has(keyword) && typeof value === 'object')
      translated[keyword] = jsonSchemaOf(value as Json);
    else if (SUBSCHEMA_LISTS.has(keyword))
      translated[keyword] = (value as Json[]).map((item) => jsonSchemaOf(item));
    else translated[keyword] = value;
  }
  if (exclusiveMinimum === true) {
    translated.exclusiveMinimum = translated.minimum;
    delete translated.minimum;
  }
  if (exclusiveMaximum === true) {
    translated.exclusiveMaximum = translated.maximum;
    delete translated.maximum;
  }
  // OpenAPI 3.0 reads `nullable` only beside a `type`.
  if (nullable === true && typeof translated.type === 'string')
    translated.type = [translated.type, 'null'];
  return translated;
}

/** The message of a kind is named as its data's schema: `AgentsChanged`. */
/**
 * Each kind's message name: its payload's schema name, or, for kinds that carry the same payload (a
 * record's created and updated events), its routing key in PascalCase (`commission.created`:
 * `CommissionCreated`), so that every kind has a message and an operation of its own.
 */
function messageNames(
  events: readonly IntegrationEventType[],
): ReadonlyMap<IntegrationEventType, string> {
  const schemaName = (event: IntegrationEventType) => wireModelOf(event.payload).schemaName;
  const carriers = new Map<string, number>();
  for (const event of events)
    carriers.set(schemaName(event), (carriers.get(schemaName(event)) ?? 0) + 1);
  return new Map(
    events.map((event) => [
      event,
      carriers.get(schemaName(event)) === 1
        ? schemaName(event)
        : event.routingKey
            .split(/[.-]/)
            .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
            .join(''),
    ]),
  );
}

/** Where the document keeps the schema of a kind's data: where each event's `dataschema` points. */
const schemaRef = (event: IntegrationEventType) => `#${dataSchemaPointer(event)}`;

/**
 * The schemas of the events' data, from the OpenAPI document made with them as extra models: the
 * same generation from the same wire models, in JSON Schema. Every member is required, as in a
 * response: the JSON writer writes each one, null or not.
 */
function dataSchemas(openApi: OpenAPIObject, events: readonly IntegrationEventType[]): Json {
  const schemas = openApi.components!.schemas! as Record<string, Json>;
  const roots = events.map((event) => ({ $ref: schemaRef(event) }));
  return Object.fromEntries(
    [...reachable(openApi, roots)].map((name) => {
      const schema = jsonSchemaOf(schemas[name]);
      return [name, { ...schema, required: Object.keys(schema.properties as Json) }];
    }),
  );
}

/** The broker as a server: its host from EVENTS_URL, never its credentials; a placeholder without it. */
function brokerServer(url: string | undefined): { server: Json; vhost: string } {
  const description =
    'The RabbitMQ broker the service publishes to: EVENTS_URL names it (amqp://user:password@host:5672/vhost).';
  if (url === undefined)
    return {
      server: {
        host: PLACEHOLDER_HOST,
        protocol: 'amqp',
        protocolVersion: '0.9.1',
        description: `${description} EVENTS_URL is not set where this document was made: the host is a placeholder.`,
      },
      vhost: '/',
    };
  const parsed = new URL(url);
  const secure = parsed.protocol === 'amqps:';
  const vhost = parsed.pathname.length > 1 ? decodeURIComponent(parsed.pathname.slice(1)) : '/';
  return {
    server: {
      host: `${parsed.hostname}:${parsed.port || (secure ? 5671 : 5672)}`,
      protocol: secure ? 'amqps' : 'amqp',
      protocolVersion: '0.9.1',
      ...(vhost !== '/' && { pathname: parsed.pathname }),
      description,
    },
    vhost,
  };
}

/** The CloudEvent a kind's events are: its attributes, and its data as its wire model's schema. */
function envelopeSchema(event: IntegrationEventType): Json {
  return {
    type: 'object',
    description:
      'The CloudEvent in structured JSON mode: its attributes and its data in one JSON object.',
    properties: {
      specversion: { type: 'string', const: '1.0', description: 'The CloudEvents version.' },
      id: {
        type: 'string',
        format: 'uuid',
        description:
          'The id of the event, the same on every delivery of it (and the AMQP message id): what a consumer deduplicates by.',
      },
      source: {
        type: 'string',
        format: 'uri-reference',
        description: 'The service that published the event: EVENTS_SOURCE.',
      },
      type: { type: 'string', const: event.type, description: 'The kind of event.' },
      ...(event.subject !== undefined && {
        subject: { type: 'string', description: event.subject },
      }),
      time: {
        type: 'string',
        format: 'date-time',
        description:
          'When the change was made, in the format and offset of the service (APP_TIMEZONE).',
      },
      datacontenttype: { type: 'string', const: 'application/json' },
      dataschema: {
        type: 'string',
        format: 'uri',
        // The address is the deployment's; the schema it names is this message's.
        pattern: `${escapedForPattern(schemaRef(event))}$`,
        description:
          "The schema of `data`: this document's address (EVENTS_SCHEMA_URL) with the schema's JSON " +
          'Pointer. It changes only with an incompatible change of the data, which comes as a new ' +
          'type beside this one. Absent on events committed before the service sent it.',
      },
      traceparent: {
        type: 'string',
        pattern: '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$',
        description:
          'The W3C trace context of the request that made the change (CloudEvents distributed tracing extension); only while tracing is on.',
      },
      data: { $ref: schemaRef(event) },
    },
    required: [
      'specversion',
      'id',
      'source',
      'type',
      ...(event.subject !== undefined && !event.subjectMayBeAbsent ? ['subject'] : []),
      'time',
      'datacontenttype',
      'data',
    ],
  };
}

/**
 * The event of a kind's example as the service publishes it, through the same `cloudEventJson`. Its
 * time is the example's `stamp`, as the publishers stamp their events with their change's stamp.
 * Also what the event feed's example in the OpenAPI document holds, each with an `id` of its own.
 */
export function exampleEvent(
  event: IntegrationEventType,
  source: string,
  schemaUrl: string,
  id = EXAMPLE_ID,
): Json {
  const stamp = (event.example as { stamp?: unknown }).stamp;
  return JSON.parse(
    cloudEventJson(
      {
        type: event,
        subject: event.exampleSubject,
        time: stamp instanceof Date ? stamp : EXAMPLE_TIME,
        data: event.example,
      },
      { id, source, schemaUrl },
    ),
  ) as Json;
}

/** A kind's message: the CloudEvent on the wire, its AMQP properties and its example. */
function message(
  event: IntegrationEventType,
  name: string,
  source: string,
  schemaUrl: string,
): Json {
  return {
    name,
    title: event.type,
    summary: event.summary,
    description: event.description,
    contentType: CLOUD_EVENT_MEDIA_TYPE,
    payload: envelopeSchema(event),
    bindings: {
      amqp: {
        contentEncoding: CLOUD_EVENT_ENCODING,
        messageType: event.type,
        bindingVersion: AMQP_BINDINGS,
      },
    },
    examples: [
      {
        name,
        summary: event.summary,
        payload: exampleEvent(event, source, schemaUrl),
      },
    ],
  };
}

/**
 * The AsyncAPI 3.0 document of the integration events the application's modules publish (@Publishes): one channel per
 * routing key on the topic exchange, one message per kind (the CloudEvent, with an example as the
 * service publishes it), one `send` operation per channel. The data schemas are those of the OpenAPI
 * document, from the same wire models. Deterministic, so it can be committed.
 */
export function createAsyncApiDocument(
  app: INestApplication,
  config: AppConfig,
  version: string,
): AsyncApiDocument {
  const events = publishedEvents(app);
  const openApi = createOpenApiDocument(
    app,
    config,
    version,
    events.map((event) => event.payload),
  );
  const { exchange, source, url, schemaUrl } = config.events;
  const { server, vhost } = brokerServer(url);
  const channels: Record<string, Json> = {};
  const operations: Record<string, Json> = {};
  const messages: Record<string, Json> = {};
  const names = messageNames(events);
  for (const event of events) {
    const name = names.get(event)!;
    messages[name] = message(event, name, source, schemaUrl);
    channels[event.routingKey] = {
      address: event.routingKey,
      title: event.summary,
      description:
        `The routing key \`${event.routingKey}\` on the topic exchange \`${exchange}\`: bind a ` +
        'queue with it, or with a pattern that matches it (`#` for every event).',
      servers: [{ $ref: `#/servers/${SERVER}` }],
      messages: { [name]: { $ref: `#/components/messages/${name}` } },
      bindings: {
        amqp: {
          is: 'routingKey',
          exchange: { name: exchange, type: 'topic', durable: true, autoDelete: false, vhost },
          bindingVersion: AMQP_BINDINGS,
        },
      },
    };
    operations[`publish${name}`] = {
      action: 'send',
      channel: { $ref: `#/channels/${event.routingKey}` },
      messages: [{ $ref: `#/channels/${event.routingKey}/messages/${name}` }],
      summary: event.summary,
      description:
        'Published once its change committed, from the outbox, with publisher confirms: ' +
        'persistent, timestamped with the change.',
      bindings: { amqp: { deliveryMode: 2, timestamp: true, bindingVersion: AMQP_BINDINGS } },
    };
  }
  return canonical(
    {
      asyncapi: '3.0.0',
      info: {
        title: openApi.info.title,
        version: openApi.info.version,
        description: DESCRIPTION,
        ...(openApi.info.license && { license: openApi.info.license }),
      },
      defaultContentType: CLOUD_EVENT_MEDIA_TYPE,
      servers: { [SERVER]: server },
      channels,
      operations,
      components: { messages, schemas: dataSchemas(openApi, events) },
    },
    EXAMPLE_PAYLOAD,
  ) as AsyncApiDocument;
}

/**
 * Serves the document at `/asyncapi-json`, outside the API prefix, as `/swagger-json` is served. It is
 * built at its first request, not at start-up: it scans the routes for the OpenAPI document again.
 */
export function serveAsyncApi(app: INestApplication, config: AppConfig, version: string): void {
  let body: string | undefined;
  app.getHttpAdapter().get(ASYNCAPI_PATH, (_request: Request, response: Response) => {
    body ??= JSON.stringify(createAsyncApiDocument(app, config, version));
    response.type('application/json').send(body);
  });
}
