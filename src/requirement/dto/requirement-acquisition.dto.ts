import { BooleanField, DateField, IntField, TextField, WireRecord } from '../../wire';

/** One document requirement: a catalogue record, or an item of a transaction's checklist (seed 2.2). */
@WireRecord({ name: 'RequirementAcquisition' })
export class RequirementAcquisitionDto {
  @IntField() requirement_id?: number | null;
  @IntField() requirement_type_id?: number | null;
  @TextField() required?: string | null;
  @TextField() requirement_description?: string | null;
  @DateField() stamp?: Date | null;
  @BooleanField() submitted?: boolean | null;
}
