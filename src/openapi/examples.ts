import demoRequirements from '../data-import/demo/requirements.json';
import demoTransactions from '../data-import/demo/transactions.json';

/** Examples of the OpenAPI document, taken from the demo data set that a first run loads. */

export const REQUIREMENTS_EXAMPLE = demoRequirements.slice(0, 1);

/** As a first run answers it: loaded at version 1. */
export const TRANSACTION_EXAMPLE = { ...demoTransactions[0], row_version: 1 };

/**
 * What UpdateAgents is for: the id, financetype (required of any Transaction) and the agent members
 * being changed, here transaction 1001's broker. An absent member is kept, so "Try it out" sent
 * unchanged changes only these.
 */
export const UPDATE_AGENTS_EXAMPLE = {
  transaction_id: demoTransactions[0].transaction_id,
  financetype: demoTransactions[0].financetype,
  brokerid: 12,
  brokername: 'Lourdes Bautista',
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
    row_version: 2,
  },
];
