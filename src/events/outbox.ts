import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { context, propagation } from '@opentelemetry/api';
import { randomUUID } from 'node:crypto';
import { DataSource, type EntityManager } from 'typeorm';
import { type ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { type Write } from '../common/statement';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { cloudEventJson } from './cloud-event';
import { EventCheckpointEntity, OutboxEventEntity } from './entities';
import { type IntegrationEvent } from './integration-event';

/** The checkpoint row that holds the last position given: not a consumer. */
export const POSITIONS = '~positions';

/** The trace context of the active span (W3C `traceparent`), when tracing is on. */
function activeTraceparent(): string | undefined {
  const carrier: { traceparent?: string } = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/**
 * Where units of work write the events of the changes they commit, in the same transaction: an event
 * exists exactly when its change committed. It is on when the service publishes to a broker
 * (EVENTS_URL) or a module handles events in process; off, it writes nothing and costs nothing.
 * Modules never call it: they hand their events to the unit of work they commit with.
 */
@Injectable()
export class Outbox {
  private active: boolean;
  private readonly listeners = new Set<() => void>();
  private readonly insertSql: string;
  private readonly timeColumn: ColumnMetadata;
  private readonly source: string;
  private readonly schemaUrl: string;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.active = config.events.url !== undefined;
    this.source = config.events.source;
    this.schemaUrl = config.events.schemaUrl;
    const escape = (name: string) => dataSource.driver.escape(name);
    const metadata = dataSource.getMetadata(OutboxEventEntity);
    const columns = ['event_id', 'routing_key', 'time', 'body'].map((property) =>
      metadata.findColumnWithPropertyName(property)!,
    );
    this.timeColumn = columns[2];
    const placeholders = columns.map(() => '?').join(', ');
    // On MariaDB a row written outside its transaction (a Galera node ended it under the batch) is
    // never written: the unit is run again.
    this.insertSql = `INSERT INTO ${escape(metadata.tableName)} (${columns
      .map((column) => escape(column.databaseName))
      .join(', ')}) ${
      dataSource.options.type === 'mariadb'
        ? `SELECT ${placeholders} FROM DUAL WHERE @@in_transaction = 1`
        : `VALUES (${placeholders})`
    }`;
  }

  /** Whether units write their events: a broker or an in-process handler takes them. */
  get enabled(): boolean {
    return this.active;
  }

  /** Turns it on: a consumer of the events is there. */
  enable(): void {
    this.active = true;
  }

  /**
   * For a command (the import), which loads no handler: turns it on when the service's consumers have
   * checkpoints, so the service's in-process handlers hear of the command's changes too.
   */
  async enableIfConsumed(): Promise<void> {
    if (this.active) return;
    const checkpoints = this.dataSource.getMetadata(EventCheckpointEntity);
    const [row] = await this.dataSource.query<{ consumer: string }[]>(
      `SELECT consumer FROM ${this.dataSource.driver.escape(checkpoints.tableName)} WHERE consumer <> ? LIMIT 1`,
      [POSITIONS],
    );
    if (row) this.active = true;
  }

  /** Calls `listener` after each commit that wrote events; returns what stops it. */
  onCommitted(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The writes that store `events` in a statement unit; none when it is off. */
  writes(events: readonly IntegrationEvent[]): Write[] {
    if (!this.active || events.length === 0) return [];
    const traceparent = activeTraceparent();
    return events.map((event) => {
      const id = randomUUID();
      return {
        sql: this.insertSql,
        parameters: [
          id,
          event.type.routingKey,
          this.dataSource.driver.preparePersistentValue(event.time, this.timeColumn),
          cloudEventJson(event, {
            id,
            source: this.source,
            schemaUrl: this.schemaUrl,
            traceparent,
          }),
        ],
        rows: 1,
      };
    });
  }

  /** Stores `events` in the transaction `manager` runs; how many it stored (none when it is off). */
  async insert(manager: EntityManager, events: readonly IntegrationEvent[]): Promise<number> {
    const writes = this.writes(events);
    for (const { sql, parameters } of writes) await manager.query(sql, [...parameters]);
    return writes.length;
  }

  /** Tells the relay that events committed. */
  committed(): void {
    for (const listener of this.listeners) listener();
  }
}
