import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Counter, Gauge, Histogram } from 'prom-client';
import { DataSource, type EntityManager } from 'typeorm';
import { version } from '../../package.json';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { UnitOfWork } from '../database/unit-of-work';
import { registerBacklogGauges } from '../event-relay/backlog-gauges';
import { OutboxStore, POSITION_BATCH, type StoredEvent } from '../event-relay/outbox-store';
import { Wakeup } from '../event-relay/wakeup';
import { declaredIntegrationEvents } from '../events/integration-event';
import { Outbox } from '../events/outbox';
import { ServiceMetrics } from '../metrics/service-metrics';
import { WebhookSubscriptionEntity } from './entities';
import { retryDelay } from './retry-schedule';
import { type DeliveryOutcome, WebhookSender } from './webhook-sender';
import { TargetResolver } from './webhook-targets';

/** A subscription's checkpoint among the outbox's consumers. */
export const webhookCheckpoint = (id: string) => `webhook:${id}`;

/** Events one step reads and delivers, one after the other, under one lease. */
const DELIVERY_BATCH = 100;
/**
 * A lease outlives a delivery's time bound by this much: an instance that stopped without freeing
 * it (killed) holds up the subscription no longer than that.
 */
const LEASE_MARGIN_MS = 5000;
/** A step that failed on the database is tried again after this, then twice as long, up to a minute. */
const ERROR_PAUSE_MS = 1000;
const MAX_ERROR_PAUSE_MS = 60_000;
/**
 * How long an idle loop waits unwoken: the poll wakes it every EVENTS_POLL_MS, and a commit here at
 * once; this only bounds a wait whose poll failed.
 */
const IDLE_WAIT_MS = 60_000;
/** The longest reason a subscription's row keeps. */
const REASON_LENGTH = 500;

/** What a subscription's step found. */
type Step =
  | { readonly next: 'more' | 'idle' }
  /** Its next attempt is due in `ms`: the retry schedule's wait. */
  | { readonly next: 'retry'; readonly ms: number };

/** The lease a step holds: the row as claimed, and the lease version it set. */
interface Lease {
  readonly row: WebhookSubscriptionEntity;
  readonly version: number;
}

/** One subscription's loop in this instance. */
interface Loop {
  readonly id: string;
  readonly wakeup: Wakeup;
  /** The routing keys of the events it takes (absent: every kind), as last read. */
  kinds?: readonly string[];
  /** Its row's updated_at, as last read: a change elsewhere (a resume) wakes it. */
  updatedAt: number;
  /** Waiting for its next attempt: commits do not wake it. */
  retrying: boolean;
  stopped: boolean;
  /** Resolves once it has stopped. */
  done: Promise<void>;
}

interface WebhookMetrics {
  readonly deliveries: Counter<'result'>;
  readonly duration: Histogram;
}

/**
 * Delivers the committed events to each webhook subscription, as one more consumer of the outbox
 * with its own checkpoint: each subscription in a loop of its own, so that a slow or failing one
 * holds up no other, nor the broker's relay, nor the in-process handlers. A step takes a lease on
 * the subscription's row (a compare-and-set on its lease version, the same on SQLite and MariaDB),
 * so that one instance at a time delivers it, in outbox order, without holding a database
 * connection while it waits for the subscriber; the checkpoint moves past each event as the
 * subscriber acknowledges it (2xx). A failure is retried on the Standard Webhooks schedule, kept in
 * the row so that every instance keeps to it, and a subscription failing WEBHOOKS_DISABLE_AFTER_MS
 * without a success is disabled. An active subscription's checkpoint holds its events back from the
 * outbox's purge.
 */
@Injectable()
export class WebhookDelivery implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Webhooks');
  /** This instance, as the leases it takes name it. */
  private readonly instance = randomUUID();
  private readonly store: OutboxStore;
  private readonly loops = new Map<string, Loop>();
  private readonly leaseMs: number;
  private sender?: WebhookSender;
  private readonly metrics?: WebhookMetrics;
  private positioning?: Promise<void>;
  private refreshing?: Promise<void>;
  private stopping = false;
  private stop!: () => void;
  private readonly stopped = new Promise<void>((resolve) => {
    this.stop = resolve;
  });
  private readonly stops: (() => void)[] = [];

  constructor(
    @InjectDataSource() dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly unitOfWork: UnitOfWork,
    private readonly outbox: Outbox,
    serviceMetrics: ServiceMetrics,
  ) {
    this.store = new OutboxStore(dataSource);
    this.leaseMs = 2 * config.webhooks.timeoutMs + LEASE_MARGIN_MS;
    if (config.webhooks.on) this.metrics = this.registerMetrics(serviceMetrics);
  }

  /** With webhooks on, units write their events, and active subscriptions hold the purge. */
  onModuleInit(): void {
    if (!this.config.webhooks.on) return;
    this.outbox.enable();
    this.outbox.holdPurge((manager) => this.purgeHolders(manager));
  }

  /**
   * The checkpoints of the active subscriptions whose oldest event not taken is younger than
   * EVENTS_RETENTION_MS + WEBHOOKS_DISABLE_AFTER_MS: they hold their events back from the purge. An
   * older one holds nothing, as a paused one: a subscription that always fails, resumed before it is
   * disabled, would otherwise keep every event in the outbox forever.
   */
  private async purgeHolders(manager: EntityManager): Promise<string[]> {
    const since = Date.now() - this.config.events.retentionMs - this.config.webhooks.disableAfterMs;
    const active = await manager.find(WebhookSubscriptionEntity, {
      select: { id: true },
      where: { status: 'active' },
    });
    const holders: string[] = [];
    for (const { id } of active) {
      const position = await this.store.checkpoint(manager, webhookCheckpoint(id));
      if (position === undefined) continue;
      const [oldest] = await this.store.after(manager, position, 1);
      if (!oldest || oldest.time.getTime() >= since) holders.push(webhookCheckpoint(id));
    }
    return holders;
  }

  async onApplicationBootstrap(): Promise<void> {
    const { on, timeoutMs, allowHttp, allowPrivateNetworks } = this.config.webhooks;
    if (!on) return;
    this.sender = new WebhookSender(
      { allowHttp, allowPrivateNetworks },
      timeoutMs,
      `property-sales-webhooks/${version}`,
      new TargetResolver(timeoutMs),
    );
    // The row of the last position given, which a new subscription's checkpoint starts at.
    await this.unitOfWork.write((manager) => this.store.addCheckpoints(manager, []));
    this.stops.push(
      this.outbox.onCommitted((routingKeys) => {
        for (const loop of this.loops.values())
          if (
            !loop.retrying &&
            (loop.kinds ?? [...routingKeys]).some((kind) => routingKeys.has(kind))
          )
            loop.wakeup.wake();
      }),
    );
    // Every EVENTS_POLL_MS, the subscriptions made, changed or deleted elsewhere are found, and every
    // loop looks for other instances' commits: together, so that one step gives the positions.
    const poll = setInterval(() => void this.refresh(), this.config.events.pollMs);
    poll.unref();
    this.stops.push(() => clearInterval(poll));
    await this.refresh();
  }

  /** Stops after the deliveries under way (each bounded by WEBHOOKS_TIMEOUT_MS). */
  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    this.stop();
    for (const stop of this.stops) stop();
    await this.refreshing;
    for (const loop of this.loops.values()) {
      loop.stopped = true;
      loop.wakeup.wake();
    }
    await Promise.all([...this.loops.values()].map((loop) => loop.done));
    await this.sender?.close();
  }

  /** A subscription was made, changed or deleted here: its loop learns of it at once. */
  changed(id: string): void {
    if (!this.config.webhooks.on || this.stopping) return;
    void this.refresh().then(() => this.loops.get(id)?.wakeup.wake());
  }

  /** Starts a loop for each subscription without one, and stops the loops of deleted ones. */
  private refresh(): Promise<void> {
    this.refreshing ??= this.unitOfWork
      .read((manager) =>
        manager.find(WebhookSubscriptionEntity, {
          select: { id: true, types: true, updated_at: true },
        }),
      )
      .then(
        (rows) => {
          if (this.stopping) return;
          const ids = new Set(rows.map(({ id }) => id));
          for (const [id, loop] of this.loops)
            if (!ids.has(id)) {
              loop.stopped = true;
              loop.wakeup.wake();
              this.loops.delete(id);
            }
          for (const row of rows) {
            const known = this.loops.get(row.id);
            const updatedAt = row.updated_at.getTime();
            if (known) {
              known.kinds = this.kindsOf(row.types);
              // A change (a resume elsewhere) ends a retry's wait.
              if (known.updatedAt !== updatedAt) {
                known.updatedAt = updatedAt;
                known.retrying = false;
              }
              if (!known.retrying) known.wakeup.wake();
              continue;
            }
            const loop: Loop = {
              id: row.id,
              wakeup: new Wakeup(),
              kinds: this.kindsOf(row.types),
              updatedAt,
              retrying: false,
              stopped: false,
              done: Promise.resolve(),
            };
            this.loops.set(row.id, loop);
            loop.done = this.run(loop);
          }
        },
        (error: unknown) => {
          this.logger.warn(
            `Webhook subscriptions cannot be read; they are read again: ${(error as Error).message}`,
          );
        },
      )
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }

  /** The routing keys of a subscription's types; absent for every kind. */
  private kindsOf(types: readonly string[]): readonly string[] | undefined {
    if (types.length === 0) return undefined;
    const selected = new Set(types);
    return declaredIntegrationEvents()
      .filter(({ type }) => selected.has(type))
      .map(({ routingKey }) => routingKey);
  }

  private async run(loop: Loop): Promise<void> {
    let errors = 0;
    while (!this.stopping && !loop.stopped) {
      let pause: number | undefined;
      try {
        const step = await this.step(loop);
        if (errors > 0) this.logger.log(`Webhook ${loop.id}: its subscription is read again.`);
        errors = 0;
        loop.retrying = step.next === 'retry';
        if (step.next === 'more') continue;
        if (step.next === 'retry') pause = step.ms;
      } catch (error) {
        if (errors === 0)
          this.logger.warn(
            `Webhook ${loop.id}: its subscription or events cannot be read or written; tried again after a pause: ${(error as Error).message}`,
          );
        errors++;
        pause = Math.min(ERROR_PAUSE_MS * 2 ** (errors - 1), MAX_ERROR_PAUSE_MS);
      }
      if (this.stopping || loop.stopped) break;
      // A retry's wait is cut short only by a change of the subscription (a resume) or the stop.
      if (pause === undefined) await loop.wakeup.wait(IDLE_WAIT_MS);
      else
        await Promise.race([
          loop.wakeup.wait(pause),
          sleep(pause, undefined, { ref: false }),
          this.stopped,
        ]);
    }
  }

  /**
   * Delivers what waits for the subscription: looks first without a write, then takes the lease and
   * delivers up to DELIVERY_BATCH events, each moving the checkpoint once acknowledged.
   */
  private async step(loop: Loop): Promise<Step> {
    await this.givePositions();
    const now = Date.now();
    const peek = await this.unitOfWork.read(async (manager) => {
      const row = await manager.findOneBy(WebhookSubscriptionEntity, { id: loop.id });
      if (!row) return undefined;
      const position = await this.store.checkpoint(manager, webhookCheckpoint(row.id));
      if (position === undefined) return undefined;
      const kinds = this.kindsOf(row.types);
      const waiting = await this.eventsAfter(manager, position, kinds, 1);
      const given = await this.store.lastGiven(manager);
      return { row, waiting: waiting.length > 0 || given > position };
    });
    if (!peek || peek.row.status !== 'active' || !peek.waiting) return { next: 'idle' };
    const due = peek.row.next_attempt_at?.getTime() ?? 0;
    if (due > now) return { next: 'retry', ms: due - now };
    const leased = peek.row.lease_until?.getTime() ?? 0;
    if (peek.row.lease_owner !== null && peek.row.lease_owner !== this.instance && leased > now)
      return { next: 'retry', ms: leased - now };
    const claimed = await this.claim(peek.row);
    if (!claimed) return { next: 'idle' };
    let { lease } = claimed;
    const { position, given, events } = claimed;
    let reached = position;
    for (const event of events) {
      const outcome = await this.deliver(lease.row, event);
      if (outcome.result !== 'delivered') return this.failed(lease, outcome);
      const moved = await this.delivered(lease, event);
      if (!moved) return { next: 'idle' };
      lease = moved;
      reached = event.position;
    }
    const full = events.length === DELIVERY_BATCH;
    // With nothing more of its kinds, the checkpoint moves to the last position given: the events of
    // other kinds do not hold back the purge.
    await this.release(lease, full ? reached : Math.max(reached, given));
    return { next: full ? 'more' : 'idle' };
  }

  /** Up to `limit` events of `kinds` (absent: every kind) past `position`, in order. */
  private eventsAfter(
    manager: EntityManager,
    position: number,
    kinds: readonly string[] | undefined,
    limit: number,
  ): Promise<StoredEvent[]> {
    if (kinds === undefined) return this.store.after(manager, position, limit);
    if (kinds.length === 0) return Promise.resolve([]);
    return this.store.ofKinds(manager, position, kinds, limit);
  }

  /**
   * Takes the lease when the row is still as read (its lease version), and reads the checkpoint
   * and the events to deliver; undefined when another instance took it meanwhile.
   */
  private claim(row: WebhookSubscriptionEntity) {
    return this.unitOfWork.write(async (manager) => {
      const lease = await this.setLease(
        manager,
        { row, version: row.lease_version },
        {
          lease_owner: this.instance,
          lease_until: new Date(Date.now() + this.leaseMs),
        },
      );
      if (!lease) return undefined;
      const position = (await this.store.claim(manager, webhookCheckpoint(row.id))) ?? 0;
      const given = await this.store.lastGiven(manager);
      const events = await this.eventsAfter(
        manager,
        position,
        this.kindsOf(row.types),
        DELIVERY_BATCH,
      );
      return { lease, position, given, events };
    });
  }

  /**
   * Changes the row when its lease version is still `lease`'s, raising it; the lease as changed, or
   * undefined when another instance took the lease meanwhile.
   */
  private async setLease(
    manager: EntityManager,
    { row, version }: Lease,
    changes: Partial<WebhookSubscriptionEntity>,
  ): Promise<Lease | undefined> {
    const next = version + 1;
    const { affected } = await manager
      .createQueryBuilder()
      .update(WebhookSubscriptionEntity)
      .set({ ...changes, lease_version: next })
      .where('id = :id AND lease_version = :version', { id: row.id, version })
      .execute();
    return affected === 1
      ? { row: { ...row, ...changes, lease_version: next }, version: next }
      : undefined;
  }

  private async deliver(
    row: WebhookSubscriptionEntity,
    event: StoredEvent,
  ): Promise<DeliveryOutcome> {
    const secrets = [row.secret];
    if (row.previous_secret && (row.previous_secret_until?.getTime() ?? 0) > Date.now())
      secrets.push(row.previous_secret);
    const started = performance.now();
    const outcome = await this.sender!.send({
      url: row.url,
      secrets,
      eventId: event.id,
      body: event.body,
    });
    this.metrics!.deliveries.inc({ result: outcome.result });
    this.metrics!.duration.observe((performance.now() - started) / 1000);
    return outcome;
  }

  /** Moves the checkpoint past an acknowledged event, and renews the lease; undefined if lost. */
  private async delivered(lease: Lease, event: StoredEvent): Promise<Lease | undefined> {
    const moved = await this.unitOfWork.write(async (manager) => {
      const renewed = await this.setLease(manager, lease, {
        last_delivered_event_id: event.id,
        failing_since: null,
        attempts: 0,
        next_attempt_at: null,
        lease_until: new Date(Date.now() + this.leaseMs),
      });
      if (renewed)
        await this.store.advance(manager, webhookCheckpoint(lease.row.id), event.position);
      return renewed;
    });
    if (moved && lease.row.failing_since !== null)
      this.logger.log(
        `Webhook ${lease.row.id} delivers again: event ${event.id} acknowledged after ${lease.row.attempts} failed attempts.`,
      );
    return moved;
  }

  /** Frees the lease, the checkpoint moved to `position` when past it. */
  private async release(lease: Lease, position: number): Promise<void> {
    await this.unitOfWork.write(async (manager) => {
      const released = await this.setLease(manager, lease, {
        lease_owner: null,
        lease_until: null,
      });
      if (released) await this.store.advance(manager, webhookCheckpoint(lease.row.id), position);
    });
  }

  /**
   * A failed delivery: the next attempt scheduled, or the subscription disabled once it has failed
   * WEBHOOKS_DISABLE_AFTER_MS; the lease freed. One log line when it begins to fail, one when it
   * is disabled: none for each retry.
   */
  private async failed(lease: Lease, outcome: DeliveryOutcome): Promise<Step> {
    const { row } = lease;
    const { disableAfterMs, retryBaseMs } = this.config.webhooks;
    const now = Date.now();
    const since = row.failing_since?.getTime() ?? now;
    const attempts = row.attempts + 1;
    const reason = `${outcome.result}: ${outcome.reason ?? ''}`;
    const disabled = now - since >= disableAfterMs;
    const wait = retryDelay(attempts, retryBaseMs, since + disableAfterMs - now);
    const disabledReason =
      `Every delivery failed for ${Math.round((now - since) / 1000)} s (WEBHOOKS_DISABLE_AFTER_MS), ` +
      `${attempts} attempts; the last ${reason}`;
    const recorded = await this.unitOfWork.write((manager) =>
      this.setLease(manager, lease, {
        failing_since: new Date(since),
        attempts,
        next_attempt_at: new Date(now + wait),
        lease_owner: null,
        lease_until: null,
        ...(disabled && {
          status: 'disabled',
          disabled_reason: disabledReason.slice(0, REASON_LENGTH),
          updated_at: new Date(now),
        }),
      }),
    );
    // Another instance took the lease meanwhile (this one stalled past it): the failure is its own.
    if (!recorded) return { next: 'idle' };
    if (disabled) {
      this.logger.warn(
        `Webhook ${row.id} is disabled: ${disabledReason.slice(0, REASON_LENGTH)}. ResumeWebhook delivers again from its checkpoint.`,
      );
      return { next: 'idle' };
    }
    if (row.failing_since === null)
      this.logger.warn(
        `Webhook ${row.id} fails (${reason}); retried on the Standard Webhooks schedule, disabled after ${disableAfterMs} ms of failures.`,
      );
    return { next: 'retry', ms: wait };
  }

  /** Positions for the events committed since: one at a time in this process. */
  private givePositions(): Promise<void> {
    this.positioning ??= this.unitOfWork
      .write(async (manager) => {
        let given: number;
        do given = await this.store.givePositions(manager);
        while (given === POSITION_BATCH);
      })
      .finally(() => {
        this.positioning = undefined;
      });
    return this.positioning;
  }

  private registerMetrics({ registry }: ServiceMetrics): WebhookMetrics {
    const registers = [registry];
    const subscriptions = () =>
      this.unitOfWork
        .read((manager) =>
          manager.find(WebhookSubscriptionEntity, {
            select: { id: true, types: true, status: true },
          }),
        )
        .catch(() => []);
    const backlogs = async () =>
      Promise.all(
        (await subscriptions()).map(async ({ id, types }) => {
          const kinds = this.kindsOf(types);
          return {
            name: id,
            backlog:
              kinds?.length === 0
                ? { events: 0 }
                : await this.unitOfWork.read((manager) =>
                    this.store.backlog(manager, webhookCheckpoint(id), kinds),
                  ),
          };
        }),
      ).catch(() => []);
    registerBacklogGauges(
      registry,
      {
        label: 'subscription',
        pending: {
          name: 'webhook_pending_events',
          help: 'Committed events each webhook subscription selects and has not yet acknowledged (paused and disabled ones included).',
        },
        oldest: {
          name: 'webhook_oldest_undelivered_age_seconds',
          help: 'Age of the oldest committed event each webhook subscription selects and has not yet acknowledged; 0 when none waits.',
        },
      },
      backlogs,
    );
    new Gauge({
      name: 'webhook_subscriptions_disabled',
      help: 'Webhook subscriptions disabled after failing WEBHOOKS_DISABLE_AFTER_MS; ResumeWebhook enables one again.',
      registers,
      async collect() {
        this.set((await subscriptions()).filter(({ status }) => status === 'disabled').length);
      },
    });
    return {
      deliveries: new Counter({
        name: 'webhook_deliveries_total',
        help: 'Webhook delivery attempts by result: delivered (2xx), failed (another status, a redirect, a broken connection), timeout (no whole answer within WEBHOOKS_TIMEOUT_MS), refused (the address check refused the target, or its host refused the connection).',
        labelNames: ['result'],
        registers,
      }),
      duration: new Histogram({
        name: 'webhook_delivery_duration_seconds',
        help: 'From sending a webhook delivery to the end of its answer (or its failure).',
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
        registers,
      }),
    };
  }
}
