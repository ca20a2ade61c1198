import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { WEBHOOK_ENTITIES } from './entities';
import { WebhookController } from './webhook.controller';
import { WebhookDelivery } from './webhook-delivery';
import { WebhookService } from './webhook.service';

/**
 * Webhooks (WEBHOOKS): subscriptions made through the API, each a consumer of the outbox with its
 * own checkpoint, to which the committed events it selects are POSTed, signed.
 */
@Module({
  imports: [TypeOrmModule.forFeature(WEBHOOK_ENTITIES)],
  controllers: [WebhookController],
  providers: [WebhookService, WebhookDelivery],
})
export class WebhookModule {}
