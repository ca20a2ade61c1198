import { CatalogueVersionEntity } from '../requirement/entities/catalogue-version.entity';
import { RequirementAcquisitionEntity } from '../requirement/entities/requirement-acquisition.entity';
import { RequirementTypeEntity } from '../requirement/entities/requirement-type.entity';
import { AgentAssignmentEntity } from '../transaction/entities/agent-assignment.entity';
import { TransactionRequirementEntity } from '../transaction/entities/transaction-requirement.entity';
import { TransactionEntity } from '../transaction/entities/transaction.entity';

export const ENTITIES = [
  RequirementTypeEntity,
  RequirementAcquisitionEntity,
  CatalogueVersionEntity,
  TransactionEntity,
  TransactionRequirementEntity,
  AgentAssignmentEntity,
];
