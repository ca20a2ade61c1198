import { Required } from '../../wire/wire-fields';
import { TransactionDto } from './transaction.dto';

/** The body of UpdateAgents: a whole Transaction, validated as one, that must also name its id. */
export class UpdateAgentsDto extends TransactionDto {
  @Required() declare transaction_id?: number | null;
}
