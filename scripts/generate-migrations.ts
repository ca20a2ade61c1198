import { resolve } from 'node:path';
import {
  Changes,
  generateMigrations,
  GeneratorError,
  runCommand,
  scratchDatabase,
} from './generate-module';

/**
 * `npm run migration:generate -- <Name>`: after an entity changed, writes the migration of each
 * database that takes it from the committed migrations to the entities, and lists both in their
 * index.ts: SQLite's on a throw-away file, MySQL's on a scratch MariaDB database it creates and
 * drops (TEST_DATABASE_URL, SCRATCH_DATABASE_PREFIX). On a failure, it puts back what it wrote.
 */
async function main(): Promise<void> {
  const root = resolve(__dirname, '..', '..');
  const args = process.argv.slice(2);
  if (args.length !== 1 || !/^[A-Z][A-Za-z0-9]*$/.test(args[0]))
    throw new GeneratorError(
      'Usage: npm run migration:generate -- <MigrationName in PascalCase, e.g. AddDeveloperRate>',
    );
  const database = await scratchDatabase();
  const changes = new Changes(root);
  try {
    await generateMigrations(root, changes, args[0], database);
  } catch (error) {
    await changes.undo();
    process.stderr.write('Put back every file it had written or changed.\n');
    throw error;
  } finally {
    await database.drop();
  }
  process.stdout.write(
    'Read both: TypeORM writes a column type change as a DROP and an ADD, losing its values.\n',
  );
}

runCommand(main);
