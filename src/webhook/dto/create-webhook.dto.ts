import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsNotEmpty,
  IsOptional,
  IsString,
  MaxLength,
} from 'class-validator';

/** The longest webhook URL taken: as long as browsers and gateways commonly take. */
export const URL_MAX_LENGTH = 2048;
export const DESCRIPTION_MAX_LENGTH = 500;
/** More event types than the service publishes, with room. */
export const TYPES_MAX_ITEMS = 50;

/** A list as a form post or an XML body carries one item: a single value. */
const asList = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' ? [value] : value;

/** CreateWebhook's body: a plain NestJS DTO, read from JSON, XML and form posts. */
export class CreateWebhookDto {
  @ApiProperty({
    description:
      'Where the events are POSTed: https:// (http:// only where WEBHOOKS_ALLOW_HTTP is set), to a public address.',
    maxLength: URL_MAX_LENGTH,
    example: 'https://crm.example.com/hooks/property-sales',
  })
  @IsString()
  @IsNotEmpty()
  @MaxLength(URL_MAX_LENGTH)
  url!: string;

  @ApiPropertyOptional({
    description:
      'The CloudEvents types delivered (those the service publishes, as its AsyncAPI document lists them); absent or empty for every type.',
    type: [String],
    maxItems: TYPES_MAX_ITEMS,
    example: ['property-sales.transaction.agents-changed'],
  })
  @IsOptional()
  @Transform(asList)
  @IsArray()
  @ArrayMaxSize(TYPES_MAX_ITEMS)
  @IsString({ each: true })
  @MaxLength(255, { each: true })
  types?: string[];

  @ApiPropertyOptional({
    description: "What the subscription is for, for its owner's records; null clears it.",
    type: String,
    nullable: true,
    maxLength: DESCRIPTION_MAX_LENGTH,
    example: 'CRM: agent changes',
  })
  @IsOptional()
  @IsString()
  @MaxLength(DESCRIPTION_MAX_LENGTH)
  description?: string | null;
}
