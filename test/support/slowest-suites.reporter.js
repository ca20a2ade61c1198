// @ts-check
const fs = require('node:fs');
const path = require('node:path');

/**
 * Where the first phase of `npm test` (TEST_PHASE=shared) leaves its files' times and its own for
 * the second (TEST_PHASE=alone), which prints the whole.
 */
const SHARED_TIMES = path.join(process.cwd(), 'node_modules', '.cache', 'jest-shared-phase.json');

/**
 * @typedef {{ file: string, seconds: number }} FileTime
 * @typedef {{ files: FileTime[], wallSeconds: number }} PhaseTimes
 */

/** @returns {PhaseTimes} */
function sharedPhase() {
  try {
    /** @type {unknown} */
    const times = JSON.parse(fs.readFileSync(SHARED_TIMES, 'utf8'));
    fs.rmSync(SHARED_TIMES);
    return /** @type {PhaseTimes} */ (times);
  } catch {
    // The second phase run on its own: its files alone.
    return { files: [], wallSeconds: 0 };
  }
}

/**
 * Prints the ten slowest test files at the end of a run, with their share of the files' time, and
 * the run's time on the clock (files run side by side add up to more), so that where the suite's
 * time goes is in front of whoever waits for it; the two phases of `npm test` together, at the end of
 * the second.
 * @implements {import('@jest/reporters').Reporter}
 */
class SlowestSuitesReporter {
  /** @param {Set<import('@jest/reporters').TestContext>} _contexts @param {import('@jest/reporters').AggregatedResult} results */
  onRunComplete(_contexts, results) {
    /** @type {PhaseTimes} */
    const run = {
      files: results.testResults.map(({ testFilePath, perfStats }) => ({
        file: testFilePath.replace(`${process.cwd()}/`, ''),
        seconds: (perfStats.end - perfStats.start) / 1000,
      })),
      wallSeconds: (Date.now() - results.startTime) / 1000,
    };
    if (process.env.TEST_PHASE === 'shared') {
      fs.mkdirSync(path.dirname(SHARED_TIMES), { recursive: true });
      fs.writeFileSync(SHARED_TIMES, JSON.stringify(run));
      return;
    }
    const shared =
      process.env.TEST_PHASE === 'alone' ? sharedPhase() : { files: [], wallSeconds: 0 };
    const suites = [...shared.files, ...run.files].sort((a, b) => b.seconds - a.seconds);
    if (suites.length < 2) return;
    const total = suites.reduce((sum, { seconds }) => sum + seconds, 0);
    const wall = shared.wallSeconds + run.wallSeconds;
    const lines = suites
      .slice(0, 10)
      .map(
        ({ file, seconds }) =>
          `  ${seconds.toFixed(1).padStart(7)} s  ${((100 * seconds) / total).toFixed(0).padStart(3)}%  ${file}`,
      );
    process.stdout.write(
      `\nThe ten slowest test files (of ${suites.length}: ${total.toFixed(0)} s of files, ${wall.toFixed(0)} s on the clock):\n${lines.join('\n')}\n`,
    );
  }
}

module.exports = SlowestSuitesReporter;
