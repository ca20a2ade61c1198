import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

@ApiSchema({
  name: 'ProblemDetails',
  description:
    'A JSON error: the legacy Web API members (Message, ModelState) and the RFC 9457 ones in one ' +
    "body. Written as the negotiated JSON type, application/json by default (what a .NET client's " +
    'ReadAsAsync<HttpError>() reads) or text/json, and as application/problem+json only when the ' +
    'Accept header asks for it.',
})
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

@ApiSchema({
  name: 'LegacyError',
  description: 'An XML error: the legacy Web API Error element, without a namespace.',
})
export class LegacyErrorSchema {
  @ApiProperty({ example: 'The request is invalid.' }) Message!: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'One element per member, named as XmlConvert.EncodeLocalName encodes it.',
  })
  ModelState?: Record<string, string>;
}
