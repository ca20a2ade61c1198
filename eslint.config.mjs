// @ts-check
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import regexp from 'eslint-plugin-regexp';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'coverage/',
      'node_modules/',
      'eslint.config.mjs',
      'jest.config.js',
      '.dependency-cruiser.cjs',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  prettier,
  {
    languageOptions: {
      parserOptions: {
        projectService: {
          allowDefaultProject: [
            'docs/examples/*.mjs',
            'test/support/*.reporter.js',
            'test/support/*.sequencer.js',
            'scripts/*.cjs',
          ],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-extraneous-class': 'off',
      '@typescript-eslint/explicit-module-boundary-types': 'off',
      '@typescript-eslint/no-floating-promises': 'error',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-duplicate-imports': 'error',
    },
  },
  {
    // What runs reads untrusted text: no regular expression there may backtrack super-linearly, at
    // any position it is tried from (a match that may start anywhere moves along the whole input).
    files: ['src/**/*.ts', 'scripts/**/*.ts', 'bench/**/*.ts'],
    plugins: { regexp },
    rules: {
      'regexp/no-super-linear-backtracking': ['error', { report: 'potential' }],
      // A sticky pattern is tried at one position only: it cannot move.
      'regexp/no-super-linear-move': ['error', { report: 'potential', ignorePartial: false }],
    },
  },
  {
    // Entities merge an interface that types the columns @WireColumns adds from the DTO.
    files: ['src/**/entities/*.entity.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-declaration-merging': 'off',
      '@typescript-eslint/no-empty-object-type': 'off',
    },
  },
  {
    // Examples for consumers: plain JavaScript run by Node.js as it stands, typed through JSDoc.
    files: ['docs/examples/*.mjs'],
    languageOptions: {
      globals: { Buffer: 'readonly', console: 'readonly', process: 'readonly' },
    },
  },
  {
    // Jest's reporters and sequencer, and npm's checks: CommonJS run as it stands, typed through JSDoc.
    files: ['test/support/*.reporter.js', 'test/support/*.sequencer.js', 'scripts/*.cjs'],
    languageOptions: { globals: { module: 'writable', process: 'readonly', require: 'readonly' } },
    // CommonJS is what runs on any Node.js before the install: require is its import.
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.spec.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
