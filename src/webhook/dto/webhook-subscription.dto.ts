import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { formatWireDate } from '../../wire';
import { WEBHOOK_STATUSES, type WebhookStatus, type WebhookSubscriptionEntity } from '../entities';

/** A subscription as its routes answer with it: never its secret, which only create and rotate show. */
export class WebhookSubscriptionDto {
  @ApiProperty({ format: 'uuid', example: '3f1c9a52-7d4e-4b8a-9e21-6c0d5f7a8b93' })
  id!: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      "Who it belongs to: the API key's name or the token's subject that made it. null: the operator's (made without authentication, or before subscriptions had owners), which only webhooks:admin reaches.",
    example: 'crm-sync',
  })
  owner!: string | null;
  @ApiProperty({ example: 'https://crm.example.com/hooks/property-sales' }) url!: string;
  @ApiProperty({
    type: [String],
    description: 'The CloudEvents types delivered; empty for every type.',
    example: ['property-sales.transaction.agents-changed'],
  })
  types!: string[];
  @ApiProperty({ type: String, nullable: true, example: 'CRM: agent changes' })
  description!: string | null;
  @ApiProperty({
    enum: WEBHOOK_STATUSES,
    description:
      'active: delivers; paused: by PauseWebhook; disabled: its deliveries failed for WEBHOOKS_DISABLE_AFTER_MS. Paused and disabled ones keep their checkpoint.',
    example: 'active',
  })
  status!: WebhookStatus;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Why it was disabled; null unless it is.',
    example: null,
  })
  disabled_reason!: string | null;
  @ApiProperty({ format: 'date-time', example: '2026-11-28T09:15:00.000+00:00' })
  created_at!: string;
  @ApiProperty({ format: 'date-time', example: '2026-11-28T09:15:00.000+00:00' })
  updated_at!: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'The CloudEvents id of the last event it acknowledged (2xx); null before the first.',
    example: null,
  })
  last_delivered_event_id!: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'Since when its deliveries fail without a success; null while they succeed.',
    example: null,
  })
  failing_since!: string | null;

  static of(row: WebhookSubscriptionEntity): WebhookSubscriptionDto {
    return {
      id: row.id,
      owner: row.owner,
      url: row.url,
      types: row.types,
      description: row.description,
      status: row.status,
      disabled_reason: row.disabled_reason,
      created_at: formatWireDate(row.created_at),
      updated_at: formatWireDate(row.updated_at),
      last_delivered_event_id: row.last_delivered_event_id,
      failing_since: row.failing_since && formatWireDate(row.failing_since),
    };
  }
}

/** A subscription with its signing secret: CreateWebhook's and RotateWebhookSecret's answer. */
export class WebhookWithSecretDto extends WebhookSubscriptionDto {
  @ApiPropertyOptional({
    description:
      'The signing secret (Standard Webhooks: whsec_ and base64): shown only in this answer. Verify each delivery with it.',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  })
  secret!: string;

  static withSecret(row: WebhookSubscriptionEntity): WebhookWithSecretDto {
    return { ...WebhookSubscriptionDto.of(row), secret: row.secret };
  }
}
