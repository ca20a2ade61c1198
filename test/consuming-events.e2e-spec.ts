import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CloudEvent } from 'cloudevents';
import type { SyncMessage } from 'rabbitmq-client';
import {
  EventCollector,
  expectAgentChainAsRead,
  TEST_BROKER_URL,
  uniqueExchange,
} from './support/event-collector';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import {
  compileCSharpExample,
  EXAMPLES_DIRECTORY,
  type ExampleCommand,
  ExampleProcess,
} from './support/example-process';
import { TemporaryDirectories } from './support/processes';
import { RunningApp } from './support/test-app';
import { createTestDatabase, type TestDatabase, testDatabaseKinds } from './support/test-database';

/**
 * The consumer examples of docs/consuming-events.md, in Node.js and in C# on Mono, each run as its
 * readers run it against the service publishing to a real RabbitMQ: each prints every event once,
 * skips a message delivered twice, after a stop finds the events committed meanwhile waiting in its
 * durable queue, and rejects what is not an event to its dead-letter queue. Each run declares its own
 * exchange and queues (an EventCollector declares the exchange and deletes them after). The broker is
 * TEST_BROKER_URL, or the local one; the C# example needs Mono and Debian's RabbitMQ.Client: a run
 * without any of them fails, as one without MariaDB does (npm test installs and starts them).
 */

const UPDATE = '/api/Transaction/UpdateAgents';
const AGENTS_CHANGED = 'property-sales.transaction.agents-changed';
const DATA_IMPORTED = 'property-sales.data.imported';

/** How an example is started on a queue. */
type Command = (queue: string) => ExampleCommand;

/** A consumer example of the docs, and how its readers make it runnable. */
interface Example {
  /** Its file in docs/examples. */
  readonly file: string;
  /** Makes it runnable, building what it needs in `directory`; how it is then started. */
  readonly prepare: (directory: string) => Promise<Command>;
}

const EXAMPLES: readonly Example[] = [
  {
    file: 'consume-events.mjs',
    prepare: () =>
      Promise.resolve((queue) => [
        process.execPath,
        [join(EXAMPLES_DIRECTORY, 'consume-events.mjs'), queue],
      ]),
  },
  {
    file: 'ConsumeEvents.cs',
    prepare: async (directory) => {
      const program = join(directory, 'ConsumeEvents.exe');
      await compileCSharpExample('ConsumeEvents.cs', program, {
        references: ['RabbitMQ.Client.dll', 'System.Json.dll', 'Mono.Posix.dll'],
        packages: 'mono-complete libmono-rabbitmq4.0-cil',
      });
      return (queue) => ['mono', [program, queue]];
    },
  },
];

/** An event as the example prints it: the CloudEvent as it was published. */
interface PrintedEvent {
  /** Extension attributes (traceparent, when the service traces). */
  readonly [attribute: string]: unknown;
  readonly specversion: string;
  readonly id: string;
  readonly source: string;
  readonly type: string;
  readonly subject?: string;
  readonly time: string;
  readonly datacontenttype: string;
  readonly data: Record<string, unknown>;
}

/** The consumer example running as a child process, started on `queue`; resolves once it consumes. */
const startConsumer = (command: Command, queue: string, env: Record<string, string>) =>
  ExampleProcess.start(command(queue), env, `Consuming ${queue}`);

/** Every event the example printed: one JSON line each. */
const eventsOf = (consumer: ExampleProcess) =>
  consumer.lines.map((line) => JSON.parse(line) as PrintedEvent);

const rowVersions = (events: readonly PrintedEvent[], subject: string) =>
  events
    .filter((event) => event.type === AGENTS_CHANGED && event.subject === subject)
    .map((event) => event.data.row_version);

const directories = new TemporaryDirectories('consuming-events');
afterAll(() => directories.removeAll());

for (const [example, kind] of EXAMPLES.flatMap((example) =>
  testDatabaseKinds().map((kind) => [example, kind] as const),
)) {
  describe(`the consumer example ${example.file} of docs/consuming-events.md [${kind}]`, () => {
    const exchange = uniqueExchange(`consuming-events.${kind}`);
    const queue = `${exchange}.example`;
    const deadLetters = `${queue}.dead-letters`;
    const handledFile = join(tmpdir(), `${exchange}.handled.txt`);
    const consumerEnv = {
      EVENTS_URL: TEST_BROKER_URL,
      EVENTS_EXCHANGE: exchange,
      EVENTS_HANDLED_FILE: handledFile,
    };
    /** The exchange's collector: its connection publishes again and counts what waits. */
    let broker: EventCollector;
    let command: Command;
    let database: TestDatabase;
    let running: RunningApp;
    let consumer: ExampleProcess | undefined;
    /** Every event either run of the example printed. */
    const printed: PrintedEvent[] = [];

    /** GetTransaction's answer after each change the suite made, by its ETag. */
    const readAfter = new Map<string, Record<string, unknown>>();
    /** Makes a change, and reads the transaction as it stands after it. */
    const update = async (body: { transaction_id: number; [member: string]: unknown }) => {
      await running.http
        .post(UPDATE)
        .send({ financetype: 'Cash', ...body })
        .expect(204);
      const read = await running.http
        .get(`/api/Transaction/GetTransaction/${body.transaction_id}`)
        .expect(200);
      readAfter.set(read.headers.etag, read.body as Record<string, unknown>);
    };
    /** Each AgentsChanged carries the chain GetTransaction answered after its change: no read-back. */
    const expectChainsAsRead = (events: readonly PrintedEvent[]) => {
      for (const { type, data } of events)
        if (type === AGENTS_CHANGED)
          expectAgentChainAsRead(data, readAfter.get(data.etag as string) ?? {});
    };
    /** Publishes `body` to the exchange as an AgentsChanged, with the message id. */
    const publish = async (body: string, messageId: string) => {
      const publisher = broker.connection.createPublisher({ confirm: true });
      try {
        await publisher.send(
          {
            exchange,
            routingKey: 'transaction.agents-changed',
            messageId,
            contentType: 'application/cloudevents+json',
            durable: true,
          },
          Buffer.from(body),
        );
      } finally {
        await publisher.close();
      }
    };
    /** Publishes `event` to the exchange as the relay does: the same body, the same message id. */
    const publishAgain = (event: PrintedEvent) => publish(JSON.stringify(event), event.id);
    /** How many messages wait in `name`. */
    const waiting = async (name: string) =>
      (await broker.connection.queueDeclare({ queue: name, passive: true })).messageCount;
    /** Takes every message waiting in `name`, in its order. */
    const takeAll = async (name: string) => {
      const messages: SyncMessage[] = [];
      for (;;) {
        const message = await broker.connection.basicGet({ queue: name, noAck: true });
        if (message === undefined) return messages;
        messages.push(message);
      }
    };

    beforeAll(async () => {
      command = await example.prepare(await directories.make());
      broker = await EventCollector.open(exchange);
      database = await createTestDatabase(kind);
      running = await RunningApp.start(database.url, {
        EVENTS_URL: TEST_BROKER_URL,
        EVENTS_EXCHANGE: exchange,
        EVENTS_POLL_MS: '50',
      });
    });

    afterAll(async () => {
      await consumer?.stop();
      await running?.close();
      await database?.drop();
      await broker?.connection.exchangeDelete({ exchange: deadLetters });
      await broker?.close(queue, deadLetters);
      await rm(handledFile, { force: true });
    });

    it('prints each event once, a transaction’s in the order they committed', async () => {
      // Bound before anything is published: an event published to an exchange with no queue for it
      // reaches nobody.
      consumer = await startConsumer(command, queue, consumerEnv);
      await running.seed({
        requirements: CATALOGUE,
        transactions: [transactionRecord(1), transactionRecord(2)],
      });
      await update({ transaction_id: 1, brokerid: 12 });
      await update({ transaction_id: 2, managerid: 33 });
      await update({ transaction_id: 1, brokerid: 13 });
      await update({ transaction_id: 1, salesagentid: 44, salesagentname: 'Ben Cruz' });
      await consumer.until(() => eventsOf(consumer!).length >= 5, 'to print five events');
      await sleep(200);
      const events = eventsOf(consumer);
      printed.push(...events);

      expect(events).toHaveLength(5);
      expect(new Set(events.map((event) => event.id)).size).toBe(5);
      for (const event of events) {
        expect(() => new CloudEvent(event, true)).not.toThrow();
        expect(event).toMatchObject({
          specversion: '1.0',
          source: 'urn:property-sales-service',
          datacontenttype: 'application/json',
        });
      }
      const imported = events.filter((event) => event.type === DATA_IMPORTED);
      expect(imported).toHaveLength(1);
      expect(imported[0].subject).toBeUndefined();
      expect(imported[0].data).toMatchObject({
        transactions_created: 2,
        transaction_id_from: 1,
        transaction_id_to: 2,
        requirement_types_created: 3,
      });
      expect(rowVersions(events, '1')).toEqual([2, 3, 4]);
      expect(rowVersions(events, '2')).toEqual([2]);
      const last = events.filter((event) => event.subject === '1').at(-1)!;
      const read = await running.http.get('/api/Transaction/GetTransaction/1').expect(200);
      expect(last.data).toMatchObject({
        transaction_id: 1,
        etag: read.headers.etag,
        changes: [
          { field: 'salesagentid', before: 41, after: 44 },
          { field: 'salesagentname', before: 'Angela Cruz', after: 'Ben Cruz' },
        ],
      });
      expectChainsAsRead(events);
      // The AMQP message id of every message was its event's id.
      expect(consumer.log).not.toContain('carries event');
      expect(consumer.log).not.toContain('Rejected');
    });

    it('skips a message delivered twice, and goes on', async () => {
      const duplicate = printed.find((event) => event.subject === '1')!;
      await publishAgain(duplicate);
      await consumer!.until(
        () => consumer!.log.includes(`Skipped event ${duplicate.id}: already handled`),
        'to skip the duplicate',
      );
      await update({ transaction_id: 2, managerid: 34 });
      await consumer!.until(() => eventsOf(consumer!).length >= 6, 'to print the next event');
      await sleep(200);
      const events = eventsOf(consumer!);
      printed.push(...events.slice(printed.length));

      expect(events).toHaveLength(6);
      expect(events.filter((event) => event.id === duplicate.id)).toHaveLength(1);
      expect(rowVersions(events, '2')).toEqual([2, 3]);
      expectChainsAsRead(events);
    });

    it('finds what was committed while it was stopped waiting in its queue, each event once', async () => {
      expect(await consumer!.stop()).toBe(0);
      expect(consumer!.log).toContain('Stopped.');
      await update({ transaction_id: 1, brokerid: 14 });
      await update({ transaction_id: 2, managerid: 35 });
      // Both published and waiting, with nobody consuming.
      const deadline = Date.now() + 10_000;
      let published = 0;
      while (Date.now() < deadline) {
        published = await waiting(queue);
        if (published >= 2) break;
        await sleep(50);
      }
      expect(published).toBeGreaterThanOrEqual(2);
      // A redelivery of an event the first run handled, behind them: the ids it kept in its file
      // tell the next run.
      const duplicate = printed.find((event) => event.subject === '2')!;
      await publishAgain(duplicate);

      consumer = await startConsumer(command, queue, consumerEnv);
      await consumer.until(
        () =>
          eventsOf(consumer!).length >= 2 &&
          consumer!.log.includes(`Skipped event ${duplicate.id}`),
        'to catch up',
      );
      await sleep(200);
      const events = eventsOf(consumer);

      expect(events).toHaveLength(2);
      expect(rowVersions(events, '1')).toEqual([5]);
      expect(rowVersions(events, '2')).toEqual([4]);
      expectChainsAsRead(events);
      printed.push(...events);
      const ids = printed.map((event) => event.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(await waiting(queue)).toBe(0);
    });

    it('rejects what is not an event to its dead-letter queue, once, and goes on', async () => {
      const poison = [
        { messageId: 'not-json', body: 'transaction 1 changed' },
        {
          messageId: 'no-id',
          body: JSON.stringify({ ...printed[0], id: undefined }),
        },
        // A reader that recurses once per level would overflow its stack.
        { messageId: 'nested', body: `${'['.repeat(100_000)}${']'.repeat(100_000)}` },
      ];
      for (const { messageId, body } of poison) await publish(body, messageId);
      await consumer!.until(
        () =>
          poison.every(({ messageId }) => consumer!.log.includes(`Rejected message ${messageId}`)),
        'to reject the three messages',
      );
      await update({ transaction_id: 1, brokerid: 15 });
      await consumer!.until(() => eventsOf(consumer!).length >= 3, 'to print the next event');
      await sleep(200);

      expect(eventsOf(consumer!)).toHaveLength(3);
      expect(rowVersions(eventsOf(consumer!), '1')).toEqual([5, 6]);
      expect(consumer!.log).toContain('Rejected message no-id: not a CloudEvent (id is missing).');
      // Each dead-lettered once, as published, saying why and from where; none left in the queue.
      expect(await waiting(queue)).toBe(0);
      expect(
        (await takeAll(deadLetters)).map((message) => ({
          messageId: message.messageId,
          body: (message.body as Buffer).toString('utf8'),
          death: (message.headers?.['x-death'] as Record<string, unknown>[])[0],
        })),
      ).toEqual(
        poison.map(({ messageId, body }) => ({
          messageId,
          body,
          death: expect.objectContaining({ reason: 'rejected', queue, exchange, count: 1 }),
        })),
      );
    });
  });
}
