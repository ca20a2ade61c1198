// @ts-check
const TestSequencer = require('@jest/test-sequencer').default;

/**
 * The files that take longest, longest first (CI's runs): with two files at a time, one of them
 * started last would run alone at the end, the other core idle.
 */
const LONGEST = [
  'test/generate-module.e2e-spec.ts',
  'test/data-import-export.e2e-spec.ts',
  'test/galera.e2e-spec.ts',
  'test/data-import-streaming.e2e-spec.ts',
  'test/data-import.e2e-spec.ts',
  'test/event-faults.e2e-spec.ts',
  'test/webhooks.e2e-spec.ts',
  'test/update-agents.e2e-spec.ts',
  'test/operations.e2e-spec.ts',
  'test/auth.e2e-spec.ts',
];

/**
 * Jest's order (failed first, then longest first by the times it kept of earlier runs), and on a
 * fresh clone, where it has kept none and goes by file size, the longest files first.
 */
class LongestFirstSequencer extends TestSequencer {
  /** @param {import('@jest/test-result').Test[]} tests */
  sort(tests) {
    const sorted = /** @type {import('@jest/test-result').Test[]} */ (super.sort(tests));
    if (sorted.some(({ duration }) => duration != null)) return sorted;
    /** @param {import('@jest/test-result').Test} test */
    const rank = ({ path }) => {
      const index = LONGEST.findIndex((file) => path.endsWith(`/${file}`));
      return index < 0 ? LONGEST.length : index;
    };
    return [...sorted].sort((a, b) => rank(a) - rank(b));
  }
}

module.exports = LongestFirstSequencer;
