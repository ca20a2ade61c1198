import { SetMetadata } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type IntegrationEventType, type Publish } from './integration-event';

/** An event as a handler receives it: the CloudEvent its broker consumers receive, data bound. */
export interface ReceivedEvent<T extends object = object> {
  /** The CloudEvents id: the same for every delivery of the event, to the broker and in process. */
  readonly id: string;
  readonly type: string;
  readonly source: string;
  readonly subject?: string;
  /** When the change was made, in the service's date format. */
  readonly time: string;
  readonly traceparent?: string;
  /** Its data, read back through its wire model (dates are Dates, as the publisher's were). */
  readonly data: T;
}

/**
 * A handler of one kind of event. `manager` runs the transaction the handler's work commits in, and
 * `publish` hands that transaction the handler's own events: they are stored if, and only if, it
 * commits, as a request's are. After commit, that transaction is the step that moves the handler's
 * checkpoint past the event (what it writes commits once, or rolls back and is run again); in the
 * transaction, it is the publishing change's own. The unit of work's reads and writes, and the
 * queries of other modules' doors, run in that same transaction when called from the handler.
 */
export type EventHandlerMethod<T extends object> = (
  event: ReceivedEvent<T>,
  manager: EntityManager,
  publish: Publish,
) => Promise<void> | void;

/**
 * A handler of the events of one kind a step takes, in commit order, as one batch (up to 100): for a
 * reaction on a busy path, whose statements can then serve the whole batch (one read of the rows it
 * needs, one write) instead of one event each. What it writes and publishes commits with the step; a
 * batch that fails is rolled back, and the next steps hand it one event at a time, so that only the
 * failing event waits.
 */
export type EventBatchHandlerMethod<T extends object> = (
  events: readonly ReceivedEvent<T>[],
  manager: EntityManager,
  publish: Publish,
) => Promise<void> | void;

/**
 * When a handler runs:
 * - `after-commit` (the default): fed from the outbox once the change committed, in commit order,
 *   each event once, from a checkpoint of its own, in a transaction of its own. A failure is retried
 *   and holds up no request. For a reaction that may lag the change by a moment: a read model, a
 *   recomputation, a notification, anything another module owns.
 * - `in-transaction`: called inside the publishing change's own transaction, before it commits: what
 *   it writes commits with the change, and a handler that throws rolls the change back (the request
 *   answers the error). For a reaction that must never be seen apart from the change (an invariant
 *   across two modules' tables); it adds its time to the request's, and runs only where the change is
 *   made (in the service, not in the import command, which loads no module's handlers).
 */
export type EventHandlerPhase = 'after-commit' | 'in-transaction';

export interface EventHandlerOptions {
  readonly phase?: EventHandlerPhase;
}

/** What OnIntegrationEvent and OnIntegrationEventBatch record on a method. */
export interface EventHandlerMetadata {
  readonly type: IntegrationEventType;
  readonly phase: EventHandlerPhase;
  /** Whether it takes the events of a step as one batch. */
  readonly batch: boolean;
}

export const EVENT_HANDLER = Symbol('EVENT_HANDLER');

/**
 * Marks a provider's method as the in-process handler of one kind of event. After commit (the
 * default) its checkpoint is named by its class and method: renaming either starts it afresh from the
 * events committed after.
 */
export function OnIntegrationEvent<T extends object>(
  type: IntegrationEventType<T>,
  { phase = 'after-commit' }: EventHandlerOptions = {},
) {
  return <M extends EventHandlerMethod<T>>(
    target: object,
    key: string | symbol,
    descriptor: TypedPropertyDescriptor<M>,
  ): TypedPropertyDescriptor<M> => {
    SetMetadata(EVENT_HANDLER, { type, phase, batch: false } satisfies EventHandlerMetadata)(
      target,
      key,
      descriptor,
    );
    return descriptor;
  };
}

/**
 * Marks a provider's method as the after-commit handler of the events of one kind in batches
 * (EventBatchHandlerMethod); its checkpoint is named as OnIntegrationEvent's.
 */
export function OnIntegrationEventBatch<T extends object>(type: IntegrationEventType<T>) {
  return <M extends EventBatchHandlerMethod<T>>(
    target: object,
    key: string | symbol,
    descriptor: TypedPropertyDescriptor<M>,
  ): TypedPropertyDescriptor<M> => {
    SetMetadata(EVENT_HANDLER, {
      type,
      phase: 'after-commit',
      batch: true,
    } satisfies EventHandlerMetadata)(target, key, descriptor);
    return descriptor;
  };
}
