/**
 * The plan of the code, checked by `npm run lint`: no import cycles between files or folders, the
 * wire layer reached only through its index, the shared folders importing no feature module, each
 * feature module reached only through its door (its index.ts), and the consumer examples importing
 * nothing of the service.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-folder-cycle',
      comment:
        'Folders depend on each other one way only (src/wire/http on src/wire/model, never back).',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-file-cycle',
      comment: 'Except TypeORM entities: the two sides of a relation name each other.',
      severity: 'error',
      from: { path: '^src/', pathNot: '/entities/' },
      to: { circular: true },
    },
    {
      name: 'wire-through-its-index',
      comment: 'Outside src/wire, the wire layer is imported from src/wire (its index.ts) only.',
      severity: 'error',
      from: { path: '^(src|test|bench|scripts)/', pathNot: '^src/wire/' },
      to: { path: '^src/wire/.', pathNot: '^src/wire/index\\.ts$' },
    },
    {
      name: 'shared-folders-import-no-module',
      comment: 'Feature modules register themselves; shared folders never reach into one.',
      severity: 'error',
      // Named by what they are, so that a new module is covered without being listed here.
      from: { path: '^src/(common|config|database|logging|auth|health|metrics|wire)/' },
      to: {
        path: '^src/[^/]+/',
        pathNot: '^src/(common|config|database|logging|auth|health|metrics|wire|events|tracing)/',
      },
    },
    {
      name: 'modules-through-their-door',
      comment:
        'Outside a feature module (a folder of src/ that is not a shared one), it is imported from its ' +
        'index.ts only; inside, its files import each other directly. Tests and benchmarks may reach ' +
        'inside: they test and measure the modules.',
      severity: 'error',
      // $1: the importing folder (or top-level file), whose own files are not behind a door to it.
      from: { path: '^src/([^/]+)' },
      to: {
        // Any folder not named as shared, so that a new module is covered without being listed here.
        path: '^src/[^/]+/',
        pathNot: [
          '^src/$1/',
          '^src/[^/]+/index\\.ts$',
          '^src/(common|config|database|logging|auth|health|metrics|wire|events|event-relay|openapi|tracing)/',
          // The demo records: data the OpenAPI examples show, not the module's code.
          '^src/data-import/demo/[^/]+\\.json$',
        ],
      },
    },
    {
      name: 'examples-stand-alone',
      comment:
        'The examples in docs/examples are copied into other projects: they import packages, never the service.',
      severity: 'error',
      from: { path: '^docs/examples/' },
      to: { path: '^(src|test|bench|scripts|dist)/' },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    // Unit specs sit beside the code they test and may use any module's DTOs as fixtures.
    exclude: { path: '\\.spec\\.ts$' },
  },
};
