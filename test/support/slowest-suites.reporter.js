// @ts-check
const fs = require('node:fs');
const path = require('node:path');

/**
 * Where the first phase of `npm test` (TEST_PHASE=shared) leaves its files' times for the second
 * (TEST_PHASE=alone), which prints the whole.
 */
const SHARED_TIMES = path.join(process.cwd(), 'node_modules', '.cache', 'jest-shared-phase.tsv');

/**
 * Prints the ten slowest test files at the end of a run, with their share of the whole, so that
 * where the suite's time goes is in front of whoever waits for it; the two phases of `npm test`
 * together, at the end of the second.
 * @implements {import('@jest/reporters').Reporter}
 */
class SlowestSuitesReporter {
  /** @param {Set<import('@jest/reporters').TestContext>} _contexts @param {import('@jest/reporters').AggregatedResult} results */
  onRunComplete(_contexts, results) {
    /** @type {{ file: string, seconds: number }[]} */
    let suites = results.testResults.map(({ testFilePath, perfStats }) => ({
      file: testFilePath.replace(`${process.cwd()}/`, ''),
      seconds: (perfStats.end - perfStats.start) / 1000,
    }));
    if (process.env.TEST_PHASE === 'shared') {
      fs.mkdirSync(path.dirname(SHARED_TIMES), { recursive: true });
      fs.writeFileSync(
        SHARED_TIMES,
        suites.map(({ file, seconds }) => `${seconds}\t${file}\n`).join(''),
      );
      return;
    }
    if (process.env.TEST_PHASE === 'alone') {
      try {
        const shared = fs
          .readFileSync(SHARED_TIMES, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => {
            const [seconds, file] = line.split('\t');
            return { file, seconds: Number(seconds) };
          });
        suites = [...shared, ...suites];
        fs.rmSync(SHARED_TIMES);
      } catch {
        // The second phase run on its own: its files alone.
      }
    }
    suites.sort((a, b) => b.seconds - a.seconds);
    if (suites.length < 2) return;
    const total = suites.reduce((sum, { seconds }) => sum + seconds, 0);
    const lines = suites
      .slice(0, 10)
      .map(
        ({ file, seconds }) =>
          `  ${seconds.toFixed(1).padStart(7)} s  ${((100 * seconds) / total).toFixed(0).padStart(3)}%  ${file}`,
      );
    process.stdout.write(
      `\nThe ten slowest test files (of ${suites.length}, ${total.toFixed(0)} s in all):\n${lines.join('\n')}\n`,
    );
  }
}

module.exports = SlowestSuitesReporter;
