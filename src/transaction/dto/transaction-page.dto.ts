import { ListField, TextField, WireRecord } from '../../wire';
import { TransactionDto } from './transaction.dto';

/**
 * One page of ListTransactions: the transactions, then the cursor of the next page (null on the last).
 * In XML the root is `ArrayOfTransaction`, as the collection it pages through, with the items wrapped
 * in `transactions` as DataContractSerializer writes a list member, so a Transaction is read as
 * everywhere else.
 */
@WireRecord({ name: 'ArrayOfTransaction', schemaName: 'TransactionPage' })
export class TransactionPageDto {
  @ListField(() => TransactionDto) transactions?: TransactionDto[] | null;
  /** Opaque: send it back as `cursor`, with the same filters, for the next page. */
  @TextField() next_cursor?: string | null;
}
