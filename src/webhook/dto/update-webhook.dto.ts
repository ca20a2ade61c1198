import { PartialType } from '@nestjs/swagger';
import { CreateWebhookDto } from './create-webhook.dto';

/** UpdateWebhook's body: the members given are changed, the others kept. */
export class UpdateWebhookDto extends PartialType(CreateWebhookDto) {}
