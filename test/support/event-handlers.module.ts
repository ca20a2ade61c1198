import { Injectable, Module } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { DataImportedDto, DATA_IMPORTED } from '../../src/data-import/import.events';
import { OnIntegrationEvent, type ReceivedEvent } from '../../src/events/event-handler.decorator';
import { AGENTS_CHANGED, type AgentsChangedDto } from '../../src/transaction/transaction.events';

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

const record = (handler: string, event: ReceivedEvent, manager: EntityManager) =>
  handlerCalls.push({
    handler,
    event,
    inTransaction: manager.queryRunner?.isTransactionActive ?? false,
  });

/** Records every agents change, as another module's read model would. */
@Injectable()
export class AuditTrail {
  @OnIntegrationEvent(AGENTS_CHANGED)
  record(event: ReceivedEvent<AgentsChangedDto>, manager: EntityManager): void {
    record('AuditTrail', event, manager);
  }
}

/** Fails while `flaky.failuresLeft` says so, as a handler whose downstream is away would. */
@Injectable()
export class FlakyNotifier {
  @OnIntegrationEvent(AGENTS_CHANGED)
  notify(event: ReceivedEvent<AgentsChangedDto>, manager: EntityManager): void {
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

/** A module of the kind the team adds: it reacts to the transaction module's events in process. */
@Module({ providers: [AuditTrail, FlakyNotifier, ImportWatcher] })
export class EventHandlersModule {}
