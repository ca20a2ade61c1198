// A consumer of the service's integration events, runnable as it stands from a clone of the project:
//
//   node docs/examples/consume-events.mjs crm.property-sales-events
//
// It binds a durable queue (named by its argument, or EVENTS_QUEUE) to the service's topic exchange,
// with a dead-letter exchange and queue of its own (<queue>.dead-letters), validates each message as
// a CloudEvent, handles each event once (here: prints it on stdout, one JSON line an event) and
// acknowledges it only once handled; a message that is not an event is rejected without requeueing,
// so the broker dead-letters it. What it says about itself goes to stderr. docs/consuming-events.md
// explains each choice; docs/examples/ConsumeEvents.cs does the same in C#.
//
//   EVENTS_URL           the broker (default amqp://guest:guest@127.0.0.1:5672)
//   EVENTS_EXCHANGE      the service's exchange (default property-sales.events)
//   EVENTS_ROUTING_KEYS  comma-separated (default transaction.agents-changed,data.imported)
//   EVENTS_HANDLED_FILE  a file keeping the ids of handled events across restarts; without it they
//                        are kept in memory, and forgotten when the process ends
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { CloudEvent } from 'cloudevents';
import { Connection, ConsumerStatus } from 'rabbitmq-client';

const queue = process.argv[2] ?? process.env.EVENTS_QUEUE;
const url = process.env.EVENTS_URL || 'amqp://guest:guest@127.0.0.1:5672';
const exchange = process.env.EVENTS_EXCHANGE || 'property-sales.events';
const routingKeys = (process.env.EVENTS_ROUTING_KEYS || 'transaction.agents-changed,data.imported')
  .split(',')
  .map((key) => key.trim())
  .filter(Boolean);
const handledFile = process.env.EVENTS_HANDLED_FILE;

if (!queue) {
  console.error('Usage: node docs/examples/consume-events.mjs <queue> (or EVENTS_QUEUE=<queue>)');
  process.exit(2);
}

/** @param {string} message */
const log = (message) => console.error(`[consume-events] ${message}`);
/** @param {unknown} error */
const messageOf = (error) => (error instanceof Error ? error.message : String(error));

/**
 * The ids of the events already handled. A real consumer keeps them in its own database and writes
 * each id in the same transaction as the change the event caused (a table keyed by the id: a second
 * insert of the same id fails, and the change rolls back with it), so an event is handled once or not
 * at all. This example prints, then appends the id: a crash between the two prints the event again.
 * Keep the ids longer than a redelivery can take (days, not minutes); then they may be pruned.
 */
const handled = new Set(
  handledFile && existsSync(handledFile)
    ? readFileSync(handledFile, 'utf8').split('\n').filter(Boolean)
    : [],
);
/** @param {string} id */
const remember = (id) => {
  handled.add(id);
  if (handledFile) appendFileSync(handledFile, `${id}\n`);
};

/**
 * @typedef {object} ReceivedEvent A CloudEvent as the service publishes it.
 * @property {'1.0'} specversion
 * @property {string} id The same on every delivery of the event.
 * @property {string} source
 * @property {string} type
 * @property {string} [subject] What it is about: a transaction id, as text.
 * @property {string} time When the change was made.
 * @property {unknown} [data]
 */

/**
 * The message's body as a CloudEvent in structured JSON mode; throws when it is not one. The SDK
 * checks the attributes' types and formats, but invents an `id`, a `time` and a `specversion` for an
 * event that lacks them: those are checked here first, since the id is what makes an event the same
 * event on every delivery.
 * @param {unknown} body
 * @returns {ReceivedEvent}
 */
function cloudEventOf(body) {
  // rabbitmq-client hands over a Buffer for any content type but application/json and text/plain.
  /** @type {unknown} */
  const json = Buffer.isBuffer(body) ? JSON.parse(body.toString('utf8')) : body;
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new Error('the body is not a JSON object');
  const attributes = /** @type {Record<string, unknown>} */ (json);
  if (attributes.specversion !== '1.0') throw new Error('specversion is not 1.0');
  for (const name of ['id', 'source', 'type', 'time'])
    if (typeof attributes[name] !== 'string' || attributes[name] === '')
      throw new Error(`${name} is missing`);
  // Strict: throws a ValidationError naming each attribute that breaks the specification.
  new CloudEvent(attributes, true);
  return /** @type {ReceivedEvent} */ (attributes);
}

const rabbit = new Connection({ url, connectionName: `consume-events ${queue}` });
rabbit.on('error', (error) => log(`The broker is unreachable; retrying: ${messageOf(error)}`));

// Where the broker moves a message this consumer rejects: an exchange of its own, routing to a
// queue of its own, where it waits for someone to look at it. Declared before consuming, waiting
// for the broker as long as it takes; durable, both outlive a broker restart.
const deadLetters = `${queue}.dead-letters`;
for (;;) {
  try {
    await rabbit.exchangeDeclare({ exchange: deadLetters, type: 'fanout', durable: true });
    await rabbit.queueDeclare({ queue: deadLetters, durable: true });
    await rabbit.queueBind({ queue: deadLetters, exchange: deadLetters });
    break;
  } catch (error) {
    log(`Declaring ${deadLetters} failed; retrying: ${messageOf(error)}`);
    await sleep(2000);
  }
}

const consumer = rabbit.createConsumer(
  {
    queue,
    // Durable, not exclusive, never deleted by the broker: events wait here while this is down. A
    // queue's arguments cannot change once it exists: a queue declared before without them must be
    // deleted first, or given them through a policy.
    queueOptions: { durable: true, arguments: { 'x-dead-letter-exchange': deadLetters } },
    // Declared as the service declares it, so either may start first.
    exchanges: [{ exchange, type: 'topic', durable: true }],
    queueBindings: routingKeys.map((routingKey) => ({ exchange, queue, routingKey })),
    // One event at a time, so a transaction's events are handled in the order they were published.
    concurrency: 1,
    qos: { prefetchCount: 20 },
  },
  (message) => {
    let event;
    try {
      event = cloudEventOf(message.body);
    } catch (error) {
      // Delivered again it would fail again: rejected without requeueing, to the queue's
      // dead-letter exchange.
      log(
        `Rejected message ${message.messageId ?? '(no id)'}: not a CloudEvent (${messageOf(error)}).`,
      );
      return ConsumerStatus.DROP;
    }
    if (message.messageId !== undefined && message.messageId !== event.id)
      log(`Message ${message.messageId} carries event ${event.id}; the event's id counts.`);
    if (handled.has(event.id)) {
      log(
        `Skipped event ${event.id}: already handled${message.redelivered ? ' (redelivered)' : ''}.`,
      );
      return ConsumerStatus.ACK;
    }
    try {
      // The handling: this consumer's own write, and the id with it.
      process.stdout.write(`${JSON.stringify(event)}\n`);
      remember(event.id);
    } catch (error) {
      // Not requeued: the next events are already here, and would overtake it. Ending the process
      // hands every unacknowledged message back to the queue, in its order, for the next start.
      log(`Handling event ${event.id} failed; stopping: ${messageOf(error)}`);
      process.exit(1);
    }
    // Acknowledged when this returns.
    return ConsumerStatus.ACK;
  },
);
consumer.on('ready', () =>
  log(`Consuming ${queue}, bound to ${exchange} with ${routingKeys.join(', ')}.`),
);
consumer.on('error', (error) => log(`The consumer stopped; it starts again: ${messageOf(error)}`));

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  // Waits for the event being handled, then closes; what is left waits in the queue.
  await consumer.close();
  await rabbit.close();
  log('Stopped.');
}
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
