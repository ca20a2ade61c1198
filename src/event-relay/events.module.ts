import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { OutboxRelay } from './outbox-relay';

/**
 * Integration events after commit: the relay to the broker and to the in-process handlers of every
 * module. Units of work write the events (the outbox is the database module's); this delivers them.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [OutboxRelay],
})
export class EventsModule {}
