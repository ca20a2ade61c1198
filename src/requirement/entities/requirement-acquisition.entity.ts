import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { WireColumns, type WireColumnsOf } from '../../database/wire-columns';
import { RequirementAcquisitionDto } from '../dto/requirement-acquisition.dto';
import { RequirementTypeEntity } from './requirement-type.entity';

/** A catalogue record: one document that a requirement type asks for. */
@Entity('requirement_acquisition')
@Index('IDX_requirement_acquisition_type', ['requirement_type_id', 'requirement_id'])
@WireColumns(RequirementAcquisitionDto)
export class RequirementAcquisitionEntity {
  @PrimaryColumn({ type: 'int' }) requirement_id!: number;
  @Column({ type: 'int' }) requirement_type_id!: number;

  @ManyToOne(() => RequirementTypeEntity, (type) => type.acquisitions, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'requirement_type_id' })
  requirementType?: RequirementTypeEntity;
}

// The columns @WireColumns adds, typed for the compiler (declaration merging, allowed for entities).
export interface RequirementAcquisitionEntity extends WireColumnsOf<
  RequirementAcquisitionDto,
  'requirement_id' | 'requirement_type_id'
> {}
