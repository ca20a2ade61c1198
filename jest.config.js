// @ts-check

// Type checking is its own step of the test command; ts-jest only transpiles here.
/** @type {import('jest').Config['transform']} */
const transform = {
  '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
};

/**
 * The e2e suites of `npm run test:quick`, the inner loop's tier: the modules' own suites, which run
 * the application in-process on SQLite, beside every unit test but the generator's (which builds and
 * tests a whole module).
 */
const QUICK_E2E = [
  'requirements',
  'transactions-read',
  'update-agents',
  'list-transactions',
  'transaction-queries',
  'http-contract',
  'xml-responses',
  'module-errors',
  'legacy-parity',
  'webhook-ownership',
];

/**
 * `npm test` runs in two phases: every file two at a time (TEST_PHASE=shared), then, one at a time
 * (TEST_PHASE=alone), the files that hold the service to a time or cost bound measured in the run
 * itself: an answer within a second, one size's cost against another's, a rate limit's window. No
 * other file shares the two cores with them.
 */
const ALONE = [
  '/test/(concurrency|early-answers|hostile-input|input-cost|rate-limit)\\.e2e-spec\\.ts$',
  '\\.cost\\.spec\\.ts$',
];
const phase = process.env.TEST_PHASE;

/** @type {import('jest').Config['testPathIgnorePatterns']} */
const testPathIgnorePatterns = ['/node_modules/', ...(phase === 'shared' ? ALONE : [])];

/** @type {import('jest').Config} */
const config = {
  // e2e suites start services and databases; a unit test never comes near this.
  testTimeout: 60000,
  // A worker whose heap grew past this after a file is replaced before the next: the modules each
  // e2e file loads are not all let go, and an ever larger heap slows every later file's collections.
  workerIdleMemoryLimit: '1GB',
  reporters: ['default', '<rootDir>/test/support/slowest-suites.reporter.js'],
  testSequencer: '<rootDir>/test/support/longest-first.sequencer.js',
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: '.',
      // The generator's own tests sit beside it in scripts.
      roots: ['<rootDir>/src', '<rootDir>/scripts'],
      testRegex: phase === 'alone' ? ALONE : '\\.spec\\.ts$',
      testPathIgnorePatterns,
      moduleFileExtensions: ['ts', 'js', 'json'],
      transform,
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: '.',
      roots: ['<rootDir>/test'],
      testRegex: phase === 'alone' ? ALONE : '\\.e2e-spec\\.ts$',
      testPathIgnorePatterns,
      moduleFileExtensions: ['ts', 'js', 'json'],
      transform,
    },
    // npm run test:quick: only when asked for, so that npm test runs none of its suites twice.
    ...(process.env.TEST_TIER === 'quick'
      ? [
          {
            displayName: 'quick',
            testEnvironment: 'node',
            rootDir: '.',
            roots: ['<rootDir>/src', '<rootDir>/scripts', '<rootDir>/test'],
            testRegex: `(\\.spec|/test/(${QUICK_E2E.join('|')})\\.e2e-spec)\\.ts$`,
            testPathIgnorePatterns: ['/node_modules/', '/scripts/generate-module\\.spec\\.ts$'],
            moduleFileExtensions: ['ts', 'js', 'json'],
            transform,
          },
        ]
      : []),
    // Records the legacy service's answers (npm run parity:record); only with a legacy service to ask.
    ...(process.env.PARITY_LEGACY_URL
      ? [
          {
            displayName: 'parity-record',
            testEnvironment: 'node',
            rootDir: '.',
            roots: ['<rootDir>/test/parity'],
            testRegex: 'record\\.ts$',
            moduleFileExtensions: ['ts', 'js', 'json'],
            transform,
          },
        ]
      : []),
  ],
};

module.exports = config;
