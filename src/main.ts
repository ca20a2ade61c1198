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
  let app;
  try {
    app = await createApp(config);
    await app.listen(config.port);
  } catch (error) {
    process.stderr.write(
      `The service could not start: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  }
  installGracefulShutdown(app, {
    drainMs: config.shutdownDrainMs,
    timeoutMs: config.shutdownTimeoutMs,
  });
  app.get(Logger).log(`Listening on port ${config.port} (${config.database.kind})`);
}

void bootstrap();
