import { randomBytes } from 'node:crypto';
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { format, resolveConfig } from 'prettier';
import { type GeneratedFile, moduleFiles, type ModuleNames } from './module-template/module-files';

/** A refusal or failure the generator explains in one message, without a stack. */
export class GeneratorError extends Error {}

const USAGE = 'Usage: npm run generate:module -- <Name in PascalCase, e.g. Commission>';

/** Words a name may not become, as a variable or a member the generated code declares. */
const RESERVED = new Set(
  (
    'arguments await break case catch class const continue debugger default delete do else enum ' +
    'eval export extends false finally for function if implements import in instanceof interface ' +
    'let new null package private protected public return static super switch this throw true try ' +
    'typeof var void while with yield'
  ).split(' '),
);

/** The plural of one lower-case English word, by the regular rules. */
function pluralOf(word: string): string {
  if (/(?:s|x|z|ch|sh)$/.test(word)) return `${word}es`;
  if (/[^aeiou]y$/.test(word)) return `${word.slice(0, -1)}ies`;
  return `${word}s`;
}

/**
 * Every spelling of a module name given in PascalCase: words of a capital and at least one lower-case
 * letter or digit (`Commission`, `SalesTarget`, `XmlFeed`; not `XMLFeed`, `commission`, `Sales_Target`).
 */
export function moduleNames(name: string): ModuleNames {
  if (!/^(?:[A-Z][a-z0-9]+)+$/.test(name) || !/^[A-Z][a-z]/.test(name))
    throw new GeneratorError(
      `"${name}" is not a module name in PascalCase: capitalized words of letters and digits, ` +
        `starting with a letter, such as Commission or SalesTarget (XmlFeed, not XMLFeed).`,
    );
  if (name.length > 40)
    throw new GeneratorError(
      `"${name}" is longer than 40 characters: its table names would be too.`,
    );
  const words = name.match(/[A-Z][a-z0-9]+/g)!.map((word) => word.toLowerCase());
  const plural = [...words.slice(0, -1), pluralOf(words.at(-1)!)];
  const camel = (parts: string[]) =>
    parts
      .map((word, index) => (index === 0 ? word : word[0].toUpperCase() + word.slice(1)))
      .join('');
  const names: ModuleNames = {
    pascal: name,
    camel: camel(words),
    kebab: words.join('-'),
    snake: words.join('_'),
    constant: words.join('_').toUpperCase(),
    pluralCamel: camel(plural),
    pluralKebab: plural.join('-'),
    pluralConstant: plural.join('_').toUpperCase(),
    pluralWords: plural.join(' '),
    words: words.join(' '),
  };
  for (const identifier of [names.camel, names.pluralCamel])
    if (RESERVED.has(identifier))
      throw new GeneratorError(
        `"${name}" would declare ${identifier}, a reserved word: choose another.`,
      );
  return names;
}

/** An import statement and where it sits in a source. */
interface ImportAt {
  readonly from: string;
  readonly start: number;
  readonly end: number;
}

function importsOf(source: string): ImportAt[] {
  return [...source.matchAll(/^import\b[^;]*?from '([^']+)';\n/gm)].map((match) => ({
    from: match[1],
    start: match.index,
    end: match.index + match[0].length,
  }));
}

/**
 * `source` with `import { <names> } from '<from>';` added: after the last relative import whose path
 * sorts before `from`, else before the first relative import, else after the last import.
 */
export function addImport(source: string, imported: string, from: string): string {
  const statement = `import { ${imported} } from '${from}';\n`;
  const imports = importsOf(source);
  if (imports.some((existing) => existing.from === from))
    throw new GeneratorError(`It imports from ${from} already.`);
  const relative = imports.filter((existing) => existing.from.startsWith('.'));
  const before = relative.filter((existing) => existing.from < from).at(-1);
  const at = before?.end ?? relative[0]?.start ?? imports.at(-1)?.end ?? 0;
  return source.slice(0, at) + statement + source.slice(at);
}

/**
 * `source` with `entry` added to the array literal that `opening` (ending in `[`) starts: before the
 * element `before` when it has it, else last. Prettier lays the array out again afterwards.
 */
export function addToArray(
  source: string,
  opening: string,
  entry: string,
  before?: string,
): string {
  const start = source.indexOf(opening);
  if (start < 0 || !opening.endsWith('['))
    throw new GeneratorError(`No \`${opening}\` to add ${entry} to: was the file reorganized?`);
  const open = start + opening.length;
  let depth = 1;
  let close = open;
  for (; close < source.length; close += 1) {
    if ('[({'.includes(source[close])) depth += 1;
    if ('])}'.includes(source[close])) depth -= 1;
    if (depth === 0) break;
  }
  const body = source.slice(open, close);
  const element = (text: string) =>
    new RegExp(`(?<=^|[\\s,\\[])${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?=$|[\\s,\\]])`);
  if (element(entry).test(body)) throw new GeneratorError(`${opening}…] lists ${entry} already.`);
  const at = before === undefined ? undefined : element(before).exec(body)?.index;
  if (at !== undefined) return `${source.slice(0, open + at)}${entry}, ${source.slice(open + at)}`;
  const last = body.trimEnd();
  const tail = last === '' ? entry : last.endsWith(',') ? ` ${entry},` : `, ${entry}`;
  return `${source.slice(0, open + last.length)}${tail}${source.slice(open + last.length)}`;
}

/** src/app.module.ts with the module among the application's imports, before the tests' own. */
export function registerModule(source: string, names: ModuleNames): string {
  const withImport = addImport(source, `${names.pascal}Module`, `./${names.kebab}`);
  return addToArray(withImport, 'imports: [', `${names.pascal}Module`, '...modules');
}

/** src/app.entities.ts with the module's tables. */
export function registerEntities(source: string, names: ModuleNames): string {
  const list = `${names.constant}_ENTITIES`;
  const withImport = addImport(source, list, `./${names.kebab}`);
  return addToArray(withImport, 'export const APP_ENTITIES = [', `...${list}`);
}

/** A migrations index.ts with the migration generated as `<file>.ts` (`<timestamp>-<Name>`). */
export function registerMigration(source: string, file: string): string {
  const [, timestamp, name] = /^(\d+)-(\w+)$/.exec(file) ?? [];
  if (!timestamp) throw new GeneratorError(`${file} is not a migration's <timestamp>-<Name>.`);
  const list = /export const \w+_MIGRATIONS = \[/.exec(source)?.[0];
  if (!list) throw new GeneratorError('The migrations index declares no *_MIGRATIONS list.');
  return addToArray(
    addImport(source, `${name}${timestamp}`, `./${file}`),
    list,
    `${name}${timestamp}`,
  );
}

// ---------------------------------------------------------------------------------------------
// Running it

/** What the generator changed, so that a failure can put everything back. */
class Changes {
  private readonly created: string[] = [];
  /** Folders it made, the outermost of each path. */
  private readonly folders: string[] = [];
  private readonly originals = new Map<string, string>();

  constructor(private readonly root: string) {}

  async create(file: GeneratedFile): Promise<void> {
    const path = join(this.root, file.path);
    const folder = await mkdir(dirname(path), { recursive: true });
    if (folder) this.folders.push(folder);
    await writeFile(path, await formatted(path, file.text), { flag: 'wx' });
    this.created.push(path);
  }

  /** Rewrites a file of the repository through `edit`. */
  async edit(file: string, edit: (source: string) => string): Promise<void> {
    const path = join(this.root, file);
    const source = await readFile(path, 'utf8');
    if (!this.originals.has(path)) this.originals.set(path, source);
    await writeFile(path, await formatted(path, edit(source)));
  }

  /** Records a file something else wrote, to be removed on failure. */
  adopt(path: string): void {
    this.created.push(path);
  }

  async undo(): Promise<void> {
    for (const path of this.created.reverse()) await rm(path, { force: true });
    for (const folder of this.folders.reverse()) await rm(folder, { recursive: true, force: true });
    for (const [path, source] of this.originals) await writeFile(path, source);
  }
}

async function formatted(path: string, text: string): Promise<string> {
  return format(text, { ...(await resolveConfig(path)), filepath: path });
}

/** Runs a command in the repository; its output is shown only if it fails, unless `show`. */
function run(
  root: string,
  what: string,
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  show = false,
): void {
  const options: SpawnSyncOptions = {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: show ? 'inherit' : 'pipe',
    encoding: 'utf8',
  };
  const result = spawnSync(command, args, options);
  if (result.status === 0) return;
  if (result.error) throw new GeneratorError(`${what} failed: ${result.error.message}.`);
  const output = show ? '' : `\n${String(result.stdout)}${String(result.stderr)}`.trimEnd();
  throw new GeneratorError(`${what} failed (exit ${result.status ?? result.signal}).${output}`);
}

/** Refuses a name whose module, table, scopes, routes or migration exist already. */
async function refuseTaken(root: string, names: ModuleNames): Promise<void> {
  const folder = join('src', names.kebab);
  const suite = join('test', `${names.kebab}.e2e-spec.ts`);
  for (const path of [folder, suite])
    if (existsSync(join(root, path)))
      throw new GeneratorError(`${path} exists already: the generator writes new modules only.`);
  const sources = await readSources(root, 'src');
  const taken = [
    [`class ${names.pascal}Module `, `a ${names.pascal}Module`],
    [`@Entity('${names.snake}'`, `a table ${names.snake}`],
    [`declareScope('${names.pluralKebab}:`, `the scopes ${names.pluralKebab}:*`],
    [`operationId: 'Get${names.pascal}'`, `an operation Get${names.pascal}`],
    [`operationId: 'Create${names.pascal}'`, `an operation Create${names.pascal}`],
    [`@Controller('${names.pascal}')`, `a route prefix ${names.pascal}`],
    [`-Add${names.pascal}'`, `a migration Add${names.pascal}`],
  ] as const;
  for (const [text, what] of taken) {
    const holder = sources.find(([, source]) => source.includes(text));
    if (holder)
      throw new GeneratorError(`${holder[0]} declares ${what} already: choose another name.`);
  }
}

/** The TypeScript files under `folder` but unit specs (fixtures): path from `root`, and text. */
async function readSources(root: string, folder: string): Promise<Array<[string, string]>> {
  const entries = await readdir(join(root, folder), { recursive: true, withFileTypes: true });
  const files = entries
    .filter((entry) => entry.isFile() && /(?<!\.spec)\.ts$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
  return Promise.all(
    files.map(
      async (file) => [relative(root, file), await readFile(file, 'utf8')] as [string, string],
    ),
  );
}

/** A MariaDB database to generate the MySQL migration against, made on the test server and dropped. */
async function scratchDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const server = new URL(process.env.TEST_DATABASE_URL ?? 'mariadb://root@127.0.0.1:3306/test');
  const name = `ps_generate_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = async () => {
    const adminUrl = new URL(server);
    adminUrl.protocol = 'mysql:';
    adminUrl.pathname = '/';
    return createConnection({ uri: adminUrl.toString(), connectTimeout: 5000 });
  };
  try {
    const connection = await admin();
    try {
      await connection.query(
        `CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
      );
    } finally {
      await connection.end();
    }
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new GeneratorError(
      `Cannot create a scratch database on the MariaDB at ${server.host} (${reason}). The MySQL ` +
        'migration is generated against one: start MariaDB, or set TEST_DATABASE_URL to a server ' +
        'where this user may create and drop databases (mariadb://user:password@host:port/any).',
    );
  }
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const connection = await admin();
      try {
        await connection.query(`DROP DATABASE IF EXISTS \`${name}\``);
      } finally {
        await connection.end();
      }
    },
  };
}

/** Generates the migration of one database kind with `npm run migration:generate:*`'s script. */
async function generateMigration(
  root: string,
  changes: Changes,
  kind: 'sqlite' | 'mysql',
  name: string,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const folder = join('src', 'database', 'migrations', kind);
  const before = new Set(await readdir(join(root, folder)));
  try {
    run(
      root,
      `Generating the ${kind} migration`,
      process.execPath,
      [join('dist', 'scripts', 'generate-migration.js'), kind, name],
      env,
    );
  } finally {
    for (const file of await readdir(join(root, folder)))
      if (!before.has(file)) changes.adopt(join(root, folder, file));
  }
  const written = (await readdir(join(root, folder))).find(
    (file) => !before.has(file) && file.endsWith(`-${name}.ts`),
  );
  if (!written) throw new GeneratorError(`The ${kind} migration ${name} was not written.`);
  await changes.edit(join(folder, 'index.ts'), (source) =>
    registerMigration(source, written.replace(/\.ts$/, '')),
  );
  process.stdout.write(`Wrote ${join(folder, written)}\n`);
}

/**
 * `npm run generate:module -- <Name>`: writes src/<name>/ (module, controller, service, errors, DTO,
 * entity) and test/<name>.e2e-spec.ts, registers the module in src/app.module.ts and
 * src/app.entities.ts, generates its SQLite and MySQL migrations (on a throw-away SQLite file and a
 * scratch MariaDB database it creates and drops) and lists them, and rewrites openapi.json. On any
 * failure it puts back everything it changed.
 */
async function main(): Promise<void> {
  const root = resolve(__dirname, '..', '..');
  const args = process.argv.slice(2);
  if (args.length !== 1) throw new GeneratorError(USAGE);
  const names = moduleNames(args[0]);
  await refuseTaken(root, names);

  const database = await scratchDatabase();
  const sqliteFolder = await mkdtemp(join(tmpdir(), 'generate-module-'));
  const changes = new Changes(root);
  try {
    for (const file of moduleFiles(names)) {
      await changes.create(file);
      process.stdout.write(`Wrote ${file.path}\n`);
    }
    await changes.edit(join('src', 'app.module.ts'), (source) => registerModule(source, names));
    await changes.edit(join('src', 'app.entities.ts'), (source) => registerEntities(source, names));
    process.stdout.write('Registered it in src/app.module.ts and src/app.entities.ts\n');

    run(root, 'nest build', process.execPath, [
      require.resolve('@nestjs/cli/bin/nest.js'),
      'build',
    ]);
    const migration = `Add${names.pascal}`;
    await generateMigration(root, changes, 'sqlite', migration, {
      DATABASE_URL: `sqlite:${join(sqliteFolder, 'generate.sqlite')}`,
    });
    await generateMigration(root, changes, 'mysql', migration, {
      DATABASE_URL: database.url,
      MIGRATIONS_RUN: 'true',
    });
    run(root, 'npm run openapi', 'npm', ['run', '--silent', 'openapi'], {}, true);
  } catch (error) {
    await changes.undo();
    process.stderr.write('Put back every file it had written or changed.\n');
    throw error;
  } finally {
    await rm(sqliteFolder, { recursive: true, force: true });
    await database.drop();
  }

  process.stdout.write(
    `\nThe ${names.pascal} module is written and registered. Next:\n` +
      `- read both Add${names.pascal} migrations: they are the table as the entity declares it;\n` +
      `- add ${names.pluralKebab}:read (Get${names.pascal}) and ${names.pluralKebab}:write ` +
      `(Create${names.pascal}) to the operations table of docs/security.md, Authorization, and tell the ` +
      'operators which API keys (AUTH_API_KEYS) or identity-provider scopes should carry them;\n' +
      `- run its suite: npm run test:e2e -- test/${names.kebab}.e2e-spec.ts\n`,
  );
}

if (require.main === module)
  main().catch((error: unknown) => {
    process.stderr.write(
      `${error instanceof GeneratorError ? error.message : error instanceof Error ? error.stack : String(error)}\n`,
    );
    process.exit(1);
  });
