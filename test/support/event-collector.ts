import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type AsyncMessage, Connection, type Consumer } from 'rabbitmq-client';
import { AGENT_CHAIN_FIELDS } from '../../src/transaction/agent-chain';

/**
 * The RabbitMQ the event suites publish to and read from: TEST_BROKER_URL, or the local one. A run
 * without it fails, as one without MariaDB does (npm test starts one).
 */
export const TEST_BROKER_URL = process.env.TEST_BROKER_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/**
 * A topic exchange name no other test, and no other run, uses: `property-sales.test.<label>.` with
 * the process id and a random tail.
 */
export const uniqueExchange = (label: string) =>
  `property-sales.test.${label}.${process.pid}.${randomBytes(4).toString('hex')}`;

/** The body of a published event, parsed: a CloudEvent in structured mode. */
export interface PublishedEvent {
  /** Its other attributes (time, source, traceparent when the service traces, …). */
  readonly [attribute: string]: unknown;
  readonly id: string;
  readonly type: string;
  readonly subject?: string;
  readonly data?: Record<string, unknown>;
}

/**
 * Checks that an AgentsChanged event's data carries the whole agent chain as GetTransaction answered
 * it after the change: each of the fourteen members present, with the same value.
 */
export function expectAgentChainAsRead(data: unknown, transaction: Record<string, unknown>): void {
  const chain = Object.fromEntries(AGENT_CHAIN_FIELDS.map((field) => [field, transaction[field]]));
  expect(Object.values(chain)).not.toContain(undefined);
  expect(data).toMatchObject(chain);
}

/** One message the exchange routed to the collector's queue. */
export interface Delivery {
  readonly routingKey: string;
  /** The message as received, with its AMQP properties (messageId, type, contentType, …). */
  readonly properties: AsyncMessage;
  /** The body as published, parsed. */
  readonly event: PublishedEvent;
  /** When it arrived (Date.now()). */
  readonly at: number;
}

/** The message's body as text, however the client handed it over. */
function bodyText({ body }: { body: unknown }): string {
  if (Buffer.isBuffer(body)) return body.toString('utf8');
  return typeof body === 'string' ? body : JSON.stringify(body);
}

/**
 * Declares the exchange (topic, durable, as the service declares it: the two declarations must
 * agree), binds an exclusive queue of its own to it with `#`, and keeps every message it receives.
 * `close` deletes the queue and the exchange.
 */
export class EventCollector {
  readonly deliveries: Delivery[] = [];
  private consumer?: Consumer;

  private constructor(
    /** The collector's connection, for whatever else a test asks of the broker. */
    readonly connection: Connection,
    readonly exchange: string,
    readonly queue: string,
  ) {}

  /** Opens a collector on `exchange`: resolves once its queue is bound and consumed. */
  static async open(exchange: string): Promise<EventCollector> {
    const connection = new Connection({ url: TEST_BROKER_URL, connectionTimeout: 5000 });
    connection.on('error', () => undefined);
    try {
      await connection.onConnect(10_000, true);
    } catch (error) {
      await connection.close();
      throw new Error(
        `No RabbitMQ at ${new URL(TEST_BROKER_URL).host} (TEST_BROKER_URL): these tests need one. ${(error as Error).message}`,
        { cause: error },
      );
    }
    const collector = new EventCollector(connection, exchange, `${exchange}.collector`);
    const { queue } = collector;
    const consumer = connection.createConsumer(
      {
        queue,
        noAck: true,
        queueOptions: { exclusive: true, autoDelete: true },
        exchanges: [{ exchange, type: 'topic', durable: true }],
        queueBindings: [{ queue, exchange, routingKey: '#' }],
      },
      (message) => {
        collector.deliveries.push({
          routingKey: message.routingKey,
          properties: message,
          event: JSON.parse(bodyText(message)) as PublishedEvent,
          at: Date.now(),
        });
      },
    );
    collector.consumer = consumer;
    consumer.on('error', () => undefined);
    await new Promise<void>((resolve) => consumer.once('ready', resolve));
    return collector;
  }

  /** The deliveries of events of `type` received so far. */
  ofType(type: string): Delivery[] {
    return this.deliveries.filter(({ event }) => event.type === type);
  }

  /** Waits until `done` holds of the deliveries, for at most `ms`; whether it did. */
  async until(done: (deliveries: readonly Delivery[]) => boolean, ms = 10_000): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!done(this.deliveries)) {
      if (Date.now() > deadline) return false;
      await sleep(25);
    }
    return true;
  }

  /**
   * Stops consuming, deletes its queue, the exchange and any of `queues` (a test's own, bound to the
   * exchange), and closes the connection.
   */
  async close(...queues: string[]): Promise<void> {
    try {
      await this.consumer?.close();
      for (const queue of [this.queue, ...queues]) await this.connection.queueDelete({ queue });
      await this.connection.exchangeDelete({ exchange: this.exchange });
    } finally {
      await this.connection.close();
    }
  }
}
