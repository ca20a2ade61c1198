import { CatalogueVersionEntity } from './catalogue-version.entity';
import { RequirementAcquisitionEntity } from './requirement-acquisition.entity';
import { RequirementTypeEntity } from './requirement-type.entity';

export { CATALOGUE_VERSION_ROW, CatalogueVersionEntity } from './catalogue-version.entity';
export { RequirementAcquisitionEntity } from './requirement-acquisition.entity';
export { RequirementTypeEntity } from './requirement-type.entity';

/** The tables this module owns, registered with TypeORM by the module itself. */
export const REQUIREMENT_ENTITIES = [
  RequirementTypeEntity,
  RequirementAcquisitionEntity,
  CatalogueVersionEntity,
];
