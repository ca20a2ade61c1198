import { Logger } from 'nestjs-pino';
import { createApp } from './app.factory';
import { ConfigurationError, loadAppConfig } from './config/app-config';

async function bootstrap(): Promise<void> {
  let config;
  try {
    config = loadAppConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  const app = await createApp(config);
  // Nest closes the server (in-flight requests finish) and the pool on SIGTERM; this bounds how long.
  process.once('SIGTERM', () =>
    setTimeout(() => process.exit(1), config.shutdownTimeoutMs).unref(),
  );
  await app.listen(config.port);
  app.get(Logger).log(`Listening on port ${config.port} (${config.database.kind})`);
}

void bootstrap();
