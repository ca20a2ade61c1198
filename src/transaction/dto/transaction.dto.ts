import { RequirementAcquisitionDto } from '../../requirement';
import {
  BooleanField,
  DateField,
  DecimalField,
  IntField,
  ListField,
  STORED_TEXT_LENGTH,
  TextField,
  WireRecord,
} from '../../wire';

const MONEY = { min: 1, max: 100000000 };
/**
 * The text UpdateAgents stores, held to its column (CONTRACT §6). Other text is unbounded on the wire,
 * as the legacy's was; the import holds all of it to its columns by its own rule.
 */
export const STORED = { maxLength: STORED_TEXT_LENGTH };

/** A property sales transaction (seed 2.1), members in the seed's order. */
@WireRecord({ name: 'Transaction' })
export class TransactionDto {
  @IntField() transaction_id?: number | null;
  @IntField({ min: 1, max: 100000 }) property_id?: number | null;
  @IntField() reservation_id?: number | null;
  @TextField() unit_id?: string | null;
  @IntField() developer_id?: number | null;
  @TextField() developer?: string | null;
  @TextField() subdivision?: string | null;
  @TextField() block?: string | null;
  @TextField() lot?: string | null;
  @IntField() client_id?: number | null;
  @IntField() coborrower_id?: number | null;
  @IntField() brokerid?: number | null;
  @IntField() directorid?: number | null;
  @IntField() directorid_recruit?: number | null;
  @IntField() managerid?: number | null;
  @IntField() managerid_recruit?: number | null;
  @IntField() salesagentid?: number | null;
  @IntField() salesagentid_recruit?: number | null;
  @IntField({ min: 1, max: 10000 }) requirement_type_id?: number | null;
  @TextField() submitted_requirements?: string | null;
  @TextField({ required: true }) financetype?: string | null;
  @DecimalField() interestrate?: number | null;
  @IntField({ min: 1, max: 100 }) loanterm?: number | null;
  @DecimalField(MONEY) sellingprice?: number | null;
  @DecimalField(MONEY) downpayment?: number | null;
  @IntField() dp_payableinmonths?: number | null;
  @DecimalField(MONEY) reservation?: number | null;
  @DecimalField() discount?: number | null;
  @DecimalField() miscellaneous?: number | null;
  @DecimalField() TotalPayments?: number | null;
  @TextField() clientname?: string | null;
  @TextField() coborrowername?: string | null;
  @TextField(STORED) brokername?: string | null;
  @TextField(STORED) directorname?: string | null;
  @TextField(STORED) directorname_recruit?: string | null;
  @TextField(STORED) managername?: string | null;
  @TextField(STORED) managername_recruit?: string | null;
  @TextField(STORED) salesagentname?: string | null;
  @TextField(STORED) salesagentname_recruit?: string | null;
  @TextField() requirementtypename?: string | null;
  @ListField(() => RequirementAcquisitionDto) requirements?: RequirementAcquisitionDto[] | null;
  @BooleanField() requirements_complete?: boolean | null;
  @BooleanField() reservation_paid?: boolean | null;
  @DateField() reservationdate?: Date | null;
  @TextField() status?: string | null;
  @BooleanField() locked?: boolean | null;
  @TextField() preparedby_userid?: string | null;
  @DateField() date_added?: Date | null;
  @DateField() stamp?: Date | null;
  /**
   * Added to the seed's members: the transaction's version, which counts its changes. The version
   * GetTransaction's ETag names and AgentsChanged events carry, so a consumer compares what it holds
   * with any of them. Read-only: what a request or an import file says here is not read.
   */
  @IntField({ readOnly: true }) row_version?: number | null;
}
