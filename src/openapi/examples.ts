import demoRequirements from '../data-import/demo/requirements.json';
import demoTransactions from '../data-import/demo/transactions.json';

/** Examples of the OpenAPI document, taken from the demo data set that a first run loads. */

export const REQUIREMENTS_EXAMPLE = demoRequirements.slice(0, 1);

export const TRANSACTION_EXAMPLE = demoTransactions[0];

/**
 * A whole Transaction naming every member, so that each form field of the example has a value (a form
 * has no null: Swagger UI would post the word).
 */
export const UPDATE_AGENTS_EXAMPLE = {
  ...demoTransactions[0],
  coborrower_id: 502,
  coborrowername: 'Jose Santos',
  brokerid: 12,
  brokername: 'Lourdes Bautista',
  directorid_recruit: 22,
  directorname_recruit: 'Carmela Ramos',
  managerid_recruit: 32,
  managername_recruit: 'Miguel Aquino',
  salesagentid_recruit: 42,
  salesagentname_recruit: 'Bea Mendoza',
};

export const AGENT_HISTORY_EXAMPLE = [
  {
    assignment_id: 1,
    transaction_id: demoTransactions[0].transaction_id,
    stamp: '2026-03-02T09:15:00+08:00',
    changed_by: 'sales.admin',
    changes: [
      { field: 'brokerid', before: 11, after: 12 },
      { field: 'brokername', before: 'Ramon Dela Cruz', after: 'Lourdes Bautista' },
    ],
  },
];
