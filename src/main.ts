import { type INestApplication } from '@nestjs/common';
import { createApp } from './app.factory';
import { type AppConfig, ConfigurationError, loadAppConfig } from './config/app-config';
import { isDatabaseFailure } from './database/database-errors';
import { installGracefulShutdown } from './graceful-shutdown';
import { createRootLogger, createStartupFailureLogger } from './logging/logging.module';
import { OPENAPI_PATHS } from './openapi/openapi-document';

/** Says why the service could not start, and which variable to look at, as one line; exits 1. */
function failToStart(message: string, variables: readonly string[], error?: unknown): never {
  createStartupFailureLogger().fatal({ variables, err: error }, message);
  process.exit(1);
}

/** The address of a path of the service, as a developer on its machine types it. */
function localUrl(config: AppConfig, path: string): string {
  return `http://localhost:${config.port}${path}`;
}

async function bootstrap(): Promise<void> {
  let config: AppConfig;
  try {
    config = loadAppConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    failToStart(error.message, error.variables);
  }
  const logger = createRootLogger(config);
  let app: INestApplication | undefined;
  try {
    app = await createApp(config, { rootLogger: logger });
  } catch (error) {
    const variables = isDatabaseFailure(error) ? ['DATABASE_URL'] : [];
    failToStart(
      `The service could not start${variables.length > 0 ? ` (${variables.join(', ')})` : ''}: ` +
        (error instanceof Error ? error.message : String(error)),
      variables,
      error,
    );
  }
  try {
    await app.listen(config.port);
  } catch (error) {
    failToStart(
      `The service could not listen on port ${config.port}: ${error instanceof Error ? error.message : String(error)}`,
      ['PORT'],
      error,
    );
  }
  installGracefulShutdown(app, logger, {
    drainMs: config.shutdownDrainMs,
    timeoutMs: config.shutdownTimeoutMs,
  });
  const url = localUrl(config, `/${config.apiPrefix}`);
  const swaggerUrl = config.swagger === 'off' ? undefined : localUrl(config, OPENAPI_PATHS[0]);
  logger.info(
    { port: config.port, database: config.database.kind, url, swaggerUrl },
    `Listening on ${url} (${config.database.kind})` +
      (swaggerUrl ? `; the OpenAPI UI is at ${swaggerUrl}` : ''),
  );
}

void bootstrap();
