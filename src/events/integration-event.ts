import { type WireClass } from '../wire';

/**
 * A kind of integration event, declared once by the module that publishes it, beside the wire model
 * of its data: the JSON its consumers receive, in the service's JSON shapes and date format, and what
 * the AsyncAPI document describes.
 */
export interface IntegrationEventType<T extends object = object> {
  /** The CloudEvents `type`: `property-sales.transaction.agents-changed`. */
  readonly type: string;
  /** The routing key on the topic exchange, and the AsyncAPI channel: `transaction.agents-changed`. */
  readonly routingKey: string;
  readonly payload: WireClass<T>;
  /** One line, for the AsyncAPI document. */
  readonly summary: string;
  readonly description: string;
  /** What the CloudEvents `subject` names (a transaction id…); absent for events without one. */
  readonly subject?: string;
  /**
   * Whether some events of the kind come without the subject it names: a reaction that passes on the
   * subject of the event it handled, when that event had one.
   */
  readonly subjectMayBeAbsent?: boolean;
  /** Data as the service would publish it, for the AsyncAPI document. */
  readonly example: T;
  /** The example's subject. */
  readonly exampleSubject?: string;
}

/** One event a unit of work commits with its change. */
export interface IntegrationEvent<T extends object = object> {
  readonly type: IntegrationEventType<T>;
  /** What the event is about, when it is about one thing: a transaction id. */
  readonly subject?: string;
  /** When the change was made: its stamp. */
  readonly time: Date;
  readonly data: T;
}

/** Hands an event to the unit of work it belongs to: written if, and only if, the unit commits. */
export type Publish = <T extends object>(event: IntegrationEvent<T>) => void;

const declared = new Map<string, IntegrationEventType>();

/** Declares a kind of event; each CloudEvents type and routing key is declared once. */
export function declareIntegrationEvent<T extends object>(
  type: IntegrationEventType<T>,
): IntegrationEventType<T> {
  for (const other of declared.values())
    if (other.type === type.type || other.routingKey === type.routingKey)
      throw new Error(`The integration event ${type.type} (${type.routingKey}) is declared twice.`);
  declared.set(type.type, type);
  return type;
}

/** Every kind of event the loaded modules declared, in declaration order. */
export function declaredIntegrationEvents(): IntegrationEventType[] {
  return [...declared.values()];
}
