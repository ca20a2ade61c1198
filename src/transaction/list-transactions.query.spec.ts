import { RequestValidationError } from '../wire';
import { decodeCursor, encodeCursor, pageRequestOf } from './list-transactions.query';

const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    if (error instanceof RequestValidationError) return error.modelState;
    throw error;
  }
  throw new Error('accepted');
};

describe('ListTransactions query', () => {
  it('reads the filters, the limit and its default', () => {
    expect(pageRequestOf('')).toEqual({ filter: {}, limit: 50 });
    expect(pageRequestOf('Status=Approved&limit=7&limit=9&agent_id=12&financetype=')).toEqual({
      filter: { status: 'Approved', agentId: 12 },
      limit: 7,
    });
    expect(pageRequestOf('changed_since=2026-03-01T08:00:00%2B08:00').filter).toEqual({
      changedSince: new Date('2026-03-01T00:00:00Z'),
    });
  });

  it('refuses a limit past the cap in the legacy words', () => {
    expect(refusal(() => pageRequestOf('limit=501'))).toEqual({
      'query.limit': ['The field limit must be between 1 and 500.'],
    });
  });

  it('takes back the key a cursor carries, for the same filters only', () => {
    const filter = { status: 'Approved', changedSince: new Date('2026-03-01T00:00:00Z') };
    const after = { transactionId: 1001, stamp: new Date('2026-03-02T10:11:12.345Z') };
    expect(decodeCursor(encodeCursor(filter, after), filter)).toEqual(after);
    expect(decodeCursor(encodeCursor({}, { transactionId: -2147483648 }), {})).toEqual({
      transactionId: -2147483648,
    });
    const impossibleDate = Buffer.from(
      JSON.stringify({
        filter: ['Approved', null, null, '2026-03-01T00:00:00.000Z'],
        after: [1001, '2026-13-45T00:00:00.000Z'],
      }),
    ).toString('base64url');
    expect(refusal(() => decodeCursor(impossibleDate, filter))).toEqual({
      'query.cursor': ['The cursor is not one this service wrote.'],
    });
    expect(Object.keys(refusal(() => decodeCursor(encodeCursor(filter, after), {})))).toEqual([
      'query.cursor',
    ]);
    expect(
      refusal(() => decodeCursor(encodeCursor({}, { transactionId: 5 }), { agentId: 5 })),
    ).toEqual({ 'query.cursor': [expect.stringMatching(/another listing/)] });
  });

  it.each([
    '',
    '%%%',
    'bnVsbA',
    'e30',
    Buffer.from('{"filter":[],"after":[1.5,null]}').toString('base64url'),
  ])('refuses the cursor %j as not one the service wrote', (cursor) => {
    expect(refusal(() => decodeCursor(cursor, {}))).toEqual({
      'query.cursor': ['The cursor is not one this service wrote.'],
    });
  });
});
