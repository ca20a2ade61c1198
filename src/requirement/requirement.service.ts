import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../database/unit-of-work';
import { pickWireScalars } from '../wire/wire-record';
import { RequirementAcquisitionDto } from './dto/requirement-acquisition.dto';
import { RequirementDto } from './dto/requirement.dto';
import { RequirementTypeEntity } from './entities/requirement-type.entity';

@Injectable()
export class RequirementService {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** Every requirement type with its records, ordered by type then record id, in one query. */
  async findAll(): Promise<RequirementDto[]> {
    const types = await this.unitOfWork.read((manager) =>
      manager.find(RequirementTypeEntity, {
        relations: { acquisitions: true },
        order: { requirement_type_id: 'ASC', acquisitions: { requirement_id: 'ASC' } },
      }),
    );
    return types.map((type) => ({
      ...pickWireScalars(RequirementDto, type),
      Acquisition: (type.acquisitions ?? []).map((record) =>
        pickWireScalars(RequirementAcquisitionDto, record),
      ),
    }));
  }
}
