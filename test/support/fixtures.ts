/** Records in the service's own JSON shape, as clients and import files send them. */

/**
 * Text of exactly `length` UTF-16 units (as .NET and JavaScript count them), starting with `seed` so
 * values differ; characters of 2, 3 and 4 bytes in UTF-8, mostly 3: near the most bytes for the length.
 */
export function textOfLength(seed: string, length: number): string {
  return `${seed}😀${'山'.repeat(length - seed.length - 3)}é`;
}

export const CATALOGUE = [
  {
    requirement_type_id: 1,
    description: 'Cash',
    stamp: '2026-01-15T09:00:00+08:00',
    Acquisition: [
      {
        requirement_id: 11,
        required: 'Required',
        requirement_description: 'Valid ID',
        stamp: '2026-01-15T09:00:00+08:00',
        submitted: false,
      },
      {
        requirement_id: 12,
        required: 'Optional',
        requirement_description: 'Proof of billing',
        stamp: null,
        submitted: null,
      },
    ],
  },
  {
    requirement_type_id: 2,
    description: 'Bank Financing',
    stamp: '2026-01-16T09:00:00Z',
    Acquisition: [
      {
        requirement_id: 21,
        required: 'Required',
        requirement_description: 'Bank letter of guarantee',
        stamp: null,
        submitted: false,
      },
    ],
  },
  { requirement_type_id: 3, description: 'Empty type', stamp: null, Acquisition: [] },
];

/** A complete, valid Transaction; every member set, so tests can see which ones an operation touches. */
export function transactionRecord(transactionId: number, overrides: Record<string, unknown> = {}) {
  return {
    transaction_id: transactionId,
    property_id: 2101,
    reservation_id: 8001,
    unit_id: 'B1-L2',
    developer_id: 7,
    developer: 'Lumina Land Corporation',
    subdivision: 'Villa Verde Estates',
    block: '1',
    lot: '2',
    client_id: 501,
    coborrower_id: 601,
    brokerid: 11,
    directorid: 21,
    directorid_recruit: 22,
    managerid: 31,
    managerid_recruit: 32,
    salesagentid: 41,
    salesagentid_recruit: 42,
    requirement_type_id: 1,
    submitted_requirements: '11',
    financetype: 'Cash',
    interestrate: 6.375,
    loanterm: 20,
    sellingprice: 2850000.5,
    downpayment: 570000.1234,
    dp_payableinmonths: 12,
    reservation: 25000,
    discount: 50000,
    miscellaneous: 142500.25,
    TotalPayments: 595000.1234,
    clientname: 'Maria Santos',
    coborrowername: 'Jose Santos',
    brokername: 'Ramon Dela Cruz',
    directorname: 'Teresa Villanueva',
    directorname_recruit: 'Eduardo Mendoza',
    managername: 'Paolo Reyes',
    managername_recruit: 'Cristina Aquino',
    salesagentname: 'Angela Cruz',
    salesagentname_recruit: 'Jose Ramos',
    requirementtypename: 'Cash',
    requirements: [
      {
        requirement_id: 11,
        requirement_type_id: 1,
        required: 'Required',
        requirement_description: 'Valid ID',
        stamp: '2026-02-02T10:30:00+08:00',
        submitted: true,
      },
      {
        requirement_id: 12,
        requirement_type_id: 1,
        required: 'Optional',
        requirement_description: 'Proof of billing',
        stamp: null,
        submitted: false,
      },
    ],
    requirements_complete: false,
    reservation_paid: true,
    reservationdate: '2026-01-11T14:00:00+08:00',
    status: 'Reserved',
    locked: false,
    preparedby_userid: 'demo.admin',
    date_added: '2026-01-11T14:05:00+08:00',
    stamp: '2026-02-20T16:45:00+08:00',
    ...overrides,
  };
}
