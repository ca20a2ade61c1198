import { SetMetadata } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type IntegrationEventType } from './integration-event';

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
 * A handler of one kind of event. `manager` runs the transaction that also moves the handler's
 * checkpoint past the event: what the handler writes through it commits with that step, once, or
 * rolls back with it and is run again. It must not use the unit of work itself.
 */
export type EventHandlerMethod<T extends object> = (
  event: ReceivedEvent<T>,
  manager: EntityManager,
) => Promise<void> | void;

export const EVENT_HANDLER = Symbol('EVENT_HANDLER');

/**
 * Marks a provider's method as the in-process handler of one kind of event: it is fed from the outbox
 * after commit, in commit order, each event once, with a checkpoint of its own (named by its class
 * and method: renaming either starts it afresh from the events committed after).
 */
export function OnIntegrationEvent<T extends object>(type: IntegrationEventType<T>) {
  return <M extends EventHandlerMethod<T>>(
    target: object,
    key: string | symbol,
    descriptor: TypedPropertyDescriptor<M>,
  ): TypedPropertyDescriptor<M> => {
    SetMetadata(EVENT_HANDLER, type)(target, key, descriptor);
    return descriptor;
  };
}
