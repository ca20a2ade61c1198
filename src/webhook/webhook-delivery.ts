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
import { DataSource, type EntityManager, In } from 'typeorm';
import { version } from '../../package.json';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { UnitOfWork } from '../database/unit-of-work';
import { OutboxStore, POSITION_BATCH, type StoredEvent } from '../event-relay/outbox-store';
import { Wakeup } from '../event-relay/wakeup';
import { declaredIntegrationEvents } from '../events/integration-event';
import { Outbox } from '../events/outbox';
import { ServiceMetrics } from '../metrics/service-metrics';
import { backgroundTrace } from '../tracing/background';
import {
  DeliveryLedger,
  type Lease,
  WEBHOOK_CHECKPOINT_PREFIX,
  webhookCheckpoint,
} from './delivery-ledger';
import { WebhookSubscriptionEntity, type WebhookStatus } from './entities';
import { type EventPage, EventPages } from './event-pages';
import { retryDelay } from './retry-schedule';
import {
  purgeHeldAt,
  type SubscriptionBacklog,
  subscriptionBacklogs,
  type SubscriptionView,
} from './subscription-backlogs';
import { registerWebhookMetrics, type WebhookMetrics } from './webhook-metrics';
import { type DeliveryOutcome, WebhookSender } from './webhook-sender';
import { TargetResolver } from './webhook-targets';

/** Events one run reads and delivers, one after the other, under one lease. */
const DELIVERY_BATCH = 100;
/** Subscriptions read at a time by id. */
const ROWS_AT_ONCE = 500;
/** Event kinds read at a time when looking at what was committed. */
const KEYS_BATCH = 5000;
/**
 * A lease outlives a delivery's time bound by this much: an instance that stopped without freeing
 * it (killed) holds up the subscription no longer than that.
 */
const LEASE_MARGIN_MS = 5000;
/** A step that failed on the database is tried again after this, then twice as long, up to a minute. */
const ERROR_PAUSE_MS = 1000;
const MAX_ERROR_PAUSE_MS = 60_000;
/**
 * The least time between two steps: the commits of a burst wake one step between them, and each
 * run takes their events together, rather than a step and its writes a commit.
 */
const STEP_GAP_MS = 20;
/** The longest reason a subscription's row keeps. */
const REASON_LENGTH = 500;

/** A subscription as the dispatcher last read it, and what it knows of its deliveries. */
interface Subscription extends SubscriptionView {
  kinds?: readonly string[];
  status: WebhookStatus;
  updatedAt: number;
  /** Its checkpoint as last known here; undefined until a run here learns it. */
  position?: number;
  /** Not claimed before this: its next attempt, or the end of another instance's lease. */
  notBefore: number;
  /** When a run of it last began here: the one waiting longest goes first. */
  servedAt: number;
  /** A run of its deliveries is under way here. */
  busy: boolean;
}

/** The columns the dispatcher reads of every subscription. */
const VIEW_COLUMNS = {
  id: true,
  types: true,
  status: true,
  updated_at: true,
  next_attempt_at: true,
  lease_owner: true,
  lease_until: true,
} as const;

/**
 * Delivers the committed events to the webhook subscriptions: one dispatcher an instance for all of
 * them. Each commit here (and every EVENTS_POLL_MS, for other instances' commits) wakes it once; it
 * reads the kinds of the events committed since, once for all, and knows from them which
 * subscriptions have something to deliver, so that an idle subscription costs nothing. Those it
 * claims together, in one write: a lease on each row (a compare-and-set, the same on SQLite and
 * MariaDB), so that one instance at a time delivers a subscription, in outbox order, without
 * holding a database connection while the subscriber answers. Each claimed subscription's run reads
 * its events (one read for the runs at the same place) and delivers them one after the other, up to
 * WEBHOOKS_CONCURRENCY runs at once, the one waiting longest first. What the runs write (the
 * checkpoint moved past the events acknowledged, the lease freed or renewed, a failure scheduled on
 * the Standard Webhooks retry schedule) goes together in one write. Delivery is at least once: an
 * instance killed between an acknowledgment and that write delivers the event again, under the same
 * webhook-id. A subscription failing WEBHOOKS_DISABLE_AFTER_MS without a success is disabled; an
 * active subscription's first waiting event holds the outbox's purge.
 */
@Injectable()
export class WebhookDelivery implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Webhooks');
  /** This instance, as the leases it takes name it. */
  private readonly instance = randomUUID();
  private readonly store: OutboxStore;
  private readonly ledger: DeliveryLedger;
  private readonly pages: EventPages;
  private readonly leaseMs: number;
  private readonly subscriptions = new Map<string, Subscription>();
  /** The count and last change of the subscriptions when last read: a change elsewhere shows. */
  private signature?: string;
  /** The subscriptions changed here since the last step: each is read again, alone. */
  private readonly changedHere = new Set<string>();
  /** When the subscriptions were last looked at: other instances' changes show at the next look. */
  private lookedAt = Number.NEGATIVE_INFINITY;
  /**
   * From this position on the kinds committed are known (undefined: nothing known yet, as while no
   * subscription is active); past it, the last position of each kind and of all.
   */
  private knownFrom?: number;
  private seen = 0;
  private readonly lastOfKind = new Map<string, number>();
  private readonly wakeup = new Wakeup();
  private readonly runs = new Set<Promise<void>>();
  private sender?: WebhookSender;
  private metrics?: WebhookMetrics;
  private dispatching?: Promise<void>;
  private stopping = false;
  private readonly stops: (() => void)[] = [];

  constructor(
    @InjectDataSource() dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly unitOfWork: UnitOfWork,
    private readonly outbox: Outbox,
    private readonly serviceMetrics: ServiceMetrics,
  ) {
    this.store = new OutboxStore(dataSource);
    this.ledger = new DeliveryLedger(unitOfWork, this.store);
    this.pages = new EventPages(unitOfWork, this.store, DELIVERY_BATCH);
    this.leaseMs = 2 * config.webhooks.timeoutMs + LEASE_MARGIN_MS;
  }

  /** With webhooks on, units write their events, and active subscriptions hold the purge. */
  onModuleInit(): void {
    if (!this.config.webhooks.on) return;
    this.outbox.enable();
    this.outbox.holdPurge(async (manager) => {
      const since =
        Date.now() - this.config.events.retentionMs - this.config.webhooks.disableAfterMs;
      const pending = await this.store.pendingByKind(manager, WEBHOOK_CHECKPOINT_PREFIX);
      return purgeHeldAt(
        subscriptionBacklogs(
          this.subscriptions.values(),
          pending.filter(({ consumer }) => consumer !== ''),
        ),
        since,
      );
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    const { on, timeoutMs, allowHttp, allowPrivateNetworks, metricsSubscriptions } =
      this.config.webhooks;
    if (!on) return;
    this.sender = new WebhookSender(
      { allowHttp, allowPrivateNetworks },
      timeoutMs,
      `property-sales-webhooks/${version}`,
      new TargetResolver(timeoutMs),
    );
    this.metrics = registerWebhookMetrics(this.serviceMetrics, {
      subscriptions: () => this.subscriptions.values(),
      backlogs: () => this.backlogs(),
      shown: metricsSubscriptions,
    });
    // The row of the last position given, which a new subscription's checkpoint starts at.
    await this.unitOfWork.write((manager) => this.store.addCheckpoints(manager, []));
    this.stops.push(this.outbox.onCommitted(() => this.wakeup.wake()));
    this.dispatching = this.dispatch();
  }

  /** Stops after the deliveries under way (each bounded by WEBHOOKS_TIMEOUT_MS). */
  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    for (const stop of this.stops) stop();
    this.wakeup.wake();
    await this.dispatching;
    await Promise.all(this.runs);
    await this.sender?.close();
  }

  /** A subscription was made, changed or deleted here: the dispatcher learns of it at once. */
  changed(id: string): void {
    if (!this.config.webhooks.on || this.stopping) return;
    this.changedHere.add(id);
    this.wakeup.wake();
  }

  /** Every subscription's backlog, for the gauges; none when the database does not answer. */
  private async backlogs(): Promise<readonly SubscriptionBacklog[]> {
    try {
      const pending = await this.unitOfWork.read((manager) =>
        this.store.pendingByKind(manager, WEBHOOK_CHECKPOINT_PREFIX),
      );
      return subscriptionBacklogs(this.subscriptions.values(), pending);
    } catch {
      return [];
    }
  }

  /** Runs a step each time it is woken, or its wait is up; a failing one after a growing pause. */
  private async dispatch(): Promise<void> {
    let errors = 0;
    let wait = 0;
    let last = 0;
    while (!this.stopping) {
      await this.wakeup.wait(wait);
      const gap = last + STEP_GAP_MS - Date.now();
      if (gap > 0) await sleep(gap, undefined, { ref: false });
      if (this.stopping) break;
      last = Date.now();
      try {
        wait = await this.step();
        if (errors > 0) this.logger.log('Webhook subscriptions and events are read again.');
        errors = 0;
      } catch (error) {
        if (errors === 0)
          this.logger.warn(
            `Webhook subscriptions or events cannot be read or written; tried again after a pause: ${(error as Error).message}`,
          );
        errors++;
        wait = Math.min(ERROR_PAUSE_MS * 2 ** (errors - 1), MAX_ERROR_PAUSE_MS);
      }
    }
  }

  /**
   * Reads the subscriptions when they changed, then what was committed, and claims and starts the
   * subscriptions that have something to deliver, as many as there is room for; how long to wait
   * unwoken before the next step.
   */
  private async step(): Promise<number> {
    await this.readSubscriptions();
    const active = [...this.subscriptions.values()].filter(({ status }) => status === 'active');
    if (active.length === 0) {
      this.knownFrom = undefined;
      return this.config.events.pollMs;
    }
    await this.givePositions();
    await this.readKinds();
    const now = Date.now();
    const room = this.config.webhooks.concurrency - this.runs.size;
    const due = active
      .filter((subscription) => this.isDue(subscription, now))
      .sort((a, b) => a.servedAt - b.servedAt)
      .slice(0, Math.max(0, room));
    if (due.length > 0) await this.claim(due);
    let next = now + this.config.events.pollMs;
    for (const { busy, notBefore } of active)
      if (!busy && notBefore > now) next = Math.min(next, notBefore);
    return Math.max(0, next - Date.now());
  }

  /**
   * Reads again the subscriptions changed here, and, every EVENTS_POLL_MS, looks for changes made
   * elsewhere: when the count or the last change of the subscriptions differ from the last look's,
   * reads each one's last change, and reads again those that differ from what is known.
   */
  private async readSubscriptions(): Promise<void> {
    const ids = [...this.changedHere];
    this.changedHere.clear();
    const look = Date.now() - this.lookedAt >= this.config.events.pollMs;
    if (look) this.lookedAt = Date.now();
    if (ids.length === 0 && !look) return;
    await this.unitOfWork.read(async (manager) => {
      if (ids.length > 0) this.know(ids, await this.rowsOf(manager, ids));
      if (!look) return;
      const [{ count, changed }] = await manager
        .createQueryBuilder(WebhookSubscriptionEntity, 'subscription')
        .select('COUNT(*)', 'count')
        .addSelect('MAX(subscription.updated_at)', 'changed')
        .getRawMany<{ count: unknown; changed: unknown }>();
      const signature = `${String(count)}|${String(changed)}`;
      if (signature === this.signature) return;
      this.signature = signature;
      const stamps = await manager.find(WebhookSubscriptionEntity, {
        select: { id: true, updated_at: true },
      });
      const present = new Set(stamps.map(({ id }) => id));
      for (const id of this.subscriptions.keys())
        if (!present.has(id)) this.subscriptions.delete(id);
      const stale = stamps
        .filter(
          ({ id, updated_at }) => this.subscriptions.get(id)?.updatedAt !== updated_at.getTime(),
        )
        .map(({ id }) => id);
      this.know(stale, await this.rowsOf(manager, stale));
    });
  }

  /** The rows of the subscriptions `ids` names that still exist, read ROWS_AT_ONCE at a time. */
  private async rowsOf(
    manager: EntityManager,
    ids: readonly string[],
  ): Promise<WebhookSubscriptionEntity[]> {
    const rows: WebhookSubscriptionEntity[] = [];
    for (let at = 0; at < ids.length; at += ROWS_AT_ONCE)
      rows.push(
        ...(await manager.find(WebhookSubscriptionEntity, {
          select: VIEW_COLUMNS,
          where: { id: In(ids.slice(at, at + ROWS_AT_ONCE)) },
        })),
      );
    return rows;
  }

  /** Takes the rows read of the subscriptions `ids` names: a missing row, one deleted. */
  private know(ids: readonly string[], rows: readonly WebhookSubscriptionEntity[]): void {
    const read = new Map(rows.map((row) => [row.id, row]));
    for (const id of ids) {
      const row = read.get(id);
      if (!row) {
        this.subscriptions.delete(id);
        continue;
      }
      const subscription: Subscription = this.subscriptions.get(id) ?? {
        id,
        status: row.status,
        updatedAt: 0,
        notBefore: 0,
        servedAt: 0,
        busy: false,
      };
      subscription.kinds = kindsOf(row.types);
      subscription.status = row.status;
      subscription.updatedAt = row.updated_at.getTime();
      // A change (a resume) ends a retry's wait; another instance's lease is waited out.
      subscription.notBefore = this.notBefore(row);
      this.subscriptions.set(id, subscription);
    }
  }

  /** When the row may be claimed: its next attempt, or the end of another instance's lease. */
  private notBefore(row: WebhookSubscriptionEntity): number {
    const leased =
      row.lease_owner !== null && row.lease_owner !== this.instance
        ? (row.lease_until?.getTime() ?? 0)
        : 0;
    return Math.max(row.next_attempt_at?.getTime() ?? 0, leased);
  }

  /** Reads the kinds of the events given positions since the last look, a batch at a time. */
  private async readKinds(): Promise<void> {
    await this.unitOfWork.read(async (manager) => {
      if (this.knownFrom === undefined) {
        this.knownFrom = this.seen = await this.store.lastGiven(manager);
        this.lastOfKind.clear();
        return;
      }
      let keys;
      do {
        keys = await this.store.keysAfter(manager, this.seen, KEYS_BATCH);
        for (const { position, routingKey } of keys) this.lastOfKind.set(routingKey, position);
        this.seen = keys.at(-1)?.position ?? this.seen;
      } while (keys.length === KEYS_BATCH);
    });
  }

  /** Whether the subscription may be claimed now, and has (or may have) something to deliver. */
  private isDue(subscription: Subscription, now: number): boolean {
    const { busy, notBefore, position, kinds } = subscription;
    if (busy || notBefore > now) return false;
    // Its checkpoint before what is known: its next run finds out.
    if (position === undefined || position < this.knownFrom!) return true;
    if (kinds === undefined) return this.seen > position;
    return kinds.some((kind) => (this.lastOfKind.get(kind) ?? 0) > position);
  }

  /**
   * Takes the lease on each of `due` still free, in one write, with their checkpoints, and starts a
   * run for each taken; learns of the others when they may be tried again.
   */
  private async claim(due: readonly Subscription[]): Promise<void> {
    const ids = due.map(({ id }) => id);
    const until = new Date(Date.now() + this.leaseMs);
    const now = new Date();
    const claimed = await this.unitOfWork.write(async (manager) => {
      await manager
        .createQueryBuilder()
        .update(WebhookSubscriptionEntity)
        .set({
          lease_owner: this.instance,
          lease_until: until,
          lease_version: () => 'lease_version + 1',
        })
        .where({ id: In(ids), status: 'active' })
        .andWhere('(next_attempt_at IS NULL OR next_attempt_at <= :now)', { now })
        .andWhere('(lease_owner IS NULL OR lease_owner = :instance OR lease_until <= :now)', {
          instance: this.instance,
          now,
        })
        .execute();
      const rows = await manager.findBy(WebhookSubscriptionEntity, { id: In(ids) });
      const taken = rows.filter(
        (row) =>
          row.lease_owner === this.instance && row.lease_until?.getTime() === until.getTime(),
      );
      const positions = await this.store.checkpointsOf(
        manager,
        taken.map(({ id }) => webhookCheckpoint(id)),
      );
      return { rows, taken, positions };
    });
    const rows = new Map(claimed.rows.map((row) => [row.id, row]));
    for (const subscription of due) {
      const row = rows.get(subscription.id);
      if (!row) this.subscriptions.delete(subscription.id);
      else if (!claimed.taken.includes(row)) {
        subscription.status = row.status;
        subscription.notBefore = this.notBefore(row);
      }
    }
    for (const row of claimed.taken) {
      const subscription = this.subscriptions.get(row.id);
      const position = claimed.positions.get(webhookCheckpoint(row.id));
      if (!subscription || position === undefined) continue;
      subscription.busy = true;
      subscription.servedAt = Date.now();
      const run = this.run(subscription, { row, version: row.lease_version }, position).finally(
        () => {
          subscription.busy = false;
          this.runs.delete(run);
          this.wakeup.wake();
        },
      );
      this.runs.add(run);
    }
  }

  /**
   * Reads the events of the subscription's kinds past `position`, up to DELIVERY_BATCH, and delivers
   * them as a trace of its own; with none, frees the lease with the checkpoint past every position
   * read.
   */
  private async run(subscription: Subscription, lease: Lease, position: number): Promise<void> {
    try {
      const page = await this.pages.after(position, kindsOf(lease.row.types));
      if (page.events.length === 0) {
        await this.release(subscription, lease, position, undefined, page.lastGiven);
        return;
      }
      await backgroundTrace(
        'webhook deliver',
        {
          'webhook.subscription': lease.row.id,
          'messaging.batch.message_count': page.events.length,
        },
        () => this.deliverPage(subscription, lease, position, page),
      );
    } catch (error) {
      // Its lease runs out; the dispatcher tries it again then.
      subscription.position = undefined;
      subscription.notBefore = Date.now() + this.leaseMs;
      this.logger.warn(
        `Webhook ${lease.row.id}: its deliveries cannot be recorded; tried again once its lease runs out: ${(error as Error).message}`,
      );
    }
  }

  /**
   * Delivers the page's events, one after the other, then frees the lease with the checkpoint past
   * the last acknowledged (past every position read, when the page took all there was); renews the
   * lease when a slow subscriber has held it half its time. A failed delivery schedules the next
   * attempt.
   */
  private async deliverPage(
    subscription: Subscription,
    claimed: Lease,
    position: number,
    page: EventPage,
  ): Promise<void> {
    let lease = claimed;
    let reached = position;
    let last: StoredEvent | undefined;
    let renewAt = Date.now() + this.leaseMs / 2;
    for (const event of page.events) {
      if (this.stopping) break;
      const outcome = await this.deliver(lease.row, event);
      if (outcome.result !== 'delivered') {
        await this.failed(subscription, lease, reached, last, outcome);
        return;
      }
      if (last === undefined && lease.row.failing_since !== null)
        this.logger.log(
          `Webhook ${lease.row.id} delivers again: event ${event.id} acknowledged after ${lease.row.attempts} failed attempts.`,
        );
      reached = event.position;
      last = event;
      if (Date.now() < renewAt) continue;
      const renewed = await this.ledger.record(
        lease,
        { ...acknowledged(event), lease_until: new Date(Date.now() + this.leaseMs) },
        reached,
      );
      if (!renewed) return;
      lease = renewed;
      renewAt = Date.now() + this.leaseMs / 2;
    }
    const all = !this.stopping && page.events.length < DELIVERY_BATCH;
    await this.release(subscription, lease, reached, last, all ? page.lastGiven : reached);
  }

  /**
   * Frees the lease, the checkpoint moved past `reached` (to `upTo` when the run took all there was
   * of its kinds), the last event acknowledged recorded.
   */
  private async release(
    subscription: Subscription,
    lease: Lease,
    reached: number,
    last: StoredEvent | undefined,
    upTo: number,
  ): Promise<void> {
    const checkpoint = Math.max(reached, upTo);
    const released = await this.ledger.record(
      lease,
      { ...(last && acknowledged(last)), lease_owner: null, lease_until: null },
      checkpoint,
    );
    if (released) subscription.position = Math.max(checkpoint, subscription.position ?? 0);
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
    this.metrics!.delivered(outcome.result, (performance.now() - started) / 1000);
    return outcome;
  }

  /**
   * A failed delivery: the next attempt scheduled, or the subscription disabled once it has failed
   * WEBHOOKS_DISABLE_AFTER_MS; the checkpoint past what this run delivered before it, the lease
   * freed. One log line when it begins to fail, one when it is disabled: none for each retry.
   */
  private async failed(
    subscription: Subscription,
    lease: Lease,
    reached: number,
    last: StoredEvent | undefined,
    outcome: DeliveryOutcome,
  ): Promise<void> {
    const { row } = lease;
    const { disableAfterMs, retryBaseMs } = this.config.webhooks;
    const now = Date.now();
    // A success earlier in this run ended the failures before.
    const before = last ? { failing_since: null, attempts: 0 } : row;
    const since = before.failing_since?.getTime() ?? now;
    const attempts = before.attempts + 1;
    const reason = `${outcome.result}: ${outcome.reason ?? ''}`;
    const disabled = now - since >= disableAfterMs;
    const wait = retryDelay(attempts, retryBaseMs, since + disableAfterMs - now);
    const disabledReason =
      `Every delivery failed for ${Math.round((now - since) / 1000)} s (WEBHOOKS_DISABLE_AFTER_MS), ` +
      `${attempts} attempts; the last ${reason}`;
    const recorded = await this.ledger.record(
      lease,
      {
        ...(last && { last_delivered_event_id: last.id }),
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
      },
      reached,
    );
    // Another instance took the lease meanwhile (this one stalled past it): the failure is its own.
    if (!recorded) return;
    subscription.position = reached;
    subscription.notBefore = now + wait;
    if (disabled) {
      subscription.status = 'disabled';
      this.logger.warn(
        `Webhook ${row.id} is disabled: ${disabledReason.slice(0, REASON_LENGTH)}. ResumeWebhook delivers again from its checkpoint.`,
      );
      return;
    }
    if (before.failing_since === null)
      this.logger.warn(
        `Webhook ${row.id} fails (${reason}); retried on the Standard Webhooks schedule, disabled after ${disableAfterMs} ms of failures.`,
      );
  }

  /** Positions for the events committed since. */
  private givePositions(): Promise<void> {
    return this.unitOfWork.write(async (manager) => {
      let given: number;
      do given = await this.store.givePositions(manager);
      while (given === POSITION_BATCH);
    });
  }
}

/** What an acknowledged event changes in its subscription's row: its failures end. */
function acknowledged(event: StoredEvent): Partial<WebhookSubscriptionEntity> {
  return {
    last_delivered_event_id: event.id,
    failing_since: null,
    attempts: 0,
    next_attempt_at: null,
  };
}

/** The routing keys of a subscription's types; absent for every kind. */
function kindsOf(types: readonly string[]): readonly string[] | undefined {
  if (types.length === 0) return undefined;
  const selected = new Set(types);
  return declaredIntegrationEvents()
    .filter(({ type }) => selected.has(type))
    .map(({ routingKey }) => routingKey);
}
