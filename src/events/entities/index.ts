import { EventCheckpointEntity } from './event-checkpoint.entity';
import { OutboxEventEntity } from './outbox-event.entity';

export { EventCheckpointEntity, OutboxEventEntity };

/** The outbox's tables. */
export const EVENT_ENTITIES = [OutboxEventEntity, EventCheckpointEntity];
