import { type Diagnostic, DiagnosticSeverity, Parser } from '@asyncapi/parser';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { CloudEvent } from 'cloudevents';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { CLOUD_EVENT_MEDIA_TYPE } from '../src/events/cloud-event';
import { publishedEvents } from '../src/events/module-events';
import { DATA_IMPORTED } from '../src/data-import/import.events';
import { AGENTS_CHANGED } from '../src/transaction/transaction.events';
import { ASYNCAPI_PATH } from '../src/openapi/asyncapi-document';
import { INT32_MAX, INT32_MIN, wireModelOf } from '../src/wire';
import { apiKeysVariable } from './support/auth-credentials';
import { EventCollector, TEST_BROKER_URL, uniqueExchange } from './support/event-collector';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { freePort } from './support/processes';
import { type Environment, RunningApp } from './support/test-app';
import { createTestDatabase, type TestDatabase, testDatabaseKinds } from './support/test-database';
import { UPDATE_AGENTS } from './support/update-agents-cases';

/**
 * The AsyncAPI document of the integration events: served beside the OpenAPI document and committed
 * as asyncapi.json, valid for the AsyncAPI parser, its examples valid against their schemas, and
 * every event the service publishes to a real RabbitMQ (TEST_BROKER_URL, or the local one) valid
 * against the schema of its message and as a CloudEvent.
 */

const ROOT = join(__dirname, '..');
const API_KEY = 'gw-live-7Qm2Xv9Lp4Rt8Wz1Kc6Hn3Bd5Fs0Yj';

// The document is read as plain JSON here: any member may be looked at.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/** Every object schema with `properties` closed to others: a member the document omits fails. */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Json = {};
  for (const [key, value] of Object.entries(schema as Json))
    copy[key] =
      key === 'properties' || key === 'definitions'
        ? Object.fromEntries(
            Object.entries(value as Json).map(([name, sub]) => [name, closed(sub)]),
          )
        : closed(value);
  if ('properties' in copy) copy.additionalProperties = false;
  return copy;
}

/** Ajv compiling strictly (a keyword JSON Schema does not know fails), with the document's formats. */
function strictAjv(): Ajv {
  const ajv = new Ajv({ strict: true, allowUnionTypes: true, allErrors: true });
  addFormats(ajv);
  ajv.addFormat('int32', {
    type: 'number',
    validate: (value: number) =>
      Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX,
  });
  // A .NET decimal: any JSON number (a module's own events may carry one).
  ajv.addFormat('decimal', { type: 'number', validate: () => true });
  return ajv;
}

/** A schema of the document compiled with the document's schemas as its definitions, objects closed. */
function compiled(ajv: Ajv, document: Json, schema: Json): ValidateFunction {
  const standalone = JSON.parse(
    JSON.stringify({ ...schema, definitions: document.components.schemas }).replaceAll(
      '"$ref":"#/components/schemas/',
      '"$ref":"#/definitions/',
    ),
  ) as Json;
  return ajv.compile(closed(standalone) as Json);
}

/** A validator of each message's payload. */
function payloadValidators(document: Json): Map<string, ValidateFunction> {
  const ajv = strictAjv();
  const validators = new Map<string, ValidateFunction>();
  for (const [name, message] of Object.entries(messagesOf(document)))
    validators.set(name, compiled(ajv, document, message.payload as Json));
  return validators;
}

/** What a JSON Pointer (RFC 6901) names in a document. */
const pointedAt = (document: Json, pointer: string): unknown =>
  pointer
    .split('/')
    .slice(1)
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce<unknown>((node, token) => (node as Json | undefined)?.[token], document);

/** The document's messages, by name. */
const messagesOf = (document: Json) => document.components.messages as Record<string, Json>;

/** What `validate` finds wrong with `value`: none when it is valid. */
function violations(validate: ValidateFunction, value: unknown): unknown[] {
  return validate(value) ? [] : [...(validate.errors ?? [])];
}

/** The message a channel carries, by the `$ref` of its one message. */
function messageOf(document: Json, channel: Json): [string, Json] {
  const [reference] = Object.values(channel.messages as Record<string, { $ref: string }>);
  const name = reference.$ref.split('/').pop()!;
  return [name, messagesOf(document)[name]];
}

/** What a consumer relies on of a kind of event: its routing key, its subject, its data's schema. */
interface PublishedKind {
  readonly routingKey: string;
  readonly subject: boolean;
  /** Its schema with every `$ref` written out, so a change of a record it holds shows in it. */
  readonly data: Json;
}

/** Each kind of event the document describes, by CloudEvents type. */
function publishedKinds(document: Json): Record<string, PublishedKind> {
  const inlined = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(inlined);
    if (node === null || typeof node !== 'object') return node;
    const { $ref } = node as Json;
    if (typeof $ref === 'string') return inlined(pointedAt(document, $ref.slice(1)));
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inlined(value)]));
  };
  return Object.fromEntries(
    Object.values(document.channels as Record<string, Json>).map((channel) => {
      const [, message] = messageOf(document, channel);
      const envelope = message.payload as Json;
      return [
        envelope.properties.type.const as string,
        {
          routingKey: channel.address as string,
          subject: (envelope.required as string[]).includes('subject'),
          data: inlined(envelope.properties.data) as Json,
        },
      ];
    }),
  );
}

/**
 * What a consumer of `was` would no longer find in `now`: a member removed or no longer always
 * written, or any keyword of a member changed (type, format, bounds, nullability). Members added, at
 * any depth, are not listed: readers ignore members they do not know.
 */
function breakingChanges(was: Json, now: Json | undefined, path: string): string[] {
  if (now === undefined) return [`${path} was removed`];
  const found: string[] = [];
  for (const [keyword, value] of Object.entries(was)) {
    if (keyword === 'properties') {
      for (const [member, schema] of Object.entries(value as Record<string, Json>))
        found.push(
          ...breakingChanges(
            schema,
            (now.properties as Json | undefined)?.[member] as Json,
            `${path}.${member}`,
          ),
        );
    } else if (keyword === 'items') {
      found.push(...breakingChanges(value as Json, now.items as Json | undefined, `${path}[]`));
    } else if (keyword === 'required') {
      for (const member of value as string[])
        if (!((now.required as string[] | undefined) ?? []).includes(member))
          found.push(`${path}.${member} is no longer always written`);
    } else if (!isDeepStrictEqual(value, now[keyword])) {
      found.push(
        `${path}: ${keyword} was ${JSON.stringify(value)}, is ${JSON.stringify(now[keyword])}`,
      );
    }
  }
  return found;
}

/** Whether the parser found an error (its severities are another copy of the same enum). */
const isError = ({ severity }: Diagnostic) => Number(severity) === Number(DiagnosticSeverity.Error);

const committedDocument = async () =>
  JSON.parse(await readFile(join(ROOT, 'asyncapi.json'), 'utf8')) as Json;

describe('the AsyncAPI document', () => {
  let running: RunningApp;
  let document: Json;

  // The committed document describes the service's own modules: the reacting test module, which
  // publishes events of its own, is mounted in the test of what a mounted module adds.
  beforeAll(async () => {
    running = await RunningApp.start('sqlite::memory:', {}, [], { reactor: false });
    document = (await running.http.get(ASYNCAPI_PATH).expect(200)).body as Json;
  });

  afterAll(() => running?.close());

  it('is served at /asyncapi-json, outside the API prefix, as committed in asyncapi.json (run `npm run openapi` after changing an event)', async () => {
    const served = await running.http.get(ASYNCAPI_PATH).expect(200);
    expect(served.headers['content-type']).toMatch(/^application\/json/);
    expect(document).toEqual(await committedDocument());
  });

  it('is valid AsyncAPI 3.0 for the AsyncAPI parser', async () => {
    const { document: parsed, diagnostics } = await new Parser().parse(JSON.stringify(document));
    const notes = diagnostics.filter((diagnostic) => !isError(diagnostic));
    if (notes.length > 0)
      console.warn(
        `The AsyncAPI parser's notes on the document:\n${notes
          .map(({ code, message, path }) => `- ${String(code)}: ${message} (${path.join('/')})`)
          .join('\n')}`,
      );
    expect(diagnostics.filter(isError)).toEqual([]);
    expect(parsed?.version()).toBe('3.0.0');
    expect(
      parsed
        ?.operations()
        .all()
        .map((operation) => operation.action()),
    ).toEqual(publishedEvents(running.app).map(() => 'send'));
    expect(
      parsed
        ?.channels()
        .all()
        .map((channel) => channel.address())
        .sort(),
    ).toEqual(
      publishedEvents(running.app)
        .map(({ routingKey }) => routingKey)
        .sort(),
    );
  });

  it('lists the events of every module the application mounts (@Publishes), and no others', async () => {
    const withModule = await RunningApp.start('sqlite::memory:');
    try {
      const served = (await withModule.http.get(ASYNCAPI_PATH).expect(200)).body as Json;
      expect(Object.keys(served.channels).sort()).toEqual(
        [
          ...Object.keys(document.channels),
          'test-ledger.recomputed',
          'test-ledger.splits-changed',
        ].sort(),
      );
      expect(served.components.messages).toMatchObject({
        TestLedgerSplitsChanged: expect.any(Object) as unknown,
        TestLedgerRecomputed: expect.any(Object) as unknown,
      });
      // Declared (its module's file is loaded) but not mounted: not the application's event.
      expect(Object.keys(document.channels)).not.toContain('test-ledger.splits-changed');
    } finally {
      await withModule.close();
    }
  });

  it('describes every declared event: a channel at its routing key, its message and a send operation', () => {
    expect(document.servers).toEqual({
      broker: expect.objectContaining({ host: 'rabbitmq:5672', protocol: 'amqp' }) as unknown,
    });
    expect(document.info.description).toMatch(/at least once/);
    const events = publishedEvents(running.app);
    expect(events.length).toBeGreaterThan(0);
    expect(Object.keys(document.channels)).toHaveLength(events.length);
    expect(Object.keys(document.operations)).toHaveLength(events.length);
    for (const event of events) {
      const channel = document.channels[event.routingKey];
      expect(channel.address).toBe(event.routingKey);
      expect(channel.bindings.amqp).toEqual({
        is: 'routingKey',
        exchange: {
          name: 'property-sales.events',
          type: 'topic',
          durable: true,
          autoDelete: false,
          vhost: '/',
        },
        bindingVersion: '0.3.0',
      });
      const [name, message] = messageOf(document, channel);
      const model = wireModelOf(event.payload);
      // Named after its payload's schema, or after its routing key where other kinds carry the same
      // payload (a record's created and updated events).
      const carriers = events.filter((other) => other.payload === event.payload).length;
      expect(name).toBe(
        carriers === 1
          ? model.schemaName
          : event.routingKey.replace(/(?:^|[.-])([a-z])/g, (_, letter: string) =>
              letter.toUpperCase(),
            ),
      );
      expect(message).toMatchObject({
        contentType: CLOUD_EVENT_MEDIA_TYPE,
        summary: event.summary,
        description: event.description,
        bindings: { amqp: { messageType: event.type } },
      });
      expect(message.payload.properties.type.const).toBe(event.type);
      expect((message.payload.required as string[]).includes('subject')).toBe(
        event.subject !== undefined && !event.subjectMayBeAbsent,
      );
      expect(message.payload.properties.data).toEqual({
        $ref: `#/components/schemas/${model.schemaName}`,
      });
      // dataschema names that schema in this document, at the address consumers read it from.
      expect(message.examples[0].payload.dataschema).toBe(
        `http://localhost:3000${ASYNCAPI_PATH}#/components/schemas/${model.schemaName}`,
      );
      // The data's members as the wire model declares them, in its order, each always written.
      const data = document.components.schemas[model.schemaName] as Json;
      const members = model.members.map((member) => member.name);
      expect(Object.keys(data.properties as Json)).toEqual(members);
      expect(data.required).toEqual(members);
      // JSON Schema, not OpenAPI's dialect (Ajv would read `nullable` as OpenAPI does).
      expect(JSON.stringify(document.components.schemas)).not.toMatch(/"(nullable|xml)":/);
      const operations = Object.values(document.operations as Record<string, Json>).filter(
        (operation) => operation.channel.$ref === `#/channels/${event.routingKey}`,
      );
      expect(operations).toEqual([
        expect.objectContaining({
          action: 'send',
          messages: [{ $ref: `#/channels/${event.routingKey}/messages/${name}` }],
        }),
      ]);
    }
  });

  it('keeps every kind of event released as it was released: its routing key, subject and data only grow (docs/integration-events.md#how-events-evolve)', async () => {
    const published = JSON.parse(
      await readFile(join(ROOT, 'test', 'published-events.json'), 'utf8'),
    ) as Record<string, PublishedKind>;
    const kinds = publishedKinds(document);
    for (const [type, was] of Object.entries(published)) {
      const now = kinds[type];
      // A kind leaves the file only once its successor's deprecation period is over.
      expect({ type, described: now !== undefined }).toEqual({ type, described: true });
      expect({ type, routingKey: now.routingKey, subject: now.subject }).toEqual({
        type,
        routingKey: was.routingKey,
        subject: was.subject,
      });
      // An incompatible change is a new type beside this one, never a change of this one.
      expect({ type, breaking: breakingChanges(was.data, now.data, 'data') }).toEqual({
        type,
        breaking: [],
      });
    }
    // A kind not released yet (a module's new one) is free to change; it joins the file when a
    // release first publishes it. Its entry, as it stands, is printed here to be copied there.
    const unreleased = Object.entries(kinds).filter(([type]) => !(type in published));
    if (unreleased.length > 0)
      console.warn(
        `Kinds of event not in test/published-events.json (add each once a release publishes it):\n${JSON.stringify(Object.fromEntries(unreleased), null, 2)}`,
      );
  });

  it('tells apart what a consumer of a published kind would notice from what it would not', () => {
    const was: Json = {
      type: 'object',
      properties: {
        id: { type: 'integer' },
        line: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
      },
      required: ['id', 'line'],
    };
    const grown: Json = {
      type: 'object',
      properties: {
        id: { type: 'integer' },
        added: { type: 'string' },
        line: {
          type: 'object',
          properties: { a: { type: 'string' }, b: { type: 'string' } },
          required: ['a', 'b'],
        },
      },
      required: ['id', 'added', 'line'],
    };
    expect(breakingChanges(was, grown, 'data')).toEqual([]);
    expect(
      breakingChanges(
        was,
        {
          type: 'object',
          properties: {
            id: { type: ['integer', 'null'] },
            line: { type: 'object', properties: {}, required: [] },
          },
          required: ['line'],
        },
        'data',
      ),
    ).toEqual([
      'data.id: type was "integer", is ["integer","null"]',
      'data.line.a was removed',
      'data.line.a is no longer always written',
      'data.id is no longer always written',
    ]);
  });

  it('gives each message an example, valid against its schema and as a CloudEvent', () => {
    const validators = payloadValidators(document);
    for (const [name, message] of Object.entries(messagesOf(document))) {
      const examples = message.examples as { payload: Json }[];
      expect(examples.length).toBeGreaterThan(0);
      for (const { payload } of examples) {
        expect(violations(validators.get(name)!, payload)).toEqual([]);
        expect(() => new CloudEvent(payload)).not.toThrow();
      }
    }
  });

  it.each([
    ['behind the API key when SWAGGER is protected', 'protected', 401],
    ['not at all when SWAGGER is off', 'off', 404],
  ])('is served as the OpenAPI document is: %s', async (_, swagger, status) => {
    const service = await RunningApp.start(
      'sqlite::memory:',
      {
        SWAGGER: swagger,
        AUTH_MODE: 'apikey',
        AUTH_API_KEYS: apiKeysVariable({ gateway: API_KEY }),
      },
      [],
      { reactor: false },
    );
    try {
      expect((await service.http.get(ASYNCAPI_PATH)).status).toBe(status);
      const withKey = await service.http.get(ASYNCAPI_PATH).set('X-Api-Key', API_KEY);
      expect(withKey.status).toBe(swagger === 'off' ? 404 : 200);
      if (swagger !== 'off') expect(withKey.body).toEqual(await committedDocument());
    } finally {
      await service.close();
    }
  });
});

for (const kind of testDatabaseKinds()) {
  describe(`Published events, against the AsyncAPI document [${kind}]`, () => {
    const exchange = uniqueExchange('asyncapi');
    let database: TestDatabase;
    let collector: EventCollector;
    let running: RunningApp;
    let document: Json;
    /** Where the service's consumers read its document: here, the service itself. */
    let schemaUrl: string;

    beforeAll(async () => {
      database = await createTestDatabase(kind);
      collector = await EventCollector.open(exchange);
      const port = await freePort();
      schemaUrl = `http://127.0.0.1:${port}${ASYNCAPI_PATH}`;
      const env: Environment = {
        EVENTS_URL: TEST_BROKER_URL,
        EVENTS_EXCHANGE: exchange,
        EVENTS_POLL_MS: '50',
        PORT: String(port),
        EVENTS_SCHEMA_URL: schemaUrl,
      };
      running = await RunningApp.start(database.url, env, [], { reactor: false });
      document = (await running.http.get(ASYNCAPI_PATH).expect(200)).body as Json;
    });

    afterAll(async () => {
      await running?.close();
      await collector?.close();
      await database?.drop();
    });

    it('names the broker of EVENTS_URL without its credentials, and the exchange of EVENTS_EXCHANGE', async () => {
      const committed = await committedDocument();
      const broker = new URL(TEST_BROKER_URL);
      expect(document.servers.broker).toMatchObject({
        host: `${broker.hostname}:${broker.port || 5672}`,
        protocol: 'amqp',
      });
      if (broker.password) expect(JSON.stringify(document)).not.toContain(broker.password);
      for (const channel of Object.values(document.channels as Record<string, Json>))
        expect(channel.bindings.amqp.exchange.name).toBe(exchange);
      // Nothing else depends on the configuration.
      const configured = JSON.parse(
        JSON.stringify(document)
          .replaceAll(exchange, 'property-sales.events')
          .replaceAll(schemaUrl, 'http://localhost:3000/asyncapi-json'),
      ) as Json;
      expect({ ...configured, servers: committed.servers }).toEqual(committed);
    });

    it('publishes an import and an UpdateAgents as CloudEvents that match their messages', async () => {
      await running.seed({ requirements: CATALOGUE, transactions: [transactionRecord(1)] });
      await running.http
        .post(UPDATE_AGENTS)
        .send({ transaction_id: 1, financetype: 'Cash', brokerid: 13, brokername: 'Ana Reyes' })
        .expect(204);
      // The events of these two writes, and whatever the service's other modules publish in
      // reaction, each checked against its message; every kind's example is checked above.
      const types = [DATA_IMPORTED.type, AGENTS_CHANGED.type];
      expect(
        await collector.until((deliveries) =>
          types.every((type) => deliveries.some(({ event }) => event.type === type)),
        ),
      ).toBe(true);

      const validators = payloadValidators(document);
      for (const { routingKey, properties, event } of collector.deliveries) {
        const channel = document.channels[routingKey] as Json | undefined;
        expect(channel).toBeDefined();
        const [name, message] = messageOf(document, channel!);
        expect(violations(validators.get(name)!, event)).toEqual([]);
        expect(() => new CloudEvent(event)).not.toThrow();
        // As the consumer's guide says, and the message's AMQP binding.
        expect(message.bindings.amqp.contentEncoding).toBe('utf-8');
        expect(properties).toMatchObject({
          contentEncoding: 'utf-8',
          exchange,
          messageId: event.id,
          type: message.bindings.amqp.messageType,
          contentType: message.contentType,
          durable: true,
          // The change's time, in whole seconds.
          timestamp: Math.floor(Date.parse(event.time as string) / 1000),
        });
      }
      // Each event's dataschema is the data schema of its message in the document served at
      // EVENTS_SCHEMA_URL, fetched from there: a JSON Pointer to the schema its data satisfies.
      const fetched = (await (await fetch(schemaUrl)).json()) as Json;
      const ajv = strictAjv();
      for (const { routingKey, event } of collector.deliveries) {
        const [, message] = messageOf(document, document.channels[routingKey] as Json);
        const [address, pointer] = String(event.dataschema).split('#');
        expect({ address, pointer: `#${pointer}` }).toEqual({
          address: schemaUrl,
          pointer: message.payload.properties.data.$ref,
        });
        const schema = pointedAt(fetched, pointer) as Json;
        expect(schema).toEqual(pointedAt(document, pointer));
        expect(violations(compiled(ajv, fetched, schema), event.data)).toEqual([]);
      }

      const changed = collector.deliveries.find(
        ({ routingKey }) => routingKey === 'transaction.agents-changed',
      );
      expect(changed?.event).toMatchObject({
        subject: '1',
        data: {
          transaction_id: 1,
          row_version: 2,
          changes: [
            { field: 'brokerid', before: 11, after: 13 },
            { field: 'brokername', before: 'Ramon Dela Cruz', after: 'Ana Reyes' },
          ],
        },
      });
    });
  });
}
