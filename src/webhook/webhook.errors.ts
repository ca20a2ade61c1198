import { DomainError } from '../common/domain-error';

/** The longest part of a client's id a message repeats. */
const QUOTED_ID_LENGTH = 64;

export class WebhooksOffError extends DomainError {
  static readonly status = 404;
  static readonly description =
    'Webhooks are off on this service (WEBHOOKS): its operator turns them on.';
  static readonly example = new WebhooksOffError();
  readonly code = 'webhooks_off';
  readonly title = 'Webhooks off';
  constructor() {
    super(
      'Webhooks are off on this service: its operator turns them on with WEBHOOKS=true. The events ' +
        'are published to the broker when EVENTS_URL is set, and served by GET /api/Events with EVENTS_FEED=true.',
    );
  }
}

export class WebhookNotFoundError extends DomainError {
  static readonly status = 404;
  static readonly description = 'No webhook subscription has this id (deleted, or never made).';
  static readonly example = new WebhookNotFoundError('3f1c9a52-7d4e-4b8a-9e21-6c0d5f7a8b93');
  readonly code = 'webhook_not_found';
  readonly title = 'Webhook not found';
  constructor(id: string) {
    const quoted = id.length > QUOTED_ID_LENGTH ? `${id.slice(0, QUOTED_ID_LENGTH)}…` : id;
    super(`No webhook subscription with id '${quoted}' exists.`);
  }
}

/** Which cap a CreateWebhook reached: the caller's own (per owner), or the service's. */
export type WebhookCap = 'owner' | 'service';

/**
 * A cap on subscriptions reached. 409, not 429: the service's state refuses the request, and only a
 * change of it helps (a subscription deleted, a cap raised); a 429 tells a client to wait and send it
 * again, which here would fail the same way for as long as nothing changes.
 */
export class WebhookLimitError extends DomainError {
  static readonly status = 409;
  static readonly description =
    "A cap on webhook subscriptions is reached, the caller's own (WEBHOOKS_MAX_PER_OWNER) or the " +
    "service's (WEBHOOKS_MAX_SUBSCRIPTIONS); nothing was created. Delete one, or ask the operator to raise the cap.";
  static readonly example = new WebhookLimitError('owner', 25);
  readonly code = 'webhook_limit_reached';
  readonly title = 'Webhook limit reached';
  constructor(
    readonly cap: WebhookCap,
    limit: number,
  ) {
    super(
      cap === 'owner'
        ? `The caller has ${limit} webhook subscriptions, as many as one owner may have ` +
            '(WEBHOOKS_MAX_PER_OWNER): delete one first, or ask the operator to raise the cap.'
        : `The service holds ${limit} webhook subscriptions, as many as it takes ` +
            '(WEBHOOKS_MAX_SUBSCRIPTIONS): ask the operator to raise the cap or delete unused ones.',
    );
  }
}
