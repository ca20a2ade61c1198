import { once } from 'node:events';
import { createWriteStream } from 'node:fs';

/** A generated data set in the service's own import shapes: realistic sizes, deterministic content. */

export interface DatasetSize {
  readonly types: number;
  readonly recordsPerType: number;
  readonly transactions: number;
}

const STAMP = '2026-01-15T09:00:00+08:00';

export const requirementIdOf = (type: number, record: number) => type * 1000 + record;

export function generateRequirements({ types, recordsPerType }: DatasetSize): object[] {
  return Array.from({ length: types }, (_, t) => {
    const type = t + 1;
    return {
      requirement_type_id: type,
      description: `Financing type ${type}`,
      stamp: STAMP,
      Acquisition: Array.from({ length: recordsPerType }, (__, r) => ({
        requirement_id: requirementIdOf(type, r + 1),
        requirement_type_id: type,
        required: r % 3 === 0 ? 'Optional' : 'Required',
        requirement_description: `Document ${r + 1} of financing type ${type}`,
        stamp: STAMP,
        submitted: false,
      })),
    };
  });
}

/** Transaction `index + 1`, not locked, with the checklist of its requirement type. */
export function transactionAt(size: DatasetSize, index: number): object {
  const id = index + 1;
  const type = (index % size.types) + 1;
  return {
    transaction_id: id,
    property_id: (id % 100000) + 1,
    reservation_id: id + 500000,
    unit_id: `U-${id}`,
    developer_id: 7,
    developer: 'Lumina Land Corporation',
    subdivision: 'Villa Verde Estates',
    block: String((id % 40) + 1),
    lot: String((id % 25) + 1),
    client_id: id + 100000,
    brokerid: 11,
    directorid: 21,
    managerid: 31,
    salesagentid: 41,
    requirement_type_id: type,
    financetype: `Financing type ${type}`,
    interestrate: 6.5,
    loanterm: 20,
    sellingprice: 2850000.5,
    downpayment: 570000.1,
    dp_payableinmonths: 12,
    reservation: 25000,
    discount: 0,
    miscellaneous: 142500.25,
    TotalPayments: 595000.35,
    clientname: `Client ${id}`,
    brokername: 'Ramon Dela Cruz',
    directorname: 'Teresa Villanueva',
    managername: 'Paolo Reyes',
    salesagentname: 'Angela Cruz',
    requirementtypename: `Financing type ${type}`,
    requirements: Array.from({ length: size.recordsPerType }, (__, r) => ({
      requirement_id: requirementIdOf(type, r + 1),
      submitted: r < 3,
      stamp: r < 3 ? STAMP : null,
    })),
    requirements_complete: false,
    reservation_paid: true,
    reservationdate: STAMP,
    status: 'Reserved',
    locked: false,
    preparedby_userid: 'bench',
    date_added: STAMP,
    stamp: STAMP,
  };
}

/** Transactions 1..n, none locked, each with the checklist of its requirement type. */
export function generateTransactions(size: DatasetSize): object[] {
  return Array.from({ length: size.transactions }, (_, index) => transactionAt(size, index));
}

/**
 * The transactions as a JSON array file, written one record at a time, so a data set of any size is
 * written in a few megabytes of memory.
 */
export async function writeTransactionsFile(path: string, size: DatasetSize): Promise<void> {
  const file = createWriteStream(path);
  const write = async (text: string) => {
    if (!file.write(text)) await once(file, 'drain');
  };
  await write('[');
  for (let index = 0; index < size.transactions; index++)
    await write(`${index === 0 ? '' : ',\n'}${JSON.stringify(transactionAt(size, index))}`);
  await write(']\n');
  file.end();
  await once(file, 'finish');
}
