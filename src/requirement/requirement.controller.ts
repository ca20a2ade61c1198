import { Controller, Get } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { AuthenticationError } from '../auth/authenticator';
import { RateLimitedError } from '../auth/rate-limit.guard';
import { declareScope, RequiresScope } from '../auth/scopes';
import { DatabaseUnavailableError } from '../database/database-errors';
import { VersionedBody, WireErrors, WireResponse, WireTag } from '../wire';
import { REQUIREMENTS_EXAMPLE } from '../openapi/examples';
import { RequirementDto } from './dto/requirement.dto';
import { RequirementService } from './requirement.service';

export const REQUIREMENTS_READ = declareScope(
  'requirements:read',
  'Read the requirement catalogue (GetRequirements).',
);

@WireTag(
  'Requirement',
  'The requirement catalogue: each requirement type with its acquisition records.',
)
@Controller('Requirement')
export class RequirementController {
  constructor(private readonly requirements: RequirementService) {}

  @Get('GetRequirements')
  @ApiOperation({
    operationId: 'GetRequirements',
    summary: 'Every requirement type with its acquisition records, ordered by type then record id.',
    description:
      'The whole catalogue in one body, served from bytes written once per catalogue version; its ' +
      'ETag changes only when the catalogue does, so If-None-Match makes a periodic read a 304.',
  })
  @WireResponse(RequirementDto, {
    list: true,
    description: 'The catalogue (a top-level array; ArrayOfRequirement in XML).',
    example: REQUIREMENTS_EXAMPLE,
  })
  @RequiresScope(REQUIREMENTS_READ)
  @WireErrors(304, AuthenticationError, RateLimitedError, 500, DatabaseUnavailableError)
  async getRequirements(): Promise<VersionedBody<RequirementDto[]>> {
    // Served from bytes serialized once per catalogue version; the version check is one row read.
    return new VersionedBody('requirements', await this.requirements.version(), () =>
      this.requirements.catalogue(),
    );
  }
}
