// @ts-check

// Type checking is its own step of the test command; ts-jest only transpiles here.
/** @type {import('jest').Config['transform']} */
const transform = {
  '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
};

/** @type {import('jest').Config} */
const config = {
  // e2e suites start services and databases; a unit test never comes near this.
  testTimeout: 60000,
  reporters: ['default', '<rootDir>/test/support/slowest-suites.reporter.js'],
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: '.',
      // The generator's own tests sit beside it in scripts.
      roots: ['<rootDir>/src', '<rootDir>/scripts'],
      testRegex: '\\.spec\\.ts$',
      moduleFileExtensions: ['ts', 'js', 'json'],
      transform,
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: '.',
      roots: ['<rootDir>/test'],
      testRegex: '\\.e2e-spec\\.ts$',
      moduleFileExtensions: ['ts', 'js', 'json'],
      transform,
    },
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
