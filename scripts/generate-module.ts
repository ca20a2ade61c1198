import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { format, resolveConfig } from 'prettier';
import ts from 'typescript';
import { type DoorEvent, doorEvents, featureFolders, loadDoors } from './doors';
import {
  backfills,
  type GeneratedFile,
  moduleFiles,
  type ModuleNames,
  type ModuleOptions,
  type Names,
  type ReactedEvent,
} from './module-template/module-files';
import {
  createScratchDatabase,
  SCRATCH_PREFIX_VARIABLE,
  type ScratchDatabase,
  scratchServerUrl,
  SERVER_VARIABLE,
} from './scratch-database';

/** A refusal or failure the generator explains in one message, without a stack. */
export class GeneratorError extends Error {}

/** The page `npm run modules` writes: the modules, their doors and their events. */
const MODULE_MAP = join('docs', 'modules.md');

const USAGE = `Usage: npm run generate:module -- <Name> [options]
  <Name>                  the module's name in PascalCase, e.g. Commission
  --resource <Name>       the record it serves, when not the module's name (CommissionSplit): its
                          DTO, entity and table, routes, scopes, errors and events take this name
  --list                  a list route, List<Names>: keyset pages in key order
  --update put|post|upsert
                          an update route: PUT Update<Name>/{key} or POST Update<Name> with the key
                          in the body, replacing the record (204; 404 when there is none); or upsert,
                          PUT Update<Name>/{key} creating it when there is none (201 with Location)
                          and replacing it when there is (204)
  --key int|text          its key: an int id (<name>_id, the default) or a text code (<name>_code)
  --key-case upper|lower  a text code's letters: capitals (the default, NORTH-2) or lower case
                          (north-2); one case, which both databases compare and order alike
  --reacts-to <event>     a handler of another module's event after it commits, with its event-driven
                          test: the event's routing key (transaction.agents-changed) or CloudEvents
                          type; give it again for another event`;

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
  const capital = (word: string) => word[0].toUpperCase() + word.slice(1);
  const camel = (parts: string[]) =>
    parts.map((word, index) => (index === 0 ? word : capital(word))).join('');
  const names: ModuleNames = {
    pascal: name,
    camel: camel(words),
    kebab: words.join('-'),
    snake: words.join('_'),
    constant: words.join('_').toUpperCase(),
    pluralPascal: plural.map(capital).join(''),
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

/** The command line: the name, and the options besides, with `--reacts-to` as given. */
export interface Command {
  readonly name: string;
  /** The resource's name, when `--resource` gives one. */
  readonly resource?: string;
  readonly options: Omit<ModuleOptions, 'reactsTo'>;
  /** Routing keys or CloudEvents types, resolved against the doors once they are loaded. */
  readonly reactsTo: readonly string[];
}

/** Reads the arguments after `npm run generate:module --`. */
export function parseCommand(args: readonly string[]): Command {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: {
        resource: { type: 'string' },
        list: { type: 'boolean', default: false },
        update: { type: 'string' },
        key: { type: 'string', default: 'int' },
        'key-case': { type: 'string' },
        'reacts-to': { type: 'string', multiple: true, default: [] },
      },
    });
  } catch (error) {
    throw new GeneratorError(`${(error as Error).message}\n${USAGE}`);
  }
  const { positionals, values } = parsed;
  if (positionals.length !== 1) throw new GeneratorError(USAGE);
  const { update, key, list } = values;
  if (update !== undefined && update !== 'put' && update !== 'post' && update !== 'upsert')
    throw new GeneratorError(`--update takes put, post or upsert, not "${update}".\n${USAGE}`);
  if (key !== 'int' && key !== 'text')
    throw new GeneratorError(`--key takes int or text, not "${key}".\n${USAGE}`);
  const keyCase = values['key-case'] ?? 'upper';
  if (keyCase !== 'upper' && keyCase !== 'lower')
    throw new GeneratorError(`--key-case takes upper or lower, not "${keyCase}".\n${USAGE}`);
  if (values['key-case'] !== undefined && key !== 'text')
    throw new GeneratorError('--key-case is the case of a text key: give it with --key text.');
  const reactsTo = values['reacts-to'];
  const repeated = reactsTo.find((event, index) => reactsTo.indexOf(event) !== index);
  if (repeated) throw new GeneratorError(`--reacts-to ${repeated} is given twice.`);
  return {
    name: positionals[0],
    resource: values.resource,
    options: { list, update, key, keyCase },
    reactsTo,
  };
}

/** The module's names, and the resource's (the module's, unless the command names another). */
export function namesOf({ name, resource }: Pick<Command, 'name' | 'resource'>): Names {
  const own = moduleNames(name);
  return { module: own, resource: resource === undefined ? own : moduleNames(resource) };
}

/**
 * The events named by `--reacts-to` (routing key or CloudEvents type), as the doors export them;
 * refuses one no door exports, or whose door does not export its payload class (the record a handler
 * receives is part of the door, as the event is).
 */
export function resolveReactions(
  given: readonly string[],
  exported: readonly DoorEvent[],
): ReactedEvent[] {
  const reactions = given.map((name) => {
    const found = exported.find(({ event }) => event.routingKey === name || event.type === name);
    if (!found)
      throw new GeneratorError(
        `No module's door exports an event ${name}. The doors export: ` +
          `${exported.map(({ event, folder }) => `${event.routingKey} (src/${folder})`).join(', ') || 'none'}.`,
      );
    if (!found.payload)
      throw new GeneratorError(
        `src/${found.folder}/index.ts exports ${found.constant} but not its payload class ` +
          `${found.event.payload.name}: export it beside the event, as a door exports what its events carry.`,
      );
    return {
      folder: found.folder,
      constant: found.constant,
      payload: found.payload,
      routingKey: found.event.routingKey,
    };
  });
  const constants = reactions.map(({ constant }) => constant);
  const clash = constants.find((constant, index) => constants.indexOf(constant) !== index);
  if (clash)
    throw new GeneratorError(
      `Two of the events are exported as ${clash}: their handlers would have one name.`,
    );
  return reactions;
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

/** src/app.module.ts with the module last among the application's feature modules. */
export function registerModule(source: string, names: ModuleNames): string {
  const withImport = addImport(source, `${names.pascal}Module`, `./${names.kebab}`);
  return addToArray(withImport, 'export const FEATURE_MODULES = [', `${names.pascal}Module`);
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
export class Changes {
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

  /** Records a file of the repository something else rewrites, to be put back on failure. */
  async keep(file: string): Promise<void> {
    const path = join(this.root, file);
    if (!this.originals.has(path)) this.originals.set(path, await readFile(path, 'utf8'));
  }

  /** Records a file something else wrote, to be removed on failure. */
  adopt(path: string): void {
    this.created.push(path);
  }

  /** The TypeScript files it wrote or changed so far. */
  typescript(): string[] {
    return [...this.created, ...this.originals.keys()].filter((path) => path.endsWith('.ts'));
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

/**
 * Compiles those of `paths` (TypeScript files) that the build takes into dist, as `nest build` would,
 * each file on its own: the compiler options allow it (isolatedModules, as ts-jest runs the suites),
 * and the type check is `npm test`'s. What the generator wrote and changed is so compiled in a fraction
 * of a second, where a whole build takes ten.
 */
function compile(root: string, paths: readonly string[]): void {
  const configPath = join(root, 'tsconfig.build.json');
  const config = ts.parseJsonConfigFileContent(
    ts.readConfigFile(configPath, (path) => ts.sys.readFile(path)).config,
    ts.sys,
    root,
    undefined,
    configPath,
  );
  const built = new Set(config.fileNames.map((path) => resolve(path)));
  const { outDir, rootDir } = config.options;
  for (const path of paths.filter((path) => built.has(resolve(path)))) {
    const { outputText, sourceMapText } = ts.transpileModule(ts.sys.readFile(path)!, {
      compilerOptions: config.options,
      fileName: path,
    });
    const target = join(outDir!, relative(rootDir!, path)).replace(/\.ts$/, '.js');
    ts.sys.writeFile(target, outputText);
    if (sourceMapText) ts.sys.writeFile(`${target}.map`, sourceMapText);
  }
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

/**
 * Refuses a name whose module, table, scopes, routes or migration exist already in `sources` (the
 * modules and the test fixtures).
 */
function refuseTaken(
  root: string,
  { module: own, resource }: Names,
  sources: readonly Source[],
): void {
  const folder = join('src', own.kebab);
  const suite = join('test', `${own.kebab}.e2e-spec.ts`);
  for (const path of [folder, suite])
    if (existsSync(join(root, path)))
      throw new GeneratorError(`${path} exists already: the generator writes new modules only.`);
  const taken = [
    [`class ${own.pascal}Module `, `a ${own.pascal}Module`],
    [`declareScope('${resource.pluralKebab}:`, `the scopes ${resource.pluralKebab}:*`],
    [`operationId: 'Get${resource.pascal}'`, `an operation Get${resource.pascal}`],
    [`operationId: 'Create${resource.pascal}'`, `an operation Create${resource.pascal}`],
    [`operationId: 'Update${resource.pascal}'`, `an operation Update${resource.pascal}`],
    [`operationId: 'List${resource.pluralPascal}'`, `an operation List${resource.pluralPascal}`],
    [`routingKey: '${resource.kebab}.`, `events ${resource.kebab}.*`],
    [`@Controller('${resource.pascal}')`, `a route prefix ${resource.pascal}`],
    [`-Add${own.pascal}'`, `a migration Add${own.pascal}`],
  ] as const;
  for (const [text, what] of taken) {
    const holder = sources.find(([, source]) => source.includes(text));
    if (holder)
      throw new GeneratorError(`${holder[0]} declares ${what} already: choose another name.`);
  }
}

/** A file of the repository: its path from the root, and its text. */
export type Source = readonly [path: string, text: string];

/**
 * What a source declares that one application can hold once: its tables (an entity's, or one it
 * creates in SQL), wire schemas, event types and routing keys, each as `the <kind> '<name>'`.
 */
export function declarationsOf(text: string): string[] {
  const found: string[] = [];
  for (const [, entity, created] of text.matchAll(
    /@Entity\('(\w+)'|CREATE TABLE (?:IF NOT EXISTS )?[`"]?(\w+)/gi,
  ))
    found.push(`the table '${entity ?? created}'`);
  for (const [, options] of text.matchAll(/@WireRecord\(\{([^}]*)\}/g)) {
    const [, schema] =
      /\bschemaName: '(\w+)'/.exec(options) ?? /\bname: '(\w+)'/.exec(options) ?? [];
    if (schema) found.push(`the wire schema '${schema}'`);
  }
  // Dotted names only: a column's `type: 'int'` is no event type.
  for (const [, key, name] of text.matchAll(/\b(type|routingKey): '([\w-]+(?:\.[\w-]+)+)'/g))
    found.push(`the ${key === 'type' ? 'event type' : 'routing key'} '${name}'`);
  return found;
}

/**
 * Refuses files to be written that declare a table, wire schema, event type or routing key a source
 * declares already (a module's, or a test fixture's mounted in every suite), naming both files: the
 * second declaration would stop the start, or share the table.
 */
export function refuseClashes(written: readonly GeneratedFile[], sources: readonly Source[]): void {
  const declared = sources.map(([path, text]) => [path, new Set(declarationsOf(text))] as const);
  for (const file of written)
    for (const declaration of declarationsOf(file.text)) {
      const holder = declared.find(([, declarations]) => declarations.has(declaration));
      if (holder)
        throw new GeneratorError(
          `${file.path} would declare ${declaration}, which ${holder[0]} declares already: ` +
            'choose another name.',
        );
    }
}

/**
 * The TypeScript files of the modules (src) and of the tests (test: the fixtures some suites mount,
 * and the suites), unit specs left out: each test file loads alone.
 */
async function readSources(root: string): Promise<Source[]> {
  const files: string[] = [];
  for (const folder of ['src', 'test']) {
    const entries = await readdir(join(root, folder), { recursive: true, withFileTypes: true });
    for (const entry of entries)
      if (entry.isFile() && /(?<!\.spec)\.ts$/.test(entry.name))
        files.push(join(entry.parentPath, entry.name));
  }
  return Promise.all(
    files.map(async (file): Promise<Source> => [
      relative(root, file),
      await readFile(file, 'utf8'),
    ]),
  );
}

/** A MariaDB database to generate the MySQL migration against, made on the test server and dropped. */
export async function scratchDatabase(): Promise<ScratchDatabase> {
  const server = scratchServerUrl();
  try {
    return await createScratchDatabase(server, 'generate');
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new GeneratorError(
      `Cannot create a scratch database on the MariaDB at ${new URL(server).host} (${reason}). The ` +
        `MySQL migration is generated against one: start MariaDB, or set ${SERVER_VARIABLE} to a ` +
        'server where this user may create and drop databases (mariadb://user:password@host:port/any); ' +
        `its name starts with ${SCRATCH_PREFIX_VARIABLE}.`,
    );
  }
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
 * Generates both migrations named `name` (SQLite on a throw-away file, MySQL on `database`, the
 * committed migrations applied first) from the compiled entities, and lists each in its folder's
 * index.ts; `changes` records every file, for a failure to put back.
 */
export async function generateMigrations(
  root: string,
  changes: Changes,
  name: string,
  database: ScratchDatabase,
): Promise<void> {
  const sqliteFolder = await mkdtemp(join(tmpdir(), 'generate-migration-'));
  try {
    await generateMigration(root, changes, 'sqlite', name, {
      DATABASE_URL: `sqlite:${join(sqliteFolder, 'generate.sqlite')}`,
    });
    await generateMigration(root, changes, 'mysql', name, {
      DATABASE_URL: database.url,
      MIGRATIONS_RUN: 'true',
    });
  } finally {
    await rm(sqliteFolder, { recursive: true, force: true });
  }
}

/** Runs a command's `main`: a GeneratorError is its message alone, anything else with its stack. */
export function runCommand(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    process.stderr.write(
      `${error instanceof GeneratorError ? error.message : error instanceof Error ? error.stack : String(error)}\n`,
    );
    process.exit(1);
  });
}

/**
 * `npm run generate:module -- <Name> [options]`: writes src/<name>/ (module, controller, service,
 * errors, events, DTO, entity, and with the options a list query and handlers of other modules'
 * events) and test/<name>.e2e-spec.ts, registers the module in src/app.module.ts and
 * src/app.entities.ts, generates its SQLite and MySQL migrations (on a throw-away SQLite file and a
 * scratch MariaDB database it creates and drops) and lists them, and rewrites openapi.json,
 * asyncapi.json and the module map (docs/modules.md). On any failure it puts back everything it
 * changed.
 */
async function main(): Promise<void> {
  const root = resolve(__dirname, '..', '..');
  const command = parseCommand(process.argv.slice(2));
  const names = namesOf(command);
  const { module: own, resource } = names;
  const sources = await readSources(root);
  refuseTaken(root, names, sources);
  // The doors as compiled by the build `npm run generate:module` starts with.
  const doors = loadDoors(resolve(__dirname, '..', 'src'), featureFolders(root));
  const options: ModuleOptions = {
    ...command.options,
    reactsTo: resolveReactions(command.reactsTo, doorEvents(doors)),
  };
  const files = moduleFiles(names, options);
  refuseClashes(files, sources);

  const database = await scratchDatabase();
  const changes = new Changes(root);
  try {
    for (const file of files) {
      await changes.create(file);
      process.stdout.write(`Wrote ${file.path}\n`);
    }
    await changes.edit(join('src', 'app.module.ts'), (source) => registerModule(source, own));
    await changes.edit(join('src', 'app.entities.ts'), (source) => registerEntities(source, own));
    process.stdout.write('Registered it in src/app.module.ts and src/app.entities.ts\n');

    compile(root, changes.typescript());
    await generateMigrations(root, changes, `Add${own.pascal}`, database);
    // The migrations compiled too: the documents are written by the application as it starts.
    compile(root, changes.typescript());
    for (const document of ['openapi.json', 'asyncapi.json', MODULE_MAP])
      await changes.keep(document);
    run(root, 'npm run openapi:write', 'npm', ['run', '--silent', 'openapi:write'], {}, true);
    run(root, 'Writing the module map', process.execPath, [
      join('dist', 'scripts', 'write-module-map.js'),
      MODULE_MAP,
    ]);
  } catch (error) {
    await changes.undo();
    process.stderr.write('Put back every file it had written or changed.\n');
    throw error;
  } finally {
    await database.drop();
  }

  const reads = [
    `Get${resource.pascal}`,
    ...(options.list ? [`List${resource.pluralPascal}`] : []),
  ];
  const writes = [
    `Create${resource.pascal}`,
    ...(options.update ? [`Update${resource.pascal}`] : []),
  ];
  process.stdout.write(
    `\nThe ${own.pascal} module is written and registered. Next:\n` +
      `- read both Add${own.pascal} migrations: they are the table as the entity declares it;\n` +
      `- add ${resource.pluralKebab}:read (${reads.join(', ')}) and ${resource.pluralKebab}:write ` +
      `(${writes.join(', ')}) to the operations table of docs/security.md, Authorization, and tell the ` +
      'operators which API keys (AUTH_API_KEYS) or identity-provider scopes should carry them;\n' +
      (options.reactsTo.length > 0
        ? `- write each reaction in src/${own.kebab}/${own.kebab}.reactions.ts, and what it publishes ` +
          `in place of ${own.pascal}Reacted (docs/adding-a-module.md, section 6);\n`
        : '') +
      (backfills(options)
        ? `- write its back-fill there (${own.pascal}Reactions.backfill): what the handlers do, for the ` +
          'transactions there were before the module; it runs once at its first start on a database ' +
          '(docs/adding-a-module.md, section 7);\n'
        : '') +
      `- run its suite: npm run test:e2e -- test/${own.kebab}.e2e-spec.ts\n`,
  );
}

if (require.main === module) runCommand(main);
