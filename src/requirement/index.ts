/**
 * The requirement module's door: all that another module may use of it. The rest of this folder is
 * the module's own; the dependency-cruiser plan (modules-through-their-door) refuses an import of it
 * from outside.
 */
export { RequirementModule } from './requirement.module';

// The records it serves; a transaction's checklist items carry the catalogue's.
export { RequirementAcquisitionDto } from './dto/requirement-acquisition.dto';
export { RequirementDto } from './dto/requirement.dto';

// Its tables: for the data source (src/app.entities.ts), the transaction's checklist, which joins
// each item to its catalogue record, and the bulk import and export (src/data-import), which load
// and dump them whole.
export {
  CATALOGUE_VERSION_ROW,
  CatalogueVersionEntity,
  REQUIREMENT_ENTITIES,
  RequirementAcquisitionEntity,
  RequirementTypeEntity,
} from './entities';
