/**
 * The transaction module's door: all that another module may use of it. The rest of this folder is
 * the module's own; the dependency-cruiser plan (modules-through-their-door) refuses an import of it
 * from outside.
 */
export { TransactionModule } from './transaction.module';

// What other modules may ask of a transaction, instead of reading its table.
export {
  AMOUNT_FIELDS,
  type AgentChain,
  type AmountField,
  type TransactionAmounts,
  TransactionQueries,
} from './transaction.queries';
export {
  AGENT_CHAIN_FIELDS,
  AGENT_ROLES,
  type AgentChainField,
  type AgentChainValue,
  type AgentChange,
  type AgentRole,
} from './agent-chain';

// The events it publishes, and the records they and its queries carry.
export { AGENTS_CHANGED, AgentsChangedDto } from './transaction.events';
export { AgentChangeDto } from './dto/agent-assignment.dto';
export { TransactionDto } from './dto/transaction.dto';

// Its tables: for the data source (src/app.entities.ts), and for the bulk import and export
// (src/data-import), which load and dump them whole.
export {
  AgentAssignmentEntity,
  TRANSACTION_ENTITIES,
  TransactionEntity,
  TransactionRequirementEntity,
} from './entities';
