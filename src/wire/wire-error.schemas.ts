import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

/** JSON errors: RFC 9457 problem details with the legacy Web API members. */
@ApiSchema({ name: 'ProblemDetails' })
export class ProblemDetailsSchema {
  @ApiProperty({ example: 'urn:property-sales:problem:invalid_request' }) type!: string;
  @ApiProperty({ example: 'Invalid request' }) title!: string;
  @ApiProperty({ type: 'integer', format: 'int32', example: 400 }) status!: number;
  @ApiProperty({ example: 'The request is invalid.' }) detail!: string;
  @ApiProperty({ description: 'The legacy message.', example: 'The request is invalid.' })
  Message!: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'string' } },
    description: 'Violations by member (400 only).',
    example: { 'transaction.loanterm': ['The field loanterm must be between 1 and 100.'] },
  })
  ModelState?: Record<string, string[]>;
  @ApiProperty({ description: 'The X-Request-Id of the request.', required: false })
  requestId?: string;
}

/** XML errors: the legacy `<Error>` element, without a namespace. */
@ApiSchema({ name: 'LegacyError' })
export class LegacyErrorSchema {
  @ApiProperty({ example: 'The request is invalid.' }) Message!: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'One element per member, named as XmlConvert.EncodeLocalName encodes it.',
  })
  ModelState?: Record<string, string>;
}
