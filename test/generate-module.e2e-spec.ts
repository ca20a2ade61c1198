import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { childEnvironment, REPO_ROOT, TemporaryDirectories } from './support/processes';

const execute = promisify(execFile);

/** Generous: each generation builds the service twice and migrates two databases, on a busy machine. */
const GENERATE_MS = 8 * 60_000;

interface Outcome {
  readonly code: number;
  readonly output: string;
}

/** Runs a command in `cwd` to its end, with its exit code and what it printed. */
async function run(cwd: string, command: string, args: readonly string[]): Promise<Outcome> {
  const env = childEnvironment({});
  // The suites it runs are a jest run of their own, not a worker of this one.
  delete env.JEST_WORKER_ID;
  try {
    const { stdout, stderr } = await execute(command, [...args], {
      cwd,
      env,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

/** What the checks print when they fail, so that the failure says why. */
const expectSuccess = (outcome: Outcome, what: string) =>
  expect({ what, code: outcome.code, output: outcome.code === 0 ? '' : outcome.output }).toEqual({
    what,
    code: 0,
    output: '',
  });

/** The TypeScript the generators below write or change. */
const WRITTEN = [
  'src/sales-target',
  'src/branch-office',
  'src/survey',
  'src/app.module.ts',
  'src/app.entities.ts',
  'src/database/migrations',
  'test/sales-target.e2e-spec.ts',
  'test/branch-office.e2e-spec.ts',
  'test/survey.e2e-spec.ts',
];
/** The documents they rewrite. */
const DOCUMENTS = ['openapi.json', 'asyncapi.json', 'docs/modules.md'];

/**
 * The generator as a new team member runs it, in a scratch copy of the repository (its files as they
 * stand, node_modules linked): a module with each option, then what `npm test` runs on them. Three
 * modules cover every option between them: SalesTarget (int key, list, PUT, reacting to the
 * transaction and import events, each stimulated through its module, and back-filling the
 * transactions), BranchOffice (serving the resource BranchDesk: a text key in lower case, list, POST,
 * reacting to SalesTarget's event, published as its module would) and Survey (a create-or-replace
 * PUT).
 */
describe('npm run generate:module, end to end', () => {
  const directories = new TemporaryDirectories('generate-module');
  let copy: string;

  beforeAll(async () => {
    copy = await directories.make();
    const { stdout } = await execute(
      'git',
      ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
      { cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024 },
    );
    const files = stdout.split('\0').filter((file) => file && existsSync(join(REPO_ROOT, file)));
    for (const file of files) {
      await mkdir(dirname(join(copy, file)), { recursive: true });
      await copyFile(join(REPO_ROOT, file), join(copy, file));
    }
    await symlink(join(REPO_ROOT, 'node_modules'), join(copy, 'node_modules'));
  });

  afterAll(() => directories.removeAll());

  /** The generator as the guide runs it: `npm run generate:module`, which builds it first. */
  const generate = (args: readonly string[]) =>
    run(copy, 'npm', ['run', '--silent', 'generate:module', '--', ...args]);
  /**
   * The generator as built by the first run: what a newcomer's second module runs, less the build
   * (it compiles what it writes itself; the project's build would not change it).
   */
  const generator = join('dist', 'scripts', 'generate-module.js');
  const generateAgain = (args: readonly string[]) =>
    run(copy, process.execPath, [generator, ...args]);

  it(
    'writes SalesTarget with --list --update put and two --reacts-to, and registers it',
    async () => {
      expectSuccess(
        await generate([
          'SalesTarget',
          '--list',
          '--update',
          'put',
          '--reacts-to',
          'transaction.agents-changed',
          '--reacts-to',
          'property-sales.data.imported',
        ]),
        'generate SalesTarget',
      );
      expect(
        (await readdir(join(copy, 'src', 'sales-target'), { recursive: true })).sort(),
      ).toEqual([
        'dto',
        'dto/list-sales-targets.query.ts',
        'dto/sales-target.dto.ts',
        'entities',
        'entities/index.ts',
        'entities/sales-target.entity.ts',
        'index.ts',
        'sales-target.controller.ts',
        'sales-target.errors.ts',
        'sales-target.events.ts',
        'sales-target.module.ts',
        'sales-target.reactions.ts',
        'sales-target.service.ts',
      ]);
      const openapi = await readFile(join(copy, 'openapi.json'), 'utf8');
      for (const operation of ['GetSalesTarget', 'ListSalesTargets', 'CreateSalesTarget'])
        expect(openapi).toContain(`"operationId": "${operation}"`);
      expect(openapi).toContain(
        '"/api/SalesTarget/UpdateSalesTarget/{sales_target_id}": {\n      "put"',
      );
      // Its events are in the AsyncAPI document (@Publishes) and the module map, its handlers too.
      const asyncapi = await readFile(join(copy, 'asyncapi.json'), 'utf8');
      for (const channel of [
        'sales-target.created',
        'sales-target.updated',
        'sales-target.reacted',
        'sales-target.backfilled',
      ])
        expect(asyncapi).toContain(`"${channel}": {`);
      const map = await readFile(join(copy, 'docs', 'modules.md'), 'utf8');
      expect(map).toContain('## sales-target');
      expect(map).toContain('`SalesTargetReactions.agentsChanged` on `AGENTS_CHANGED`');
      expect(map).toContain('`SalesTargetReactions.backfill`');
    },
    GENERATE_MS,
  );

  it(
    'writes BranchOffice serving BranchDesk with --key text --key-case lower --list --update post, reacting to the first module’s event',
    async () => {
      expectSuccess(
        await generateAgain([
          'BranchOffice',
          '--resource',
          'BranchDesk',
          '--key',
          'text',
          '--key-case',
          'lower',
          '--list',
          '--update',
          'post',
          '--reacts-to',
          'sales-target.updated',
        ]),
        'generate BranchOffice',
      );
      const dto = await readFile(
        join(copy, 'src', 'branch-office', 'dto', 'branch-desk.dto.ts'),
        'utf8',
      );
      expect(dto).toContain('export const BRANCH_DESK_CODE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;');
      expect(dto).toMatch(/pattern: BRANCH_DESK_CODE \}\) branch_desk_code\?:\s+string \| null;/);
      const reactions = await readFile(
        join(copy, 'src', 'branch-office', 'branch-office.reactions.ts'),
        'utf8',
      );
      expect(reactions).toContain(
        "import { SALES_TARGET_UPDATED, type SalesTargetDto } from '../sales-target';",
      );
      const openapi = await readFile(join(copy, 'openapi.json'), 'utf8');
      expect(openapi).toContain('"/api/BranchDesk/UpdateBranchDesk": {\n      "post"');
      // The module keeps its own name: its folder, class and door.
      expect(await readFile(join(copy, 'src', 'branch-office', 'index.ts'), 'utf8')).toContain(
        "export { BranchOfficeModule } from './branch-office.module';",
      );
    },
    GENERATE_MS,
  );

  it(
    'writes Survey with --update upsert',
    async () => {
      expectSuccess(await generateAgain(['Survey', '--update', 'upsert']), 'generate Survey');
      const module = await readFile(join(copy, 'src', 'survey', 'survey.module.ts'), 'utf8');
      expect(module).toContain('@Publishes(SURVEY_CREATED, SURVEY_UPDATED)');
      const openapi = JSON.parse(await readFile(join(copy, 'openapi.json'), 'utf8')) as {
        paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      };
      expect(
        Object.keys(openapi.paths['/api/Survey/UpdateSurvey/{survey_id}'].put.responses),
      ).toEqual(expect.arrayContaining(['201', '204', '400']));
    },
    GENERATE_MS,
  );

  it(
    'generates both migrations of a changed entity with npm run migration:generate, and refuses when nothing changed',
    async () => {
      const dto = join(copy, 'src', 'survey', 'dto', 'survey.dto.ts');
      const source = await readFile(dto, 'utf8');
      await writeFile(
        dto,
        source.replace(
          '  @TextField({ required: true, maxLength: 200 }) name?: string | null;',
          '  @TextField({ required: true, maxLength: 200 }) name?: string | null;\n  @TextField() note?: string | null;',
        ),
      );
      // Its suite's record has the member too: every member is written, null when not given.
      const suite = join(copy, 'test', 'survey.e2e-spec.ts');
      await writeFile(
        suite,
        (await readFile(suite, 'utf8')).replace(
          "const RECORD = { survey_id: 7, name: 'Example survey', amount: 1250.5 };",
          "const RECORD = { survey_id: 7, name: 'Example survey', amount: 1250.5, note: null };",
        ),
      );
      const migrations = (kind: string) =>
        readdir(join(copy, 'src', 'database', 'migrations', kind));
      expectSuccess(
        await run(copy, 'npm', ['run', '--silent', 'migration:generate', '--', 'AddSurveyNote']),
        'migration:generate',
      );
      for (const kind of ['sqlite', 'mysql']) {
        const written = (await migrations(kind)).find((file) => file.endsWith('-AddSurveyNote.ts'));
        expect({ kind, written }).toEqual({ kind, written: expect.any(String) as unknown });
        expect(
          await readFile(join(copy, 'src', 'database', 'migrations', kind, written!), 'utf8'),
        ).toMatch(/note/);
        expect(
          await readFile(join(copy, 'src', 'database', 'migrations', kind, 'index.ts'), 'utf8'),
        ).toContain(`from './${written!.replace(/\.ts$/, '')}';`);
      }
      // The DTO changed: the document follows, as the guide says, built with the new migrations.
      expectSuccess(await run(copy, 'npm', ['run', '--silent', 'openapi']), 'openapi');
      // Built already: nothing changed since, and the command says so, leaving no file behind.
      const before = [...(await migrations('sqlite')), ...(await migrations('mysql'))];
      const unchanged = await run(copy, process.execPath, [
        join('dist', 'scripts', 'generate-migrations.js'),
        'AddNothing',
      ]);
      expect(unchanged.code).toBe(1);
      expect(unchanged.output).toContain('No changes in database schema were found');
      expect([...(await migrations('sqlite')), ...(await migrations('mysql'))]).toEqual(before);
    },
    GENERATE_MS,
  );

  it("refuses an event no door exports, a taken name, a fixture's schema and an unknown option, changing nothing", async () => {
    const before = await readFile(join(copy, 'src', 'app.module.ts'), 'utf8');
    // The build of the runs before serves: only the refusal is run.
    const unknownEvent = await run(copy, process.execPath, [
      generator,
      'Payout',
      '--reacts-to',
      'payout.nothing',
    ]);
    expect(unknownEvent.code).toBe(1);
    expect(unknownEvent.output).toContain(
      "No module's door exports an event payout.nothing. The doors export: ",
    );
    expect(unknownEvent.output).toContain('transaction.agents-changed (src/transaction)');
    const taken = await run(copy, process.execPath, [generator, 'Survey']);
    expect(taken).toEqual({
      code: 1,
      output: expect.stringContaining('src/survey exists already') as unknown,
    });
    // The reacting test fixture mounted in every suite declares the schema (and the table).
    const fixture = await run(copy, process.execPath, [generator, 'TestLedgerSplit']);
    expect(fixture).toEqual({
      code: 1,
      output: expect.stringContaining(
        "src/test-ledger-split/dto/test-ledger-split.dto.ts would declare the wire schema 'TestLedgerSplit', " +
          'which test/support/test-ledger/test-ledger.events.ts declares already',
      ) as unknown,
    });
    const option = await run(copy, process.execPath, [generator, 'Payout', '--update', 'patch']);
    expect(option).toEqual({
      code: 1,
      output: expect.stringContaining('--update takes put, post or upsert') as unknown,
    });
    expect(existsSync(join(copy, 'src', 'payout'))).toBe(false);
    expect(await readFile(join(copy, 'src', 'app.module.ts'), 'utf8')).toBe(before);
  });

  it(
    'leaves a repository that passes the type check, ESLint, dependency-cruiser, the OpenAPI lint and Prettier',
    async () => {
      // Side by side, as `npm run checks` runs them: this process only waits meanwhile.
      const checks: ReadonlyArray<readonly [string, string, readonly string[]]> = [
        ['typecheck', 'npm', ['run', '--silent', 'typecheck']],
        // ESLint and Prettier on what the generator wrote or changed; the rest is as committed.
        ['eslint', 'npx', ['eslint', ...WRITTEN]],
        [
          'dependency-cruiser',
          'npx',
          [
            'depcruise',
            'src',
            'test',
            'bench',
            'scripts',
            'ormconfig.ts',
            'docs/examples',
            '--config',
            '.dependency-cruiser.cjs',
          ],
        ],
        ['lint:openapi', 'npm', ['run', '--silent', 'lint:openapi']],
        ['prettier', 'npx', ['prettier', '--check', ...WRITTEN, ...DOCUMENTS]],
      ];
      const outcomes = await Promise.all(
        checks.map(([, command, args]) => run(copy, command, args)),
      );
      outcomes.forEach((outcome, index) => expectSuccess(outcome, checks[index][0]));
    },
    GENERATE_MS,
  );

  it(
    "passes the modules' own suites on each database, with the OpenAPI, AsyncAPI, schema and module map suites",
    async () => {
      expectSuccess(
        await run(copy, 'npm', [
          'run',
          '--silent',
          'jest',
          '--',
          '--selectProjects',
          'e2e',
          // Two at a time, as `npm test` runs its files.
          '--maxWorkers=2',
          '--',
          'test/sales-target.e2e-spec.ts',
          'test/branch-office.e2e-spec.ts',
          'test/survey.e2e-spec.ts',
          'test/openapi.e2e-spec.ts',
          'test/asyncapi.e2e-spec.ts',
          'test/schema.e2e-spec.ts',
          'test/module-map.e2e-spec.ts',
        ]),
        'the e2e suites',
      );
    },
    GENERATE_MS,
  );
});
