import { Logger } from '@nestjs/common';
import { Connection, type Publisher } from 'rabbitmq-client';
import { CLOUD_EVENT_ENCODING, CLOUD_EVENT_MEDIA_TYPE } from '../events/cloud-event';
import { declaredIntegrationEvents } from '../events/integration-event';
import { type StoredEvent } from './outbox-store';

/** The broker's address without its credentials, for the log. */
function brokerLabel(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}

/** A publish the broker did not confirm in time. */
class UnconfirmedError extends Error {}

/** Fails with an UnconfirmedError once `ms` have passed, unless `work` settled first. */
async function within<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new UnconfirmedError(message)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A publish that failed at the broker (unreachable, unconfirmed or refused), as opposed to a failure
 * of the outbox's database around it. Carries no driver code, so the unit of work around a publish
 * never takes it for the database's.
 */
export class BrokerPublishError extends Error {}

/**
 * Where the broker stands for the relay:
 * - `connected`: a connection is open and the last publish, if any, was confirmed;
 * - `unreachable`: no connection (refused, cut, or no heartbeat from the broker);
 * - `unconfirmed`: a connection is open, but the broker did not confirm a publish in time;
 * - `refused`: a connection is open, and the broker refused a publish (a channel error, a nack).
 */
export type BrokerState = 'connecting' | 'connected' | 'unreachable' | 'unconfirmed' | 'refused';

/** What the publisher tells the relay's metrics. */
export interface BrokerSignals {
  /** Each event the broker returned: no queue was bound for its routing key. */
  unroutable(): void;
  /** The state changed: whether it is `connected` now (the broker takes events). */
  connected(connected: boolean): void;
}

/**
 * Publishes to the broker's topic exchange with publisher confirms, through rabbitmq-client: it
 * reconnects by itself (every 250 ms to 5 s while the broker is away) and declares the exchange again
 * on every connection. Each change of the broker's state is logged once.
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
  private current: BrokerState = 'connecting';

  constructor(
    url: string,
    private readonly exchange: string,
    private readonly signals: BrokerSignals,
  ) {
    this.label = brokerLabel(url);
    this.connection = new Connection({
      url,
      connectionName: 'property-sales-service event relay',
      retryLow: 250,
      retryHigh: 5000,
      connectionTimeout: 5000,
      // Every 5 s a heartbeat is due; a broker that stops answering is found out within 20 s.
      heartbeat: 10,
    });
    // Emitted once per lost connection, or per failed first attempt, not once per retry.
    this.connection.on('error', (error: Error) => this.become('unreachable', error.message));
    this.connection.on('connection', () => this.become('connected'));
    this.publisher = this.connection.createPublisher({
      confirm: true,
      exchanges: [{ exchange, type: 'topic', durable: true }],
    });
    // rabbitmq-client 5 declares `onReturn` among the publisher's options but never calls it; the
    // publisher emits every return of its channel, on whichever connection, as this event.
    this.publisher.on('basic.return', () => signals.unroutable());
  }

  /** Where the broker stands now. */
  get state(): BrokerState {
    return this.current;
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
   * for the broker to confirm every one, for at most `ms`; fails with a BrokerPublishError unless all
   * were confirmed.
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
                contentEncoding: CLOUD_EVENT_ENCODING,
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
        `The broker did not confirm ${events.length} event(s) within ${ms} ms`,
      );
    } catch (error) {
      const { message } = error as Error;
      if (!this.connection.ready) this.become('unreachable', message);
      else this.become(error instanceof UnconfirmedError ? 'unconfirmed' : 'refused', message);
      throw new BrokerPublishError(message, { cause: error });
    }
    this.become('connected');
  }

  /** Moves to `next`, saying so once, in the log and the metrics; the same state says nothing. */
  private become(next: BrokerState, reason = ''): void {
    const previous = this.current;
    if (next === previous) return;
    this.current = next;
    this.signals.connected(next === 'connected');
    const waiting = 'events wait in the outbox and are published once it';
    switch (next) {
      case 'connected':
        if (previous === 'connecting')
          this.logger.log(`Publishing events to the exchange ${this.exchange} at ${this.label}.`);
        else this.logger.log(`The broker ${this.label} is reachable again.`);
        break;
      case 'unreachable':
        this.logger.warn(
          `The broker ${this.label} is unreachable (${reason}); ${waiting} is back.`,
        );
        break;
      case 'unconfirmed':
        this.logger.warn(
          `The broker ${this.label} does not confirm what is published (${reason}); ${waiting} confirms again.`,
        );
        break;
      case 'refused':
        this.logger.warn(
          `The broker ${this.label} refuses the events (${reason}); ${waiting} takes them again.`,
        );
        break;
    }
  }

  async close(): Promise<void> {
    await this.publisher.close().catch(() => undefined);
    await this.connection.close().catch(() => undefined);
  }
}
