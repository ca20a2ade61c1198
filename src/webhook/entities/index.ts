import { WebhookSubscriptionEntity } from './webhook-subscription.entity';

export {
  WEBHOOK_STATUSES,
  type WebhookStatus,
  WebhookSubscriptionEntity,
} from './webhook-subscription.entity';

/** The tables this module owns, registered with TypeORM by the module itself. */
export const WEBHOOK_ENTITIES = [WebhookSubscriptionEntity];
