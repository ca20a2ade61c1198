import { AgentAssignmentEntity } from './agent-assignment.entity';
import { TransactionRequirementEntity } from './transaction-requirement.entity';
import { TransactionEntity } from './transaction.entity';

export { AgentAssignmentEntity } from './agent-assignment.entity';
export { TransactionRequirementEntity } from './transaction-requirement.entity';
export { TransactionEntity } from './transaction.entity';

/** The tables this module owns, registered with TypeORM by the module itself. */
export const TRANSACTION_ENTITIES = [
  TransactionEntity,
  TransactionRequirementEntity,
  AgentAssignmentEntity,
];
