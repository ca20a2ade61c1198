import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { withConfigurationTable } from '../src/config/configuration-variables';

/**
 * Writes the configuration table of docs/configuration.md (`npm run docs:config`) from the declared
 * variables, between the page's markers; the rest of the page is kept as written.
 */
async function main(): Promise<void> {
  const target = resolve(process.argv[2] ?? 'docs/configuration.md');
  await writeFile(target, withConfigurationTable(await readFile(target, 'utf8')));
  process.stdout.write(`Wrote ${target}\n`);
}

void main();
