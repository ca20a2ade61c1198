import { Module } from '@nestjs/common';
import { HealthModule } from '../health/health.module';
import { EventFeedController } from './event-feed.controller';
import { EventFeed } from './event-feed.service';

/**
 * The HTTP feed of the committed integration events (EVENTS_FEED): read from the outbox the units of
 * work write, in the order the relay gives them.
 */
@Module({
  // Its readers' waits end with the shutdown's drain.
  imports: [HealthModule],
  controllers: [EventFeedController],
  providers: [EventFeed],
})
export class EventFeedModule {}
