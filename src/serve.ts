import { type INestApplication, type ModuleMetadata } from '@nestjs/common';
import { tracing } from './tracing/tracing';
import { createApp, type StartupFailure, startupFailureOf } from './app.factory';
import { type AppConfig, ConfigurationError, loadAppConfig } from './config/app-config';
import { installGracefulShutdown } from './graceful-shutdown';
import { listenForHealth } from './health-port';
import { createRootLogger, createStartupFailureLogger } from './logging/logging.module';
import { OPENAPI_PATHS } from './openapi/openapi-document';

/** Says why the service could not start, and what fixes it, as one line; exits 1. */
function failToStart({ message, variables, command }: StartupFailure, error?: unknown): never {
  createStartupFailureLogger().fatal({ variables, command, err: error }, message);
  process.exit(1);
}

/** The address of a path of the service, as a developer on its machine types it. */
function localUrl(port: number, path: string): string {
  return `http://localhost:${port}${path}`;
}

/**
 * Runs `listen` on an initialised application, so that binding is all that can fail: when the port
 * cannot be bound, the service stops naming the variable.
 */
async function listening<T>(variable: string, port: number, listen: () => Promise<T>): Promise<T> {
  try {
    return await listen();
  } catch (error) {
    failToStart(
      {
        message: `The service could not listen on port ${port} (${variable}): ${error instanceof Error ? error.message : String(error)}`,
        variables: [variable],
      },
      error,
    );
  }
}

/**
 * Serves the application configured from the environment until a signal stops it; `modules` are
 * mounted beside the service's own. Its importer loads `./node-version` and `./tracing/tracing` first
 * (src/main.ts).
 */
export async function serve(modules?: ModuleMetadata['imports']): Promise<void> {
  let config: AppConfig;
  try {
    config = loadAppConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    failToStart(startupFailureOf(error));
  }
  const logger = createRootLogger(config);
  let app: INestApplication | undefined;
  try {
    app = await createApp(config, { rootLogger: logger, modules });
    // Apart from listening: the modules' start-up checks (the schema, the routes' scopes) run here.
    await app.init();
  } catch (error) {
    failToStart(startupFailureOf(error), error);
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
  const livenessUrl = localUrl(healthPort ?? config.port, '/health/live');
  const readinessUrl = localUrl(healthPort ?? config.port, '/health/ready');
  logger.info(
    {
      port: config.port,
      database: config.database.kind,
      url,
      swaggerUrl,
      healthPort,
      livenessUrl,
      readinessUrl,
    },
    `Listening on ${url} (${config.database.kind})` +
      (swaggerUrl ? `; the OpenAPI UI is at ${swaggerUrl}` : '') +
      `; the health probes are ${health ? 'on their own port, ' : ''}at ${livenessUrl} and ${readinessUrl}`,
  );
}
