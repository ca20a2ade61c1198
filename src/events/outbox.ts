import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { context, propagation } from '@opentelemetry/api';
import { randomUUID } from 'node:crypto';
import { DataSource, type EntityManager } from 'typeorm';
import { type ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { type Write } from '../common/statement';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { formatWireDate } from '../wire';
import { cloudEventJson } from './cloud-event';
import { EventCheckpointEntity, OutboxEventEntity } from './entities';
import { type EventHandlerMethod, type ReceivedEvent } from './event-handler.decorator';
import { type IntegrationEvent, type IntegrationEventType } from './integration-event';

/** The checkpoint row that holds the last position given: not a consumer. */
export const POSITIONS = '~positions';

/**
 * How deep in-transaction handlers may publish events that other in-transaction handlers hear: past
 * this, they publish in a cycle, and the change is refused rather than run forever.
 */
const MAX_CASCADE = 8;

/** Rows one INSERT of a managed unit stores: 4 parameters each, far below any statement's bound. */
const INSERT_ROWS = 250;

/** The trace context of the active span (W3C `traceparent`), when tracing is on. */
function activeTraceparent(): string | undefined {
  const carrier: { traceparent?: string } = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** An event of a unit of work given its CloudEvents id: what its handlers and consumers all see. */
export interface PreparedEvent {
  readonly event: IntegrationEvent;
  readonly id: string;
  readonly traceparent?: string;
}

/**
 * The lowest position a module's consumers of the outbox hold the purge at: the events past it stay.
 * Undefined holds nothing.
 */
export type PurgeHolders = (manager: EntityManager) => Promise<number | undefined>;

/** The handlers of one kind of event that run inside the publishing change's transaction. */
type InTransactionHandler = EventHandlerMethod<object>;

/** Every kind of event is stored: something takes them all (a broker, the feed). */
const EVERY_KIND = 'every';

/**
 * Where units of work hand the events of the changes they commit, in the same transaction: each is
 * given its id, heard by the in-transaction handlers of its kind (which may write and publish with the
 * change), and stored in the outbox, so that it exists exactly when its change committed. It stores
 * what something consumes after commit: every event for a broker (EVENTS_URL), the event feed
 * (EVENTS_FEED) or webhooks (WEBHOOKS), only the kinds they hear for after-commit handlers alone; an
 * event nothing consumes is not written and costs nothing. Modules never call it: they hand their
 * events to the unit of work they commit with.
 */
@Injectable()
export class Outbox {
  /** The routing keys of the kinds stored, or every kind. */
  private stored: ReadonlySet<string> | typeof EVERY_KIND;
  private readonly listeners = new Set<(routingKeys: ReadonlySet<string>) => void>();
  private readonly purgeHolders: PurgeHolders[] = [];
  private readonly inTransaction = new Map<string, InTransactionHandler[]>();
  private readonly insertSql: string;
  /** The INSERT of a managed unit, without its rows' placeholders. */
  private readonly insertManySql: string;
  private readonly timeColumn: ColumnMetadata;
  private readonly source: string;
  private readonly schemaUrl: string;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    const everyKind = config.events.url !== undefined || config.events.feed || config.webhooks.on;
    this.stored = everyKind ? EVERY_KIND : new Set();
    this.source = config.events.source;
    this.schemaUrl = config.events.schemaUrl;
    const escape = (name: string) => dataSource.driver.escape(name);
    const metadata = dataSource.getMetadata(OutboxEventEntity);
    const columns = ['event_id', 'routing_key', 'time', 'body'].map((property) =>
      metadata.findColumnWithPropertyName(property)!,
    );
    this.timeColumn = columns[2];
    const placeholders = columns.map(() => '?').join(', ');
    const into = `INSERT INTO ${escape(metadata.tableName)} (${columns
      .map((column) => escape(column.databaseName))
      .join(', ')})`;
    // A managed unit checks, before its COMMIT, that its transaction is still open.
    this.insertManySql = `${into} VALUES `;
    // On MariaDB a row written outside its transaction (a Galera node ended it under the batch) is
    // never written: the unit is run again.
    this.insertSql = `${into} ${
      dataSource.options.type === 'mariadb'
        ? `SELECT ${placeholders} FROM DUAL WHERE @@in_transaction = 1`
        : `VALUES (${placeholders})`
    }`;
  }

  /**
   * Stores the events of `kinds` (routing keys) from now on, or every event without them: a consumer
   * of those is there.
   */
  enable(kinds?: readonly string[]): void {
    if (kinds === undefined) this.stored = EVERY_KIND;
    else if (this.stored !== EVERY_KIND) this.stored = new Set([...this.stored, ...kinds]);
  }

  /**
   * For a command (the import), which loads no handler: turns it on when the service's consumers have
   * checkpoints, so the service's after-commit handlers hear of the command's changes too.
   */
  async enableIfConsumed(): Promise<void> {
    if (this.stored === EVERY_KIND) return;
    const checkpoints = this.dataSource.getMetadata(EventCheckpointEntity);
    const [row] = await this.dataSource.query<{ consumer: string }[]>(
      `SELECT consumer FROM ${this.dataSource.driver.escape(checkpoints.tableName)} WHERE consumer <> ? LIMIT 1`,
      [POSITIONS],
    );
    if (row) this.enable();
  }

  /**
   * Registers consumers of the outbox that are not the relay's (a module's own, such as webhook
   * subscriptions, whose number changes at run time): the position `holders` gives, read in the
   * purge's transaction, holds the events past it back from the purge as the relay's consumers'
   * checkpoints do.
   */
  holdPurge(holders: PurgeHolders): void {
    this.purgeHolders.push(holders);
  }

  /** Whether a module holds events back from the purge: then the purge runs. */
  get purgeHeld(): boolean {
    return this.purgeHolders.length > 0;
  }

  /** The lowest position the modules' consumers hold the purge at, in the purge's transaction. */
  async heldPosition(manager: EntityManager): Promise<number | undefined> {
    let held: number | undefined;
    for (const holders of this.purgeHolders) {
      const position = await holders(manager);
      if (position !== undefined && (held === undefined || position < held)) held = position;
    }
    return held;
  }

  /** Registers a handler run inside the transaction of each change that publishes `type`. */
  handleInTransaction(type: IntegrationEventType, handler: InTransactionHandler): void {
    const handlers = this.inTransaction.get(type.type) ?? [];
    this.inTransaction.set(type.type, [...handlers, handler]);
  }

  /** Whether an in-transaction handler hears any of `events`. */
  heardInTransaction(events: readonly IntegrationEvent[]): boolean {
    return (
      this.inTransaction.size > 0 && events.some((event) => this.inTransaction.has(event.type.type))
    );
  }

  /** Calls `listener` after each commit that stored events, with their routing keys; returns what stops it. */
  onCommitted(listener: (routingKeys: ReadonlySet<string>) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Gives each event its id, as it will be stored and delivered. */
  prepare(events: readonly IntegrationEvent[]): PreparedEvent[] {
    if (events.length === 0) return [];
    const traceparent = activeTraceparent();
    return events.map((event) => ({ event, id: randomUUID(), traceparent }));
  }

  /**
   * Prepares `events` and has the in-transaction handlers of each hear it, in the transaction
   * `manager` runs; what they publish is prepared and heard in turn, after the events before it.
   * Resolves with every event the unit commits.
   */
  async settle(
    manager: EntityManager,
    events: readonly IntegrationEvent[],
  ): Promise<PreparedEvent[]> {
    const settled: PreparedEvent[] = [];
    const queue = this.prepare(events).map((prepared) => ({ prepared, depth: 0 }));
    for (let next = queue.shift(); next; next = queue.shift()) {
      const { prepared, depth } = next;
      settled.push(prepared);
      for (const handler of this.inTransaction.get(prepared.event.type.type) ?? []) {
        const published: IntegrationEvent[] = [];
        await handler(this.received(prepared), manager, (event) => {
          published.push(event);
        });
        if (published.length > 0 && depth + 1 > MAX_CASCADE)
          throw new Error(
            `In-transaction handlers published events that they hear again, ${MAX_CASCADE} deep: a cycle (${prepared.event.type.type}).`,
          );
        queue.push(
          ...this.prepare(published).map((event) => ({ prepared: event, depth: depth + 1 })),
        );
      }
    }
    return settled;
  }

  /** The event as an in-transaction handler hears it: its data as the publisher gave it. */
  private received({ event, id, traceparent }: PreparedEvent): ReceivedEvent {
    return {
      id,
      type: event.type.type,
      source: this.source,
      ...(event.subject !== undefined && { subject: event.subject }),
      time: formatWireDate(event.time),
      ...(traceparent && { traceparent }),
      data: event.data,
    };
  }

  /** The writes that store those of `events` something consumes, in a statement unit. */
  writes(events: readonly PreparedEvent[]): Write[] {
    return this.consumed(events).map(({ event, id, traceparent }) => ({
      sql: this.insertSql,
      parameters: [
        id,
        event.type.routingKey,
        this.dataSource.driver.preparePersistentValue(event.time, this.timeColumn),
        cloudEventJson(event, { id, source: this.source, schemaUrl: this.schemaUrl, traceparent }),
      ],
      rows: 1,
    }));
  }

  /**
   * Stores those of `events` something consumes in the transaction `manager` runs, many rows a
   * statement; how many it stored.
   */
  async insert(manager: EntityManager, events: readonly PreparedEvent[]): Promise<number> {
    const writes = this.writes(events);
    for (let at = 0; at < writes.length; at += INSERT_ROWS) {
      const rows = writes.slice(at, at + INSERT_ROWS);
      await manager.query(
        `${this.insertManySql}${rows.map(() => '(?, ?, ?, ?)').join(', ')}`,
        rows.flatMap((row) => row.parameters),
      );
    }
    return writes.length;
  }

  /** Tells the relay that those of `events` it stored committed. */
  committed(events: readonly PreparedEvent[]): void {
    const stored = this.consumed(events);
    if (stored.length === 0) return;
    const routingKeys = new Set(stored.map(({ event }) => event.type.routingKey));
    for (const listener of this.listeners) listener(routingKeys);
  }

  /** Those of `events` that something consumes after commit. */
  private consumed(events: readonly PreparedEvent[]): readonly PreparedEvent[] {
    const stored = this.stored;
    return stored === EVERY_KIND
      ? events
      : events.filter(({ event }) => stored.has(event.type.routingKey));
  }
}
