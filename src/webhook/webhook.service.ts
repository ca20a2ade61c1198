import { Inject, Injectable, Logger } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes, randomUUID } from 'node:crypto';
import { DataSource, type EntityManager } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { UnitOfWork } from '../database/unit-of-work';
import { OutboxStore } from '../event-relay/outbox-store';
import { eventsPublishedIn } from '../events/module-events';
import { RequestValidationError } from '../wire';
import { type CreateWebhookDto } from './dto/create-webhook.dto';
import { type UpdateWebhookDto } from './dto/update-webhook.dto';
import { WebhookSubscriptionEntity } from './entities';
import { checkTarget, TargetRefusal, TargetResolver } from './webhook-targets';
import { webhookCheckpoint } from './delivery-ledger';
import { WebhookDelivery } from './webhook-delivery';
import { type WebhookActor } from './webhook-actor';
import { WebhookLimitError, WebhookNotFoundError } from './webhook.errors';

/** The ids the service makes: a UUID, looked up only when it is one. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A new signing secret, as Standard Webhooks writes one: whsec_ and 32 random bytes in base64. */
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/** Which body a violation is reported against, as the wire layer keys a plain DTO's. */
type BodyName = 'createWebhookDto' | 'updateWebhookDto';

/** Whether `actor` may see and change `row`: webhooks:admin every one, another caller its own. */
const reaches = (actor: WebhookActor, row: WebhookSubscriptionEntity) =>
  actor.admin || row.owner === actor.owner;

/** What an audit line names of a URL: no query, fragment or user info, which may carry secrets. */
function auditedUrl(url: string): string {
  const { origin, pathname } = new URL(url);
  return `${origin}${pathname}`;
}

/** The members an audit line tells the change of; the secret only as rotated, never its value. */
const AUDITED = ['url', 'types', 'description', 'status'] as const;

/** What a change did to a subscription, member by member, as its audit line tells it. */
function changesOf(
  before: Partial<WebhookSubscriptionEntity>,
  after: Partial<WebhookSubscriptionEntity>,
): Record<string, unknown> {
  const shown = (member: (typeof AUDITED)[number], row: Partial<WebhookSubscriptionEntity>) =>
    member === 'url' && row.url !== undefined ? auditedUrl(row.url) : row[member];
  const changes: Record<string, unknown> = {};
  for (const member of AUDITED)
    if (after[member] !== undefined)
      changes[member] = { from: shown(member, before), to: shown(member, after) };
  // A new secret replacing one (a subscription's first is no change of it).
  if (after.secret !== undefined && before.secret !== undefined) changes.secret = 'rotated';
  return changes;
}

/**
 * The webhook subscriptions: made, read, changed, paused and deleted through the unit of work. Each
 * has a checkpoint among the outbox's consumers, made with it at the last position given (it hears
 * of what commits from then on) and deleted with it. Each belongs to the caller that made it: a
 * caller reaches its own alone, another's being as missing as one never made, unless it holds
 * webhooks:admin. Every change is logged, one line naming who made it, on whose subscription, and what
 * it changed.
 */
@Injectable()
export class WebhookService {
  private readonly store: OutboxStore;
  private readonly logger = new Logger('Webhook');
  private readonly mysql: boolean;
  /** Within a delivery's time bound: a slow name server answers 400, not a hung request. */
  private readonly resolver: TargetResolver;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly unitOfWork: UnitOfWork,
    private readonly delivery: WebhookDelivery,
    private readonly modules: ModulesContainer,
  ) {
    this.store = new OutboxStore(dataSource);
    this.mysql = dataSource.options.type !== 'better-sqlite3';
    this.resolver = new TargetResolver(config.webhooks.timeoutMs);
  }

  /** Whether the routes are served (WEBHOOKS). */
  get on(): boolean {
    return this.config.webhooks.on;
  }

  /**
   * A new subscription of the actor's; WebhookLimitError when the actor's or the service's cap is
   * reached.
   */
  async create(body: CreateWebhookDto, actor: WebhookActor): Promise<WebhookSubscriptionEntity> {
    await this.checkUrl(body.url, 'createWebhookDto');
    const types = this.checkTypes(body.types ?? [], 'createWebhookDto');
    const now = new Date();
    const row: WebhookSubscriptionEntity = {
      id: randomUUID(),
      owner: actor.owner,
      url: body.url,
      types,
      description: body.description ?? null,
      status: 'active',
      disabled_reason: null,
      secret: newSecret(),
      previous_secret: null,
      previous_secret_until: null,
      created_at: now,
      updated_at: now,
      last_delivered_event_id: null,
      failing_since: null,
      attempts: 0,
      next_attempt_at: null,
      lease_owner: null,
      lease_until: null,
      lease_version: 0,
    };
    await this.unitOfWork.write(async (manager) => {
      await this.checkCaps(manager, actor.owner);
      await manager.insert(WebhookSubscriptionEntity, row);
      await this.store.addCheckpoints(manager, [webhookCheckpoint(row.id)]);
    });
    this.delivery.changed(row.id);
    this.audit('created', actor, row, changesOf({}, row));
    return row;
  }

  /** The actor's subscription with this id; WebhookNotFoundError when it has none. */
  async find(id: string, actor: WebhookActor): Promise<WebhookSubscriptionEntity> {
    const row = UUID.test(id)
      ? await this.unitOfWork.read((manager) =>
          manager.findOneBy(WebhookSubscriptionEntity, { id }),
        )
      : null;
    if (!row || !reaches(actor, row)) throw new WebhookNotFoundError(id);
    return row;
  }

  /** The actor's subscriptions (every one for webhooks:admin), oldest first. */
  async list(actor: WebhookActor): Promise<WebhookSubscriptionEntity[]> {
    const rows = await this.unitOfWork.read((manager) =>
      manager.find(WebhookSubscriptionEntity, {
        ...(!actor.admin && { where: { owner: actor.owner } }),
        order: { created_at: 'ASC', id: 'ASC' },
      }),
    );
    return rows.filter((row) => reaches(actor, row));
  }

  /** Changes the members given; the URL checked as a new one is. A body naming none is refused. */
  async update(
    id: string,
    body: UpdateWebhookDto,
    actor: WebhookActor,
  ): Promise<WebhookSubscriptionEntity> {
    if (body.url === undefined && body.types === undefined && body.description === undefined)
      throw RequestValidationError.ofBody(
        'updateWebhookDto',
        'The body names nothing to change: give url, types or description.',
      );
    if (body.url !== undefined) await this.checkUrl(body.url, 'updateWebhookDto');
    const types = body.types && this.checkTypes(body.types, 'updateWebhookDto');
    return this.change('updated', id, actor, () => ({
      ...(body.url !== undefined && { url: body.url }),
      ...(types && { types }),
      ...(body.description !== undefined && { description: body.description }),
    }));
  }

  /**
   * A new secret; the one it replaces keeps signing beside it for WEBHOOKS_SECRET_GRACE_MS (a
   * previous one still in its grace period is dropped: two sign at most).
   */
  rotateSecret(id: string, actor: WebhookActor): Promise<WebhookSubscriptionEntity> {
    return this.change('secret-rotated', id, actor, (row, now) => ({
      secret: newSecret(),
      previous_secret: row.secret,
      previous_secret_until: new Date(now.getTime() + this.config.webhooks.secretGraceMs),
    }));
  }

  pause(id: string, actor: WebhookActor): Promise<WebhookSubscriptionEntity> {
    return this.change('paused', id, actor, () => ({ status: 'paused' }));
  }

  /** Delivers again from its checkpoint: a disabled one too, its failures forgotten. */
  resume(id: string, actor: WebhookActor): Promise<WebhookSubscriptionEntity> {
    return this.change('resumed', id, actor, () => ({
      status: 'active',
      disabled_reason: null,
      failing_since: null,
      attempts: 0,
      next_attempt_at: null,
    }));
  }

  /** Deletes it and its checkpoint: nothing more is delivered to it. */
  async remove(id: string, actor: WebhookActor): Promise<void> {
    const row = await this.find(id, actor);
    await this.unitOfWork.write(async (manager) => {
      await manager.delete(WebhookSubscriptionEntity, { id });
      await this.store.remove(manager, webhookCheckpoint(id));
    });
    this.delivery.changed(id);
    this.audit('deleted', actor, row, {});
  }

  /**
   * Applies `changes` to the actor's subscription, stamped, and logs it as `action`;
   * WebhookNotFoundError when the actor has none of this id.
   */
  private async change(
    action: string,
    id: string,
    actor: WebhookActor,
    changes: (row: WebhookSubscriptionEntity, now: Date) => Partial<WebhookSubscriptionEntity>,
  ): Promise<WebhookSubscriptionEntity> {
    if (!UUID.test(id)) throw new WebhookNotFoundError(id);
    const changed = await this.unitOfWork.write(async (manager: EntityManager) => {
      const row = await manager.findOneBy(WebhookSubscriptionEntity, { id });
      if (!row || !reaches(actor, row)) return undefined;
      const now = new Date();
      const update = { ...changes(row, now), updated_at: now };
      await manager.update(WebhookSubscriptionEntity, { id }, update);
      return { before: row, update };
    });
    if (!changed) throw new WebhookNotFoundError(id);
    this.delivery.changed(id);
    const { before, update } = changed;
    this.audit(action, actor, before, changesOf(before, update));
    return { ...before, ...update };
  }

  /**
   * Throws WebhookLimitError when the service holds WEBHOOKS_MAX_SUBSCRIPTIONS, or `owner`
   * WEBHOOKS_MAX_PER_OWNER (the operator's, owner null, count toward the first alone). On MySQL the
   * count locks every row and the gaps between (FOR UPDATE), so a concurrent create waits for this
   * one's commit and counts it: neither cap is passed, however many arrive at once. SQLite runs one
   * write at a time.
   */
  private async checkCaps(manager: EntityManager, owner: string | null): Promise<void> {
    const { maxPerOwner, maxSubscriptions } = this.config.webhooks;
    const lock = this.mysql ? { lock: { mode: 'pessimistic_write' as const } } : {};
    if ((await manager.count(WebhookSubscriptionEntity, lock)) >= maxSubscriptions)
      throw new WebhookLimitError('service', maxSubscriptions);
    if (owner === null) return;
    // Narrowed by the database, counted here exactly: MariaDB's collation ignores case.
    const candidates = await manager.find(WebhookSubscriptionEntity, {
      select: { id: true, owner: true },
      where: { owner },
    });
    if (candidates.filter((row) => row.owner === owner).length >= maxPerOwner)
      throw new WebhookLimitError('owner', maxPerOwner);
  }

  /** One line for a change: who made it, whose subscription, which, and what changed. */
  private audit(
    action: string,
    actor: WebhookActor,
    row: WebhookSubscriptionEntity,
    changes: Record<string, unknown>,
  ): void {
    this.logger.log({
      msg: `Webhook ${row.id}: ${action} by ${actor.owner ?? 'the operator'}.`,
      audit: `webhook.${action}`,
      actor: actor.owner,
      owner: row.owner,
      subscription: row.id,
      changes,
    });
  }

  private async checkUrl(url: string, body: BodyName): Promise<void> {
    try {
      await checkTarget(url, this.config.webhooks, this.resolver);
    } catch (error) {
      if (error instanceof TargetRefusal)
        throw new RequestValidationError({ [`${body}.url`]: [error.message] });
      throw error;
    }
  }

  /** The types, each once, when the service's modules publish every one; 400 naming the others. */
  private checkTypes(types: readonly string[], body: BodyName): string[] {
    const known = new Set(eventsPublishedIn(this.modules).map(({ type }) => type));
    const unknown = types.filter((type) => !known.has(type));
    if (unknown.length > 0)
      throw new RequestValidationError({
        [`${body}.types`]: unknown.map(
          (type) =>
            `The event type '${type.slice(0, 255)}' is not one the service publishes: ${[...known].join(', ')}.`,
        ),
      });
    return [...new Set(types)];
  }
}
