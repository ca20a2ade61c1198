import { Logger } from 'nestjs-pino';
import { createApp } from './app.factory';
import { ConfigurationError, loadAppConfig } from './config/app-config';
import { installGracefulShutdown } from './graceful-shutdown';

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
  await app.listen(config.port);
  installGracefulShutdown(app, config.shutdownTimeoutMs);
  app.get(Logger).log(`Listening on port ${config.port} (${config.database.kind})`);
}

void bootstrap();
