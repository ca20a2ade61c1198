// @ts-check
/**
 * Prints the ten slowest test files at the end of a run, with their share of the whole, so that
 * where the suite's time goes is in front of whoever waits for it.
 * @implements {import('@jest/reporters').Reporter}
 */
class SlowestSuitesReporter {
  /** @param {Set<import('@jest/reporters').TestContext>} _contexts @param {import('@jest/reporters').AggregatedResult} results */
  onRunComplete(_contexts, results) {
    const suites = results.testResults
      .map(({ testFilePath, perfStats }) => ({
        file: testFilePath.replace(`${process.cwd()}/`, ''),
        seconds: (perfStats.end - perfStats.start) / 1000,
      }))
      .sort((a, b) => b.seconds - a.seconds);
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
