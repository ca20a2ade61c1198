// First: tracing, when asked for, must run before the modules it instruments are loaded.
import { tracing } from './tracing/tracing';
import { type INestApplication } from '@nestjs/common';
import { createApp } from './app.factory';
import { type AppConfig, ConfigurationError, loadAppConfig } from './config/app-config';
import { isDatabaseFailure } from './database/database-errors';
import { installGracefulShutdown } from './graceful-shutdown';
import { listenForHealth } from './health-port';
import { createRootLogger, createStartupFailureLogger } from './logging/logging.module';
import { OPENAPI_PATHS } from './openapi/openapi-document';

/** Says why the service could not start, and which variable to look at, as one line; exits 1. */
function failToStart(message: string, variables: readonly string[], error?: unknown): never {
  createStartupFailureLogger().fatal({ variables, err: error }, message);
  process.exit(1);
}

/** The address of a path of the service, as a developer on its machine types it. */
function localUrl(port: number, path: string): string {
  return `http://localhost:${port}${path}`;
}

/** Runs `listen`; when the port cannot be bound, the service stops naming the variable. */
async function listening<T>(variable: string, port: number, listen: () => Promise<T>): Promise<T> {
  try {
    return await listen();
  } catch (error) {
    failToStart(
      `The service could not listen on port ${port} (${variable}): ${error instanceof Error ? error.message : String(error)}`,
      [variable],
      error,
    );
  }
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
  await listening('PORT', config.port, () => app.listen(config.port));
  const { healthPort } = config.connections;
  const health =
    healthPort === undefined
      ? undefined
      : await listening('HEALTH_PORT', healthPort, () =>
          listenForHealth(app, config.connections, healthPort),
        );
  installGracefulShutdown(
    app,
    logger,
    { drainMs: config.shutdownDrainMs, timeoutMs: config.shutdownTimeoutMs },
    health,
    tracing,
  );
  const url = localUrl(config.port, `/${config.apiPrefix}`);
  const swaggerUrl = config.swagger === 'off' ? undefined : localUrl(config.port, OPENAPI_PATHS[0]);
  const healthUrl = localUrl(healthPort ?? config.port, '/health');
  logger.info(
    { port: config.port, database: config.database.kind, url, swaggerUrl, healthPort, healthUrl },
    `Listening on ${url} (${config.database.kind})` +
      (swaggerUrl ? `; the OpenAPI UI is at ${swaggerUrl}` : '') +
      (health ? `; the health probes are on their own port, at ${healthUrl}/live and /ready` : ''),
  );
}

void bootstrap();
