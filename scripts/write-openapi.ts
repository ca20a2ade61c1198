import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createApp } from '../src/app.factory';
import { loadAppConfig } from '../src/config/app-config';
import { createOpenApiDocument } from '../src/openapi/openapi-document';
import { version } from '../package.json';

/** Writes the committed openapi.json (`npm run openapi`) from the routes, on a throw-away database. */
async function main(): Promise<void> {
  const target = resolve(process.argv[2] ?? 'openapi.json');
  const config = loadAppConfig({ DATABASE_URL: 'sqlite::memory:', DEMO_DATA: 'false' });
  const app = await createApp(config, { logger: ['error'] });
  await app.init();
  const document = createOpenApiDocument(app, config, version);
  await writeFile(target, `${JSON.stringify(document, null, 2)}\n`);
  await app.close();
  process.stdout.write(`Wrote ${target}\n`);
}

void main();
