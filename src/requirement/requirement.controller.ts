import { Controller, Get } from '@nestjs/common';
import { WireResponse } from '../wire/wire-response.decorator';
import { RequirementDto } from './dto/requirement.dto';
import { RequirementService } from './requirement.service';

@Controller('Requirement')
export class RequirementController {
  constructor(private readonly requirements: RequirementService) {}

  @Get('GetRequirements')
  @WireResponse(RequirementDto, { list: true })
  getRequirements(): Promise<RequirementDto[]> {
    return this.requirements.findAll();
  }
}
