import { Injectable, Module, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource, type EntityManager } from 'typeorm';
import { DomainError } from '../../src/common/domain-error';
import { DATA_IMPORTED, type DataImportedDto } from '../../src/data-import';
import { BatchedReaction, type ReactionBatch } from '../../src/events/batched-reaction';
import { OnIntegrationEvent, type ReceivedEvent } from '../../src/events/event-handler.decorator';
import { declareIntegrationEvent, type Publish } from '../../src/events/integration-event';
import { Publishes } from '../../src/events/module-events';
import {
  AGENTS_CHANGED,
  type AgentsChangedDto,
  TransactionModule,
  TransactionQueries,
} from '../../src/transaction';
import { IntField, TextField, WireRecord } from '../../src/wire';

/** One call of a handler, as it received its event. */
export interface HandlerCall {
  readonly handler: string;
  readonly event: ReceivedEvent;
  /** Whether its manager ran inside a transaction (the one that moves the checkpoint). */
  readonly inTransaction: boolean;
}

/** What the handlers of this module saw, across restarts of the service in one test process. */
export const handlerCalls: HandlerCall[] = [];

/** How many more times FlakyNotifier fails before it handles an event. */
export const flaky = { failuresLeft: 0 };

/** How long SlowRecount takes a key. */
export const slowRecount = { msPerKey: 0 };

const record = (handler: string, event: ReceivedEvent, manager: EntityManager) =>
  handlerCalls.push({
    handler,
    event,
    inTransaction: manager.queryRunner?.isTransactionActive ?? false,
  });

@WireRecord({ name: 'NotificationSent' })
export class NotificationSentDto {
  @IntField() transaction_id?: number | null;
  @TextField() text?: string | null;
}

/** What FlakyNotifier publishes once it has notified: in its step, never for a failed one. */
export const NOTIFICATION_SENT = declareIntegrationEvent({
  type: 'property-sales.test.notification-sent',
  routingKey: 'test.notification-sent',
  payload: NotificationSentDto,
  summary: 'A notification was sent.',
  description: 'FlakyNotifier sent one.',
  example: { transaction_id: 1, text: 'Agents changed.' },
});

/** A broker no transaction may name: the in-transaction guard refuses the change. */
export const BARRED_BROKER = 666;

export class BrokerBarredError extends DomainError {
  static readonly status = 422;
  static readonly description = 'The broker is barred.';
  readonly code = 'broker_barred';
  readonly title = 'Broker barred';
  constructor(brokerid: number) {
    super(`The broker ${brokerid} is barred.`);
  }
}

/** Records every agents change, as another module's read model would. */
@Injectable()
export class AuditTrail {
  @OnIntegrationEvent(AGENTS_CHANGED)
  record(event: ReceivedEvent<AgentsChangedDto>, manager: EntityManager): void {
    record('AuditTrail', event, manager);
  }
}

/**
 * Fails while `flaky.failuresLeft` says so, as a handler whose downstream is away would; publishes
 * its notification before it fails, so that a failed step is seen to publish nothing.
 */
@Injectable()
export class FlakyNotifier {
  @OnIntegrationEvent(AGENTS_CHANGED)
  notify(event: ReceivedEvent<AgentsChangedDto>, manager: EntityManager, publish: Publish): void {
    publish({
      type: NOTIFICATION_SENT,
      subject: event.subject,
      time: new Date(),
      data: { transaction_id: event.data.transaction_id, text: 'Agents changed.' },
    });
    if (flaky.failuresLeft > 0) {
      flaky.failuresLeft--;
      throw new Error('The notification service is away.');
    }
    record('FlakyNotifier', event, manager);
  }
}

/** Reacts to import runs. */
@Injectable()
export class ImportWatcher {
  @OnIntegrationEvent(DATA_IMPORTED)
  async imported(event: ReceivedEvent<DataImportedDto>, manager: EntityManager): Promise<void> {
    // A read through the handler's transaction, as a handler that writes would use it.
    await manager.query('SELECT 1');
    record('ImportWatcher', event, manager);
  }
}

/**
 * Runs inside each change's own transaction: logs what it heard in a table of its own (committed with
 * the change, or not at all), refuses a barred broker (the change rolls back), and reads an imported
 * transaction through the transaction module's door, seeing the import's uncommitted rows.
 */
@Injectable()
export class ChainGuard {
  constructor(private readonly transactions: TransactionQueries) {}

  @OnIntegrationEvent(AGENTS_CHANGED, { phase: 'in-transaction' })
  async agentsChanging(event: ReceivedEvent<AgentsChangedDto>, manager: EntityManager) {
    if (event.data.brokerid === BARRED_BROKER) throw new BrokerBarredError(BARRED_BROKER);
    record('ChainGuard', event, manager);
    await manager.query('INSERT INTO chain_guard_log (transaction_id, row_version) VALUES (?, ?)', [
      event.data.transaction_id,
      event.data.row_version,
    ]);
  }

  @OnIntegrationEvent(DATA_IMPORTED, { phase: 'in-transaction' })
  async importing(event: ReceivedEvent<DataImportedDto>, manager: EntityManager) {
    const first = event.data.transaction_id_from;
    if (first == null) return;
    const chain = await this.transactions.agentChainOf(first);
    record(
      'ChainGuard',
      { ...event, data: { ...event.data, first_broker: chain?.brokerid } },
      manager,
    );
  }
}

/**
 * A reaction whose keys take `slowRecount.msPerKey` each: the runner must shrink its batches until
 * each commits well within DATABASE_TIMEOUT_MS.
 */
@Injectable()
export class SlowRecount {
  constructor(private readonly transactions: TransactionQueries) {}

  /** Logs each batch it did (committed with it): its first and last key, its size and its time. */
  @BatchedReaction({ batchSize: 400 })
  async recount({ after, limit, manager }: ReactionBatch): Promise<number | undefined> {
    const started = performance.now();
    const ids = await this.transactions.idsAfter(after, limit);
    if (ids.length === 0) return undefined;
    await sleep(ids.length * slowRecount.msPerKey);
    await manager.query(
      'INSERT INTO slow_recount_log (first_id, last_id, keys_done, ms) VALUES (?, ?, ?, ?)',
      [ids[0], ids.at(-1), ids.length, Math.ceil(performance.now() - started)],
    );
    return ids.length < limit ? undefined : ids.at(-1);
  }
}

/** A module of the kind the team adds: it reacts to the transaction module's events in process. */
@Publishes(NOTIFICATION_SENT)
@Module({
  imports: [TransactionModule],
  providers: [AuditTrail, FlakyNotifier, ImportWatcher, ChainGuard, SlowRecount],
})
export class EventHandlersModule implements OnModuleInit {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async onModuleInit(): Promise<void> {
    // A module's own tables come from its migrations; this test module's from its start.
    await this.dataSource.query(
      'CREATE TABLE IF NOT EXISTS chain_guard_log (transaction_id INT NOT NULL, row_version INT NOT NULL)',
    );
    await this.dataSource.query(
      'CREATE TABLE IF NOT EXISTS slow_recount_log (first_id INT NOT NULL, last_id INT NOT NULL, keys_done INT NOT NULL, ms INT NOT NULL)',
    );
  }
}

/** A reaction that back-fills: it logs each batch it did (committed with it). */
@Injectable()
export class TransactionTally {
  constructor(private readonly transactions: TransactionQueries) {}

  @BatchedReaction({ batchSize: 250, backfill: true })
  async backfill({ after, limit, manager }: ReactionBatch): Promise<number | undefined> {
    const ids = await this.transactions.idsAfter(after, limit);
    if (ids.length === 0) return undefined;
    await manager.query('INSERT INTO tally_log (first_id, last_id, keys_done) VALUES (?, ?, ?)', [
      ids[0],
      ids.at(-1),
      ids.length,
    ]);
    return ids.length < limit ? undefined : ids.at(-1);
  }
}

/** A module deployed on a database that has transactions already: it back-fills them. */
@Module({ imports: [TransactionModule], providers: [TransactionTally] })
export class TallyModule implements OnModuleInit {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async onModuleInit(): Promise<void> {
    await this.dataSource.query(
      'CREATE TABLE IF NOT EXISTS tally_log (first_id INT NOT NULL, last_id INT NOT NULL, keys_done INT NOT NULL)',
    );
  }
}
