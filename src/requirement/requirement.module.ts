import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { REQUIREMENT_ENTITIES } from './entities';
import { RequirementController } from './requirement.controller';
import { RequirementService } from './requirement.service';

@Module({
  imports: [TypeOrmModule.forFeature(REQUIREMENT_ENTITIES)],
  controllers: [RequirementController],
  providers: [RequirementService],
})
export class RequirementModule {}
