import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createApp } from '../src/app.factory';
import { loadAppConfig } from '../src/config/app-config';
import { moduleMap, modulePage } from './module-map';

/**
 * Writes the module map (`npm run modules`, docs/modules.md) from the application as it starts, on a
 * throw-away database and without a broker, as `npm run openapi` writes the API documents.
 */
async function main(): Promise<void> {
  const root = resolve(__dirname, '..', '..');
  const target = resolve(process.argv[2] ?? 'docs/modules.md');
  const config = loadAppConfig({ DATABASE_URL: 'sqlite::memory:', DEMO_DATA: 'false' });
  const app = await createApp(config, { logger: ['error'] });
  await app.init();
  try {
    // The doors as this compiled script's application loaded them.
    const page = await modulePage(moduleMap(app, root, resolve(__dirname, '..', 'src')), root);
    await writeFile(target, page);
    process.stdout.write(`Wrote ${target}\n`);
  } finally {
    await app.close();
  }
}

void main();
