import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createApp } from '../src/app.factory';
import { loadAppConfig } from '../src/config/app-config';
import { createAsyncApiDocument } from '../src/openapi/asyncapi-document';
import { createOpenApiDocument } from '../src/openapi/openapi-document';
import { version } from '../package.json';

/**
 * Writes the committed openapi.json and asyncapi.json (`npm run openapi`) from the routes and the
 * declared events, on a throw-away database and without a broker.
 */
async function main(): Promise<void> {
  const openApiTarget = resolve(process.argv[2] ?? 'openapi.json');
  const asyncApiTarget = resolve(process.argv[3] ?? 'asyncapi.json');
  const config = loadAppConfig({ DATABASE_URL: 'sqlite::memory:', DEMO_DATA: 'false' });
  const app = await createApp(config, { logger: ['error'] });
  await app.init();
  for (const [target, document] of [
    [openApiTarget, createOpenApiDocument(app, config, version)],
    [asyncApiTarget, createAsyncApiDocument(app, config, version)],
  ] as const) {
    await writeFile(target, `${JSON.stringify(document, null, 2)}\n`);
    process.stdout.write(`Wrote ${target}\n`);
  }
  await app.close();
}

void main();
