import { IntField, WireRecord } from '../../wire';
import { TransactionDto } from './transaction.dto';

/** The body of UpdateAgents: a whole Transaction, validated as one, that must also name its id. */
@WireRecord({ name: 'Transaction', schemaName: 'UpdateAgentsTransaction' })
export class UpdateAgentsDto extends TransactionDto {
  // Redeclared whole: class-validator keeps only the subclass's rules for a redeclared property.
  @IntField({ required: true }) declare transaction_id?: number | null;
}
