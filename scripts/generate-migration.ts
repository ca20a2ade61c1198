import { spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { DataSource } from 'typeorm';
import { APP_ENTITIES } from '../src/app.entities';
import { ConfigurationError, loadAppConfig } from '../src/config/app-config';
import { dataSourceOptions } from '../src/database/data-source-options';
import { withServerDialect } from '../src/database/server-dialect';

const REPO_ROOT = resolve(__dirname, '..', '..');
const KINDS = ['sqlite', 'mysql'] as const;
type Kind = (typeof KINDS)[number];
const INDEX_LIST: Record<Kind, string> = { sqlite: 'SQLITE_MIGRATIONS', mysql: 'MYSQL_MIGRATIONS' };

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

/**
 * `npm run migration:generate:<sqlite|mysql> -- <Name>`: writes the migration that takes the database
 * DATABASE_URL names from the committed migrations to the entities, into
 * src/database/migrations/<sqlite|mysql>/, through the TypeORM CLI and ormconfig.ts. The database must
 * hold every committed migration already, or the difference would repeat them.
 */
async function main(): Promise<void> {
  const [kind, name = ''] = process.argv.slice(2) as [Kind, string?];
  if (!KINDS.includes(kind) || !/^[A-Z][A-Za-z0-9]*$/.test(name))
    fail(
      `Usage: npm run migration:generate:${KINDS.join('|')} -- <MigrationName, e.g. AddDeveloper>`,
    );
  let config;
  try {
    config = loadAppConfig(process.env, { serving: false });
  } catch (error) {
    if (error instanceof ConfigurationError) fail(error.message);
    throw error;
  }
  if (config.database.kind !== kind)
    fail(
      `DATABASE_URL names a ${config.database.kind} database, not a ${kind} one to compare with.`,
    );

  // A SQLite file is brought up to date first, as the service does at every start.
  const dataSource = new DataSource(
    await withServerDialect(dataSourceOptions(config.database, APP_ENTITIES)),
  );
  await dataSource.initialize();
  const pending = await dataSource.showMigrations();
  await dataSource.destroy();
  if (pending) fail('The database misses committed migrations: npm run migration:run first.');

  const timestamp = Date.now();
  const folder = join('src', 'database', 'migrations', kind);
  const generated = spawnSync(
    process.execPath,
    [
      require.resolve('typeorm/cli.js'),
      'migration:generate',
      '--dataSource',
      join('dist', 'ormconfig.js'),
      '--timestamp',
      String(timestamp),
      join(folder, name),
    ],
    { cwd: REPO_ROOT, stdio: 'inherit' },
  );
  // "No changes in database schema were found" leaves the CLI's own message and exit code.
  if (generated.status !== 0) process.exit(generated.status ?? 1);

  const file = join(REPO_ROOT, folder, `${timestamp}-${name}.ts`);
  const options = await resolveConfig(file);
  await writeFile(file, await format(await readFile(file, 'utf8'), { ...options, filepath: file }));
  process.stdout.write(
    `Next: list ${name}${timestamp} in ${INDEX_LIST[kind]} (${join(folder, 'index.ts')}), and read ` +
      `${relative(REPO_ROOT, file)}: TypeORM writes a column's type change as DROP and ADD, losing its values.\n`,
  );
}

main().catch((error: unknown) => fail(error instanceof Error ? error.message : String(error)));
