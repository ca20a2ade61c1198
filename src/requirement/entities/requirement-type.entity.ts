import { Entity, OneToMany, PrimaryColumn } from 'typeorm';
import { WireColumns, type WireColumnsOf } from '../../database/wire-columns';
import { RequirementDto } from '../dto/requirement.dto';
import { RequirementAcquisitionEntity } from './requirement-acquisition.entity';

/** A requirement type: the document set of one kind of financing. */
@Entity('requirement_type')
@WireColumns(RequirementDto)
export class RequirementTypeEntity {
  @PrimaryColumn({ type: 'int' }) requirement_type_id!: number;

  @OneToMany(() => RequirementAcquisitionEntity, (acquisition) => acquisition.requirementType)
  acquisitions?: RequirementAcquisitionEntity[];
}

// The columns @WireColumns adds, typed for the compiler (declaration merging, allowed for entities).
export interface RequirementTypeEntity extends WireColumnsOf<
  RequirementDto,
  'requirement_type_id'
> {}
