import { Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { BatchedReactions } from './batched-reactions';
import { OutboxRelay } from './outbox-relay';

/**
 * Integration events after commit: the relay to the broker and to the after-commit handlers of every
 * module, and the batched reactions, which any module may start. Units of work write the events (the
 * outbox is the database module's); this delivers them.
 */
@Global()
@Module({
  imports: [DiscoveryModule],
  providers: [OutboxRelay, BatchedReactions],
  exports: [BatchedReactions],
})
export class EventsModule {}
