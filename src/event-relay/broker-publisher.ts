import { Logger } from '@nestjs/common';
import { Connection, type Publisher } from 'rabbitmq-client';
import { CLOUD_EVENT_MEDIA_TYPE } from '../events/cloud-event';
import { declaredIntegrationEvents } from '../events/integration-event';
import { type StoredEvent } from './outbox-store';

/** The broker's address without its credentials, for the log. */
function brokerLabel(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}

/** Fails with `message` once `ms` have passed, unless `work` settled first. */
async function within<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Publishes to the broker's topic exchange with publisher confirms, through rabbitmq-client: it
 * reconnects by itself (every 250 ms to 5 s while the broker is away) and declares the exchange again
 * on every connection. Whether the broker is up, and each change of it, is logged once.
 */
export class BrokerPublisher {
  private readonly logger = new Logger('EventRelay');
  private readonly connection: Connection;
  private readonly publisher: Publisher;
  private readonly label: string;
  /** The CloudEvents type of each routing key, for the AMQP `type` property. */
  private readonly types = new Map(
    declaredIntegrationEvents().map((event) => [event.routingKey, event.type]),
  );
  private down = false;

  /** `unroutable`: told of each event the exchange had no queue for (the broker dropped it). */
  constructor(
    url: string,
    private readonly exchange: string,
    unroutable: () => void,
  ) {
    this.label = brokerLabel(url);
    this.connection = new Connection({
      url,
      connectionName: 'property-sales-service event relay',
      retryLow: 250,
      retryHigh: 5000,
      connectionTimeout: 5000,
      // A broker that stops answering is found out within 10 s.
      heartbeat: 10,
    });
    this.connection.on('error', (error: Error) => this.lost(error));
    this.connection.on('connection', () => {
      if (this.down) this.logger.log(`The broker ${this.label} is reachable again.`);
      else this.logger.log(`Publishing events to the exchange ${exchange} at ${this.label}.`);
      this.down = false;
    });
    this.publisher = this.connection.createPublisher({
      confirm: true,
      onReturn: unroutable,
      exchanges: [{ exchange, type: 'topic', durable: true }],
    });
  }

  /** Whether a connection to the broker is open now. */
  get ready(): boolean {
    return this.connection.ready;
  }

  /** Waits until a connection is open, for at most `ms`; whether one is. */
  async connected(ms: number): Promise<boolean> {
    if (this.connection.ready) return true;
    return this.connection.onConnect(ms, true).then(
      () => true,
      () => false,
    );
  }

  /**
   * Publishes `events` (persistent, each with its CloudEvents id as the AMQP message id) and waits
   * for the broker to confirm every one, for at most `ms`; fails unless all were confirmed.
   */
  async publish(events: readonly StoredEvent[], ms: number): Promise<void> {
    try {
      await within(
        Promise.all(
          events.map((event) =>
            this.publisher.send(
              {
                exchange: this.exchange,
                routingKey: event.routingKey,
                messageId: event.id,
                type: this.types.get(event.routingKey),
                contentType: CLOUD_EVENT_MEDIA_TYPE,
                timestamp: Math.floor(event.time.getTime() / 1000),
                durable: true,
                // Returned, and counted, when no queue is bound for it: the broker confirms it anyway.
                mandatory: true,
                appId: 'property-sales-service',
              },
              Buffer.from(event.body),
            ),
          ),
        ),
        ms,
        `The broker did not confirm ${events.length} event(s) within ${ms} ms.`,
      );
    } catch (error) {
      this.lost(error as Error);
      throw error;
    }
  }

  /** Logs the broker as unreachable, once until it is reachable again. */
  lost(error: Error): void {
    if (this.down) return;
    this.down = true;
    this.logger.warn(
      `The broker ${this.label} is unreachable (${error.message}); events wait in the outbox and are published once it is back.`,
    );
  }

  async close(): Promise<void> {
    await this.publisher.close().catch(() => undefined);
    await this.connection.close().catch(() => undefined);
  }
}
