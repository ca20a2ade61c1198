import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import { setImmediate, setTimeout as sleep } from 'node:timers/promises';
import { Counter, Gauge, Histogram } from 'prom-client';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { UnitOfWork } from '../database/unit-of-work';
import { ServiceMetrics } from '../metrics/service-metrics';
import { JsonCodec, wireModelOf } from '../wire';
import {
  BATCHED_REACTION,
  type BatchedReactionMethod,
  type BatchedReactionOptions,
  reactionCheckpoint,
} from '../events/batched-reaction';
import { BatchedReactions } from './batched-reactions';
import {
  type EventBatchHandlerMethod,
  EVENT_HANDLER,
  type EventHandlerMetadata,
  type EventHandlerMethod,
  type ReceivedEvent,
} from '../events/event-handler.decorator';
import { type IntegrationEventType, type Publish } from '../events/integration-event';
import { Outbox } from '../events/outbox';
import { registerBacklogGauges } from './backlog-gauges';
import { BrokerPublishError, BrokerPublisher } from './broker-publisher';
import { OutboxStore, type StoredEvent } from './outbox-store';
import { Wakeup } from './wakeup';
import { backgroundTrace } from '../tracing/background';

/** The broker's checkpoint. */
const BROKER = 'broker';
/** Events one publish sends and waits for the confirms of. */
const PUBLISH_BATCH = 500;
/** Events of its kind a handler's step handles at most, in one transaction. */
const HANDLER_BATCH = 100;
/** Keys a batched reaction's batch takes at most, unless it says otherwise. */
const REACTION_BATCH = 500;
/** A failing consumer waits 1 s, then twice as long each time, up to a minute. */
const BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 60_000;
/** Events past their retention are purged once a minute, or as often as the retention if shorter. */
const PURGE_EVERY_MS = 60_000;
const MIN_PURGE_EVERY_MS = 1000;

/**
 * After a commit here, how long a consumer waits for more before its step: under load a step takes
 * the events of many requests, not one, and the relay's own work stays a small share of theirs.
 */
const GATHER_MS = 10;
/**
 * How long, at most, a consumer woken by a commit lets the units waiting for a database connection
 * go first: requests are not held up by the relay's steps, which then take their events together.
 */
const LINGER_MS = 250;

/**
 * One loop of the relay, with its checkpoint: the broker or an after-commit handler, which read the
 * outbox, or a batched reaction, which reads its own table.
 */
interface Consumer {
  readonly name: string;
  /** Whether it reads the outbox: its checkpoint holds events back from the purge. */
  readonly readsOutbox: boolean;
  /** The routing keys of the events it takes; absent, every kind. A commit of one wakes it. */
  readonly kinds?: readonly string[];
  /** Delivers what waits past its checkpoint; whether more may wait (then it goes on at once). */
  step(): Promise<boolean>;
  /** Says what failed (the broker logs its outages itself). */
  failed(error: unknown): void;
}

/**
 * A handler as the relay calls it, with the events of a step: a batch handler as it is, a handler of
 * single events once for each, in order.
 */
function batchOf(
  { batch }: EventHandlerMetadata,
  method: (...args: never[]) => unknown,
  instance: object,
): EventBatchHandlerMethod<object> {
  if (batch) return (method as EventBatchHandlerMethod<object>).bind(instance);
  const handle = (method as EventHandlerMethod<object>).bind(instance);
  return async (events, manager, publish: Publish) => {
    for (const event of events) await handle(event, manager, publish);
  };
}

interface RelayMetrics {
  readonly published: Counter;
  readonly publishFailures: Counter;
  readonly unroutable: Counter;
  readonly brokerConnected: Gauge;
  readonly latency: Histogram;
  readonly handled: Counter<'handler'>;
  readonly handlerFailures: Counter<'handler'>;
  readonly handlerLatency: Histogram<'handler'>;
  readonly reactionBatches: Counter<'reaction'>;
  readonly reactionFailures: Counter<'reaction'>;
}

/**
 * Delivers the outbox's committed events to their consumers: the broker (EVENTS_URL), and each
 * after-commit handler (@OnIntegrationEvent), each from its own checkpoint in its own loop, so a
 * failing handler or an unreachable broker holds up nobody else; and runs the batched reactions
 * (@BatchedReaction) once started. A consumer's events go out in order, by one instance at a time;
 * each step runs right after a commit here of events it takes, and every EVENTS_POLL_MS for commits
 * elsewhere. Delivered events are purged after EVENTS_RETENTION_MS. In-transaction handlers are handed
 * to the outbox, which runs them inside each publishing change.
 */
@Injectable()
export class OutboxRelay implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('EventRelay');
  private readonly store: OutboxStore;
  private readonly mysql: boolean;
  private readonly consumers: Consumer[] = [];
  /** The batched reactions that back-fill, by name. */
  private readonly backfills: string[] = [];
  private readonly wakeups = new Map<string, Wakeup>();
  private readonly loops: Promise<void>[] = [];
  private broker?: BrokerPublisher;
  private stopping = false;
  private stop!: () => void;
  private readonly stopped = new Promise<void>((resolve) => {
    this.stop = resolve;
  });
  private positioning?: Promise<void>;
  private purgeTimer?: NodeJS.Timeout;
  private readonly stopListening: (() => void)[] = [];
  private readonly metrics: RelayMetrics;
  private readonly codec = new JsonCodec();

  constructor(
    @InjectDataSource() dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly unitOfWork: UnitOfWork,
    private readonly outbox: Outbox,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly reactions: BatchedReactions,
    serviceMetrics: ServiceMetrics,
  ) {
    this.store = new OutboxStore(dataSource);
    this.mysql = dataSource.options.type !== 'better-sqlite3';
    this.metrics = this.registerMetrics(serviceMetrics);
  }

  /**
   * Finds the handlers and batched reactions; units store from now on the events of the kinds an
   * after-commit handler hears, or every event for a broker.
   */
  onModuleInit(): void {
    const { url, exchange } = this.config.events;
    if (url) {
      const broker = new BrokerPublisher(url, exchange, {
        unroutable: () => this.metrics.unroutable.inc(),
        connected: (connected) => this.metrics.brokerConnected.set(connected ? 1 : 0),
      });
      this.broker = broker;
      this.consumers.push(this.brokerConsumer(broker));
    }
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
      const prototype = Object.getPrototypeOf(instance) as object;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const name = `${instance.constructor.name}.${method}`;
        const target = instance[method] as (...args: never[]) => unknown;
        const handler = this.reflector.get<EventHandlerMetadata | undefined>(EVENT_HANDLER, target);
        if (handler?.phase === 'in-transaction')
          this.outbox.handleInTransaction(
            handler.type,
            (target as EventHandlerMethod<object>).bind(instance),
          );
        else if (handler)
          this.consumers.push(
            this.handlerConsumer(name, handler.type, batchOf(handler, target, instance)),
          );
        const reaction = this.reflector.get<BatchedReactionOptions | undefined>(
          BATCHED_REACTION,
          target,
        );
        if (reaction) {
          this.consumers.push(
            this.reactionConsumer(name, reaction, (target as BatchedReactionMethod).bind(instance)),
          );
          if (reaction.backfill) this.backfills.push(name);
        }
      }
    }
    for (const consumer of this.consumers)
      if (consumer.readsOutbox) this.outbox.enable(consumer.kinds);
  }

  async onApplicationBootstrap(): Promise<void> {
    // The feed (EVENTS_FEED) and a module's own consumers (webhooks) need no consumer here, but
    // their events are purged here too.
    const purged = this.config.events.feed || this.outbox.purgeHeld;
    if (this.consumers.length === 0 && !purged) return;
    const readers = this.consumers.filter((consumer) => consumer.readsOutbox);
    const names = readers.map((consumer) => consumer.name);
    const backfilling = await this.unitOfWork.write(async (manager) => {
      await this.store.addCheckpoints(manager, names);
      return this.store.startBackfills(manager, this.backfills);
    });
    for (const name of backfilling)
      this.logger.log(`${name} back-fills every key: its first start on this database.`);
    for (const consumer of this.consumers) this.wakeups.set(consumer.name, new Wakeup());
    const wake = (hears: (consumer: Consumer) => boolean) => () => {
      for (const consumer of this.consumers)
        if (hears(consumer)) this.wakeups.get(consumer.name)!.wake();
    };
    const hears = ({ kinds, readsOutbox }: Consumer, routingKeys: ReadonlySet<string>) =>
      readsOutbox && (kinds ?? [...routingKeys]).some((kind) => routingKeys.has(kind));
    this.stopListening.push(
      this.outbox.onCommitted((routingKeys) => wake((consumer) => hears(consumer, routingKeys))()),
      this.reactions.onStarted(wake((consumer) => !consumer.readsOutbox)),
    );
    for (const consumer of this.consumers) this.loops.push(this.run(consumer));
    if (readers.length === 0 && !purged) return;
    const { retentionMs } = this.config.events;
    this.purgeTimer = setInterval(
      () => void this.purge(names),
      Math.min(Math.max(retentionMs, MIN_PURGE_EVERY_MS), PURGE_EVERY_MS),
    );
    this.purgeTimer.unref();
  }

  /** Stops after the steps under way, before the database closes. */
  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    this.stop();
    for (const stopListening of this.stopListening) stopListening();
    clearInterval(this.purgeTimer);
    for (const wakeup of this.wakeups.values()) wakeup.wake();
    await Promise.all(this.loops);
    await this.broker?.close();
  }

  private async run(consumer: Consumer): Promise<void> {
    const wakeup = this.wakeups.get(consumer.name)!;
    let failures = 0;
    while (!this.stopping) {
      let more = false;
      try {
        if (consumer.readsOutbox) await this.givePositions();
        more = await consumer.step();
        failures = 0;
      } catch (error) {
        failures++;
        consumer.failed(error);
      }
      if (this.stopping) break;
      // A pause after a failure is not cut short by commits, only by the stop.
      if (failures > 0)
        await Promise.race([
          sleep(Math.min(BACKOFF_MS * 2 ** (failures - 1), MAX_BACKOFF_MS), undefined, {
            ref: false,
          }),
          this.stopped,
        ]);
      // better-sqlite3 answers synchronously: steps run back to back (a recomputation's batches)
      // would not let the event loop read a request until the last, and one taken between two steps
      // queues for the connection ahead of the next.
      else if (more) await this.giveWay();
      else if ((await wakeup.wait(this.config.events.pollMs)) && !this.stopping)
        await this.gather();
    }
  }

  /**
   * Waits GATHER_MS, then while units wait for a database connection (requests, mostly), up to
   * LINGER_MS in all.
   */
  private async gather(): Promise<void> {
    const until = performance.now() + LINGER_MS;
    do await sleep(GATHER_MS, undefined, { ref: false });
    while (this.unitOfWork.poolUsage().waiting > 0 && performance.now() < until && !this.stopping);
  }

  /**
   * One turn of the event loop, then more while units wait for a database connection, up to LINGER_MS:
   * a request read in that turn goes before the next step, and so do its further units.
   */
  private async giveWay(): Promise<void> {
    const until = performance.now() + LINGER_MS;
    do await setImmediate();
    while (this.unitOfWork.poolUsage().waiting > 0 && performance.now() < until && !this.stopping);
  }

  /** Positions for the events committed since the last step: one step at a time in this process. */
  private givePositions(): Promise<void> {
    this.positioning ??= this.unitOfWork
      .write(async (manager) => {
        await this.store.givePositions(manager);
      })
      .finally(() => {
        this.positioning = undefined;
      });
    return this.positioning;
  }

  private brokerConsumer(broker: BrokerPublisher): Consumer {
    // Within the unit's time bound, so a broker that does not confirm fails the step, not the unit.
    const publishMs = Math.max(100, Math.floor(this.config.databaseTimeoutMs * 0.8));
    const publish = async (events: readonly StoredEvent[], ms: number) => {
      await backgroundTrace(
        'events publish',
        { 'messaging.batch.message_count': events.length },
        () => broker.publish(events, ms),
      ).catch((error: unknown) => {
        this.metrics.publishFailures.inc();
        throw error;
      });
      const now = Date.now();
      this.metrics.published.inc(events.length);
      for (const event of events)
        this.metrics.latency.observe(Math.max(0, now - event.time.getTime()) / 1000);
    };
    /**
     * Publishes the events past `position`, a batch at a time as `read` gives them, each confirmed
     * before the next is read, while full batches come and a quarter of the time bound is not spent:
     * a backlog drains with one claim of the checkpoint and one pass through the connection pool's
     * queue per quarter, not per batch. The last position confirmed; the failure that stopped it.
     */
    const drain = async (
      position: number,
      read: (after: number) => Promise<StoredEvent[]>,
    ): Promise<{ reached: number; more: boolean; failure?: Error }> => {
      const deadline = Date.now() + publishMs;
      let reached = position;
      for (;;) {
        const events = await read(reached);
        if (events.length === 0) return { reached, more: false };
        try {
          await publish(events, deadline - Date.now());
        } catch (failure) {
          return { reached, more: true, failure: failure as Error };
        }
        reached = events.at(-1)!.position;
        if (events.length < PUBLISH_BATCH) return { reached, more: false };
        if (deadline - Date.now() < publishMs * 0.75) return { reached, more: true };
      }
    };
    return {
      name: BROKER,
      readsOutbox: true,
      step: async () => {
        // While the broker is away, the outbox is not read: nothing could be published.
        if (!(await broker.connected(this.config.events.pollMs))) return false;
        let drained: Awaited<ReturnType<typeof drain>> | undefined;
        if (this.mysql)
          // The checkpoint's row lock is held while the events are published and confirmed: one
          // instance at a time publishes, in order. What was confirmed before a failure is kept.
          drained = await this.unitOfWork.write(async (manager) => {
            const position = await this.store.claim(manager, BROKER);
            if (position === undefined) return undefined;
            const result = await drain(position, (after) =>
              this.store.after(manager, after, PUBLISH_BATCH),
            );
            if (result.reached === position && result.failure !== undefined) throw result.failure;
            if (result.reached > position)
              await this.store.advance(manager, BROKER, result.reached);
            return result;
          });
        else {
          // SQLite serves one instance; its one connection is not held while the broker confirms.
          const position = await this.unitOfWork.read((manager) =>
            this.store.claim(manager, BROKER),
          );
          if (position === undefined) return false;
          drained = await drain(position, (after) =>
            this.unitOfWork.read((manager) => this.store.after(manager, after, PUBLISH_BATCH)),
          );
          const { reached } = drained;
          if (reached > position)
            await this.unitOfWork.write((manager) => this.store.advance(manager, BROKER, reached));
        }
        if (drained?.failure !== undefined) throw drained.failure;
        return drained?.more ?? false;
      },
      // The broker's failures are logged by the publisher, once per change of its state.
      failed: (error) => {
        if (!(error instanceof BrokerPublishError))
          this.logger.warn(
            `Relaying events to the broker failed on the outbox; it is tried again after a pause: ${(error as Error).message}`,
          );
      },
    };
  }

  /**
   * An after-commit handler: each step handles the next events of its kind, up to HANDLER_BATCH, in
   * one transaction that also moves its checkpoint past them (or, when none is left, to the last
   * position given). A step that fails is rolled back, and the next ones take a single event until one
   * goes through, so the events before a failing one are handled and only it waits.
   */
  private handlerConsumer(
    name: string,
    type: IntegrationEventType,
    handle: EventBatchHandlerMethod<object>,
  ): Consumer {
    const routingKeys = [type.routingKey];
    let limit = HANDLER_BATCH;
    // The event being handled, and the one the last step failed on.
    let current: string | undefined;
    let failedOn: string | undefined;
    return {
      name,
      readsOutbox: true,
      kinds: routingKeys,
      step: async () => {
        const { handled, more } = await this.unitOfWork.write(async (manager, publish) => {
          const position = await this.store.claim(manager, name);
          if (position === undefined) return { handled: [], more: false };
          const given = await this.store.lastGiven(manager);
          const events = await this.store.ofKinds(manager, position, routingKeys, limit);
          // The one a failure is told of: the batch's first, or the single event a retry takes.
          current = events[0]?.id;
          if (events.length > 0)
            await backgroundTrace(
              `events handle ${name}`,
              { 'messaging.batch.message_count': events.length },
              async () => {
                await handle(
                  events.map((event) => this.received(event, type)),
                  manager,
                  publish,
                );
              },
            );
          const full = events.length === limit;
          const reached = full ? events.at(-1)!.position : given;
          if (reached > position) await this.store.advance(manager, name, reached);
          return { handled: events, more: full };
        });
        // Counted once its step committed.
        const now = Date.now();
        for (const event of handled) {
          this.metrics.handled.inc({ handler: name });
          this.metrics.handlerLatency.observe(
            { handler: name },
            Math.max(0, now - event.time.getTime()) / 1000,
          );
        }
        if (failedOn !== undefined && handled.some((event) => event.id === failedOn)) {
          this.logger.log(`${name} goes on: event ${failedOn} is handled.`);
          failedOn = undefined;
        }
        if (handled.length > 0) limit = Math.min(HANDLER_BATCH, limit * 2);
        current = undefined;
        return more;
      },
      failed: (error) => {
        this.metrics.handlerFailures.inc({ handler: name });
        limit = 1;
        // Once an event: it is tried again until it is handled, its successors waiting.
        if (failedOn === current && current !== undefined) return;
        failedOn = current;
        current = undefined;
        this.logger.warn(
          `${name} failed on event ${failedOn ?? '(reading the outbox)'}; it is run again after a pause, and this handler's later events wait: ${(error as Error).message}`,
        );
      },
    };
  }

  /**
   * A batched reaction: while its run has a checkpoint, each step runs one batch in a transaction that
   * moves the checkpoint past the batch's last key, or ends the run (no key left, or its bound
   * reached). A batch that takes more than a quarter of DATABASE_TIMEOUT_MS halves the next one, one
   * under a sixteenth doubles it (up to its size), and a failed one is tried again after a pause at
   * half the size: no batch outlives the time bound of a unit for long, whatever the rows cost.
   */
  private reactionConsumer(
    name: string,
    { batchSize = REACTION_BATCH }: BatchedReactionOptions,
    react: BatchedReactionMethod,
  ): Consumer {
    const checkpoint = reactionCheckpoint(name);
    const slowMs = this.config.databaseTimeoutMs / 4;
    const fastMs = this.config.databaseTimeoutMs / 16;
    let limit = batchSize;
    let failing = false;
    return {
      name,
      readsOutbox: false,
      step: async () => {
        const started = performance.now();
        const outcome = await this.unitOfWork.write(async (manager, publish) => {
          const run = await this.store.claimRun(manager, checkpoint);
          if (run === undefined) return 'idle';
          const { after, until } = run;
          const last = await react({ after, until, limit, manager, publish });
          if (last !== undefined && last <= after)
            throw new Error(`The batch after ${after} returned ${last}: no key past it.`);
          // Done when the batch found no key left, or reached the run's bound.
          const done = last === undefined || (until !== undefined && last >= until);
          if (done) await this.store.remove(manager, checkpoint);
          else await this.store.advance(manager, checkpoint, last);
          return done ? 'done' : 'more';
        });
        if (outcome === 'idle') return false;
        const ms = performance.now() - started;
        this.metrics.reactionBatches.inc({ reaction: name });
        if (ms > slowMs) limit = Math.max(1, Math.floor(limit / 2));
        else if (ms < fastMs) limit = Math.min(batchSize, limit * 2);
        if (failing) this.logger.log(`${name} goes on, at most ${limit} keys a batch.`);
        failing = false;
        return outcome === 'more';
      },
      failed: (error) => {
        this.metrics.reactionFailures.inc({ reaction: name });
        limit = Math.max(1, Math.floor(limit / 2));
        if (failing) return;
        failing = true;
        this.logger.warn(
          `${name} failed on a batch; it is run again after a pause, at most ${limit} keys a batch: ${(error as Error).message}`,
        );
      },
    };
  }

  /** The stored CloudEvent, its data bound to the event's wire model. */
  private received(event: StoredEvent, type: IntegrationEventType): ReceivedEvent {
    const { data, ...attributes } = JSON.parse(event.body) as Omit<ReceivedEvent, 'data'> & {
      data: unknown;
    };
    return {
      ...attributes,
      data: this.codec.decode(JSON.stringify(data), wireModelOf(type.payload)),
    };
  }

  private async purge(consumers: readonly string[]): Promise<void> {
    const before = new Date(Date.now() - this.config.events.retentionMs);
    try {
      let purged: number;
      do {
        purged = await this.unitOfWork.write(async (manager) =>
          this.store.purge(
            manager,
            consumers,
            await this.outbox.heldPosition(manager),
            before,
            this.config.events.feed,
          ),
        );
      } while (purged > 0 && !this.stopping);
    } catch (error) {
      this.logger.warn(
        `Purging delivered events failed; it is tried again: ${(error as Error).message}`,
      );
    }
  }

  private registerMetrics({ registry }: ServiceMetrics): RelayMetrics {
    const registers = [registry];
    const backlogs = () =>
      Promise.all(
        this.consumers
          .filter((consumer) => consumer.readsOutbox)
          .map(async ({ name, kinds }) => ({
            name,
            backlog: await this.unitOfWork.read((manager) =>
              this.store.backlog(manager, name, kinds),
            ),
          })),
      ).catch(() => []);
    registerBacklogGauges(
      registry,
      {
        label: 'consumer',
        pending: {
          name: 'events_pending',
          help: 'Committed events each consumer (broker, or an in-process handler) has not yet taken.',
        },
        oldest: {
          name: 'events_oldest_pending_age_seconds',
          help: 'Age of the oldest committed event each consumer has not yet taken; 0 when none waits.',
        },
      },
      backlogs,
    );
    // Each batched reaction, and whether its run is under way; none when the database does not answer.
    const reactionsRunning = async () => {
      const names = this.consumers
        .filter((consumer) => !consumer.readsOutbox)
        .map(({ name }) => name);
      const running = await this.unitOfWork
        .read((manager) => this.store.checkpointsOf(manager, names.map(reactionCheckpoint)))
        .catch(() => undefined);
      return running
        ? names.map((name) => ({ name, running: running.has(reactionCheckpoint(name)) }))
        : [];
    };
    new Gauge({
      name: 'event_reactions_running',
      help: 'Whether each batched reaction has a run under way (1) or not (0).',
      labelNames: ['reaction'],
      registers,
      async collect() {
        this.reset();
        for (const { name, running } of await reactionsRunning())
          this.set({ reaction: name }, running ? 1 : 0);
      },
    });
    return {
      published: new Counter({
        name: 'events_published_total',
        help: 'Events the broker confirmed.',
        registers,
      }),
      publishFailures: new Counter({
        name: 'events_publish_failures_total',
        help: 'Batches of events sent to the broker that it did not confirm (not in time, refused, or the connection lost under them); they are published again. Nothing is sent while no connection is open: see events_broker_connected.',
        registers,
      }),
      unroutable: new Counter({
        name: 'events_unroutable_total',
        help: 'Events the broker confirmed with no queue bound for their routing key: nobody received them.',
        registers,
      }),
      brokerConnected: new Gauge({
        name: 'events_broker_connected',
        help: 'With EVENTS_URL: 1 while a connection to the broker is open and it confirms what is published; 0 while it is unreachable, late to confirm, or refusing.',
        // Not exported without a broker, where it would read as one always away.
        registers: this.config.events.url ? registers : [],
      }),
      latency: new Histogram({
        name: 'events_relay_latency_seconds',
        help: "From an event's change to the broker's confirm of it.",
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
        registers,
      }),
      handled: new Counter({
        name: 'events_handled_total',
        help: 'Events each in-process handler handled (committed).',
        labelNames: ['handler'],
        registers,
      }),
      handlerFailures: new Counter({
        name: 'event_handler_failures_total',
        help: 'Failed steps of each in-process handler; the event is handled again after a pause.',
        labelNames: ['handler'],
        registers,
      }),
      handlerLatency: new Histogram({
        name: 'events_handler_latency_seconds',
        help: "From an event's change to the commit of the after-commit handler's step that handled it.",
        labelNames: ['handler'],
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
        registers,
      }),
      reactionBatches: new Counter({
        name: 'event_reaction_batches_total',
        help: 'Batches each batched reaction committed.',
        labelNames: ['reaction'],
        registers,
      }),
      reactionFailures: new Counter({
        name: 'event_reaction_failures_total',
        help: 'Failed batches of each batched reaction; the batch is run again after a pause, smaller.',
        labelNames: ['reaction'],
        registers,
      }),
    };
  }
}
