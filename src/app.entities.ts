import { EVENT_ENTITIES } from './events/entities';
import { REQUIREMENT_ENTITIES } from './requirement';
import { TRANSACTION_ENTITIES } from './transaction';
import { WEBHOOK_ENTITIES } from './webhook';

/**
 * Every module's tables, for what runs outside the Nest application: the TypeORM CLI (ormconfig.ts)
 * and the schema tests. The service itself loads each module's entities from its `forFeature`.
 */
export const APP_ENTITIES = [
  ...REQUIREMENT_ENTITIES,
  ...TRANSACTION_ENTITIES,
  ...EVENT_ENTITIES,
  ...WEBHOOK_ENTITIES,
];
