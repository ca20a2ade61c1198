import { Inject, Injectable } from '@nestjs/common';
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
import { WebhookDelivery, webhookCheckpoint } from './webhook-delivery';
import { WebhookNotFoundError } from './webhook.errors';

/** The ids the service makes: a UUID, looked up only when it is one. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A new signing secret, as Standard Webhooks writes one: whsec_ and 32 random bytes in base64. */
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/** Which body a violation is reported against, as the wire layer keys a plain DTO's. */
type BodyName = 'createWebhookDto' | 'updateWebhookDto';

/**
 * The webhook subscriptions: made, read, changed, paused and deleted through the unit of work. Each
 * has a checkpoint among the outbox's consumers, made with it at the last position given (it hears
 * of what commits from then on) and deleted with it.
 */
@Injectable()
export class WebhookService {
  private readonly store: OutboxStore;
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
    this.resolver = new TargetResolver(config.webhooks.timeoutMs);
  }

  /** Whether the routes are served (WEBHOOKS). */
  get on(): boolean {
    return this.config.webhooks.on;
  }

  async create(body: CreateWebhookDto): Promise<WebhookSubscriptionEntity> {
    await this.checkUrl(body.url, 'createWebhookDto');
    const types = this.checkTypes(body.types ?? [], 'createWebhookDto');
    const now = new Date();
    const row: WebhookSubscriptionEntity = {
      id: randomUUID(),
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
      await manager.insert(WebhookSubscriptionEntity, row);
      await this.store.addCheckpoints(manager, [webhookCheckpoint(row.id)]);
    });
    this.delivery.changed(row.id);
    return row;
  }

  /** The subscription with this id; WebhookNotFoundError when there is none. */
  async find(id: string): Promise<WebhookSubscriptionEntity> {
    const row = UUID.test(id)
      ? await this.unitOfWork.read((manager) =>
          manager.findOneBy(WebhookSubscriptionEntity, { id }),
        )
      : null;
    if (!row) throw new WebhookNotFoundError(id);
    return row;
  }

  /** Every subscription, oldest first. */
  list(): Promise<WebhookSubscriptionEntity[]> {
    return this.unitOfWork.read((manager) =>
      manager.find(WebhookSubscriptionEntity, { order: { created_at: 'ASC', id: 'ASC' } }),
    );
  }

  /** Changes the members given; the URL checked as a new one is. A body naming none is refused. */
  async update(id: string, body: UpdateWebhookDto): Promise<WebhookSubscriptionEntity> {
    if (body.url === undefined && body.types === undefined && body.description === undefined)
      throw RequestValidationError.ofBody(
        'updateWebhookDto',
        'The body names nothing to change: give url, types or description.',
      );
    if (body.url !== undefined) await this.checkUrl(body.url, 'updateWebhookDto');
    const types = body.types && this.checkTypes(body.types, 'updateWebhookDto');
    return this.change(id, () => ({
      ...(body.url !== undefined && { url: body.url }),
      ...(types && { types }),
      ...(body.description !== undefined && { description: body.description }),
    }));
  }

  /**
   * A new secret; the one it replaces keeps signing beside it for WEBHOOKS_SECRET_GRACE_MS (a
   * previous one still in its grace period is dropped: two sign at most).
   */
  rotateSecret(id: string): Promise<WebhookSubscriptionEntity> {
    return this.change(id, (row, now) => ({
      secret: newSecret(),
      previous_secret: row.secret,
      previous_secret_until: new Date(now.getTime() + this.config.webhooks.secretGraceMs),
    }));
  }

  pause(id: string): Promise<WebhookSubscriptionEntity> {
    return this.change(id, () => ({ status: 'paused' }));
  }

  /** Delivers again from its checkpoint: a disabled one too, its failures forgotten. */
  resume(id: string): Promise<WebhookSubscriptionEntity> {
    return this.change(id, () => ({
      status: 'active',
      disabled_reason: null,
      failing_since: null,
      attempts: 0,
      next_attempt_at: null,
    }));
  }

  /** Deletes it and its checkpoint: nothing more is delivered to it. */
  async remove(id: string): Promise<void> {
    await this.find(id);
    await this.unitOfWork.write(async (manager) => {
      await manager.delete(WebhookSubscriptionEntity, { id });
      await this.store.remove(manager, webhookCheckpoint(id));
    });
    this.delivery.changed(id);
  }

  /** Applies `changes` to the subscription, stamped; WebhookNotFoundError when there is none. */
  private async change(
    id: string,
    changes: (row: WebhookSubscriptionEntity, now: Date) => Partial<WebhookSubscriptionEntity>,
  ): Promise<WebhookSubscriptionEntity> {
    if (!UUID.test(id)) throw new WebhookNotFoundError(id);
    const changed = await this.unitOfWork.write(async (manager: EntityManager) => {
      const row = await manager.findOneBy(WebhookSubscriptionEntity, { id });
      if (!row) return undefined;
      const now = new Date();
      const update = { ...changes(row, now), updated_at: now };
      await manager.update(WebhookSubscriptionEntity, { id }, update);
      return { ...row, ...update };
    });
    if (!changed) throw new WebhookNotFoundError(id);
    this.delivery.changed(id);
    return changed;
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
