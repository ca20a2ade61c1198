import demoRequirements from '../src/data-import/demo/requirements.json';
import demoTransactions from '../src/data-import/demo/transactions.json';
import { PARITY_CASES, resolvedRequest } from './parity/cases';
import { DELIBERATE_DIFFERENCES, type DeliberateDifference } from './parity/deliberate-differences';
import { exchange, type ParityAnswer, recordValues, withoutAddedMembers } from './parity/exchange';
import { LEGACY_EXCHANGES } from './parity/recorded';
import { describeOnEachDatabase } from './support/test-app';

const differenceOf = new Map<string, DeliberateDifference>(
  DELIBERATE_DIFFERENCES.flatMap((difference) =>
    difference.cases.map((name): [string, DeliberateDifference] => [name, difference]),
  ),
);

const recordedAnswer = new Map(LEGACY_EXCHANGES.map(({ name, legacy }) => [name, legacy]));

describe('the recorded legacy exchanges', () => {
  it('are the parity cases as they stand, in order (npm run parity:record re-records them)', () => {
    expect(LEGACY_EXCHANGES.map(({ name, group, request }) => ({ name, group, request }))).toEqual(
      PARITY_CASES.map((parityCase) => ({
        name: parityCase.name,
        group: parityCase.group,
        request: resolvedRequest(parityCase, (name) => recordedAnswer.get(name)),
      })),
    );
  });

  it('name no case twice, and every deliberate difference names recorded cases once', () => {
    const names = PARITY_CASES.map(({ name }) => name);
    expect(new Set(names).size).toBe(names.length);
    const listed = DELIBERATE_DIFFERENCES.flatMap(({ cases }) => cases);
    expect(new Set(listed).size).toBe(listed.length);
    for (const name of listed) expect(names).toContain(name);
  });
});

describeOnEachDatabase('parity with the legacy service, on its demo data', (context) => {
  beforeAll(async () => {
    await context.running.seed({ requirements: demoRequirements, transactions: demoTransactions });
  });

  it.each(PARITY_CASES.map((parityCase, index) => ({ parityCase, ...LEGACY_EXCHANGES[index] })))(
    '$parityCase.name',
    async ({ parityCase, request, legacy }) => {
      const compared = (answer: ParityAnswer) =>
        parityCase.record ? recordValues(answer, parityCase.record) : answer;
      const ours = compared(withoutAddedMembers(await exchange(context.running.baseUrl, request)));
      const difference = differenceOf.get(parityCase.name);
      if (!difference) {
        expect(ours).toEqual(compared(legacy));
        return;
      }
      // Both sides as the table documents them, and still different.
      expect(legacy).toMatchObject(difference.legacyAnswer);
      expect(ours).toMatchObject(difference.answer);
      expect(ours).not.toEqual(compared(legacy));
    },
  );
});
