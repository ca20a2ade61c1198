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
