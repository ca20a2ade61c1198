import { DateField, IntField, ListField, TextField, WireRecord } from '../../wire';
import { RequirementAcquisitionDto } from './requirement-acquisition.dto';

/** A requirement type with its acquisition records (seed 2.3); the legacy contract fixed its XML order. */
@WireRecord({
  name: 'Requirement',
  xmlOrder: ['description', 'requirement_type_id', 'stamp', 'Acquisition'],
})
export class RequirementDto {
  @ListField(() => RequirementAcquisitionDto) Acquisition?: RequirementAcquisitionDto[] | null;
  @IntField() requirement_type_id?: number | null;
  @TextField() description?: string | null;
  @DateField() stamp?: Date | null;
}
