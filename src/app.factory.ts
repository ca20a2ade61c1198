import {
  type INestApplication,
  type ModuleMetadata,
  type NestApplicationOptions,
  RequestMethod,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type NestExpressApplication } from '@nestjs/platform-express';
import { type NextFunction, type RequestHandler, type Response } from 'express';
import helmet from 'helmet';
import { type Logger } from 'pino';
import { version } from '../package.json';
import { AppModule } from './app.module';
import { type AuthenticatedRequest } from './auth/auth.guard';
import { Authenticator } from './auth/authenticator';
import { RateLimitGuard } from './auth/rate-limit.guard';
import { UndeclaredScopeGrantError } from './auth/scope-check';
import { type Scope } from './auth/scopes';
import { type AppConfig, ConfigurationError } from './config/app-config';
import { applyConnectionLimits } from './connection-limits';
import { answerUnparsableRequests } from './unparsable-requests';
import { isDatabaseFailure } from './database/database-errors';
import { SchemaBehindError } from './database/schema-check';
import { onHealthPortOnly, onlyHealthOn } from './health-port';
import {
  createRootLogger,
  frameworkLogger,
  HTTP_LOGGER,
  REQUEST_ID_HEADER,
} from './logging/logging.module';
import { METRICS_PATH, METRICS_READ, ServiceMetrics } from './metrics/service-metrics';
import { ASYNCAPI_PATH, serveAsyncApi } from './openapi/asyncapi-document';
import {
  API_DOCS_READ,
  createOpenApiDocument,
  OPENAPI_PATHS,
  serveOpenApi,
} from './openapi/openapi-document';
import { setServiceTimeZone, RouteMethods, WireExpressAdapter } from './wire';

// Percent-escapes of RFC 3986's unreserved characters (letters, digits, - . _ ~): the same path.
const UNRESERVED_ESCAPE = /%(3[0-9]|4[1-9A-F]|5[0-9A]|6[1-9A-F]|7[0-9A]|2D|2E|5F|7E)/gi;
// A slash or a backslash, escaped or not: each separates segments for the legacy's host.
const SEGMENT_SEPARATOR = /%2F|%5C|\\/gi;

/**
 * A path as the legacy's host handed it to routing: percent-escapes of unreserved characters decoded
 * (`/%61pi/...` is `/api/...`), escaped slashes and backslashes read as slashes, then the dot segments
 * removed as RFC 3986 §5.2.4 does (`/api/x/../Requirement/GetRequirements`, `.../%2E%2E`).
 */
function asLegacyPath(path: string): string {
  if (!path.startsWith('/')) return path;
  const segments = path
    .replace(UNRESERVED_ESCAPE, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    .replace(SEGMENT_SEPARATOR, '/')
    .split('/')
    .slice(1);
  const kept: string[] = [];
  segments.forEach((segment, index) => {
    if (segment === '..') kept.pop();
    if (segment !== '.' && segment !== '..') kept.push(segment);
    // A dot segment last leaves the path ending in a slash.
    else if (index === segments.length - 1) kept.push('');
  });
  return `/${kept.join('/')}`;
}

/**
 * Paths as the legacy's routing read them (asLegacyPath), and as its route template
 * `api/{controller}/{action}/{id}` matched them (RouteMethods.legacyRouting): an API endpoint without
 * parameters also answers with one trailing segment, which it ignores
 * (`/api/Transaction/UpdateAgents/1`, `.../GetRequirements%2F5`), and slashes after a route's last
 * segment make no difference (`.../GetTransaction/1//`). The endpoints are known once the
 * application is initialised.
 */
function asLegacyRouting(routes: RouteMethods, apiPrefix: string): RequestHandler {
  let legacyRoute: ((path: string) => string) | undefined;
  return (request, _response, next) => {
    legacyRoute ??= routes.legacyRouting(apiPrefix);
    const query = request.url.slice(request.path.length);
    const routed = legacyRoute(asLegacyPath(request.path));
    if (routed !== request.path) request.url = `${routed}${query}`;
    next();
  };
}

/**
 * Puts `paths` behind the API's authentication (and its rate limit, if any) and `scope`: keys guessed
 * there count against the address like anywhere else.
 */
function protect(app: INestApplication, config: AppConfig, paths: string[], scope: Scope): void {
  const authenticator = app.get(Authenticator);
  const limits = config.rateLimit && app.get(RateLimitGuard);
  app.use(paths, (request: AuthenticatedRequest, _response: Response, next: NextFunction) => {
    const authenticate = () =>
      authenticator.authenticate(request.headers).then((caller) => (request.caller = caller));
    (limits ? limits.admit(request, authenticate) : authenticate())
      .then(() => authenticator.authorize(request, scope))
      .then(() => next(), next);
  });
}

/** What a failed start says: its cause, and what fixes it. */
export interface StartupFailure {
  readonly message: string;
  /** The variables to look at; none when the fix is in the code (a route without a scope…). */
  readonly variables: readonly string[];
  /** The command that fixes it, when one does. */
  readonly command?: string;
}

/**
 * A failure to build or initialise the application (createApp, then `init`), told as what it is:
 * each kind names what fixes it, by its error class rather than its wording. A failure whose message
 * already names its fix in the code (a route without a scope, a wire model's declaration) names no
 * variable.
 */
export function startupFailureOf(error: unknown): StartupFailure {
  if (error instanceof ConfigurationError)
    return { message: error.message, variables: error.variables };
  const because = (variables: readonly string[], command?: string): StartupFailure => ({
    message:
      `The service could not start${variables.length > 0 ? ` (${variables.join(', ')})` : ''}: ` +
      (error instanceof Error ? error.message : String(error)),
    variables,
    command,
  });
  if (error instanceof SchemaBehindError)
    return because(['MIGRATIONS_RUN'], 'npm run migration:run');
  if (error instanceof UndeclaredScopeGrantError) return because([error.variable]);
  // Unreachable, refused, or a schema changed by hand: the database DATABASE_URL names.
  if (isDatabaseFailure(error)) return because(['DATABASE_URL']);
  return because([]);
}

export interface CreateAppOptions extends Pick<NestApplicationOptions, 'logger'> {
  /** The root logger; one of the configuration's own when not given. */
  readonly rootLogger?: Logger;
  readonly modules?: ModuleMetadata['imports'];
  /** The feature modules to mount: all unless told (a module test mounts its module alone). */
  readonly features?: ModuleMetadata['imports'];
}

/**
 * Builds the HTTP application for a configuration: what main.ts serves and the e2e tests drive. The
 * framework logs through the root logger from its first line, unless `logger` says otherwise.
 */
export async function createApp(
  config: AppConfig,
  options: CreateAppOptions = {},
): Promise<INestApplication> {
  setServiceTimeZone(config.timeZone);
  const rootLogger = options.rootLogger ?? createRootLogger(config);
  // The wire layer reads bodies itself, per media type and with its own limit.
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot(config, rootLogger, options.modules, options.features),
    new WireExpressAdapter(),
    {
      bodyParser: false,
      // A failed start (no database, say) rejects here; main.ts reports it and exits.
      abortOnError: false,
      logger: options.logger ?? frameworkLogger(rootLogger),
    },
  );
  const admission = applyConnectionLimits(app.getHttpServer(), config.connections);
  answerUnparsableRequests(app.getHttpServer());
  // First of all: every request, whatever answers it, gets a request id and a log line, and is counted.
  app.use(app.get<RequestHandler>(HTTP_LOGGER));
  const metrics = config.metrics === 'off' ? undefined : app.get(ServiceMetrics);
  if (metrics) app.use(metrics.requestObserver());
  // Then a request past the cap of requests in progress is refused, before it costs anything.
  app.use(admission);
  app.use(asLegacyRouting(app.get(RouteMethods), config.apiPrefix));
  // ETags are set deliberately by the wire layer; Express's own would hash every body again.
  app.set('etag', false);
  app.set('trust proxy', config.trustProxy);
  // TLS ends at the gateway; upgrading sub-requests would break the Swagger UI over plain HTTP.
  app.use(helmet({ contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } }));
  // Its answers carry the security headers too; the path is read as the legacy routing reads it.
  const { healthPort } = config.connections;
  if (healthPort !== undefined)
    app.use(onlyHealthOn(healthPort, config.metrics === 'health-port' ? [METRICS_PATH] : []));
  if (config.corsOrigins.length > 0) {
    app.enableCors({
      origin: [...config.corsOrigins],
      exposedHeaders: ['ETag', 'Retry-After', 'WWW-Authenticate', REQUEST_ID_HEADER],
    });
  }
  if (config.apiPrefix) {
    app.setGlobalPrefix(config.apiPrefix, {
      exclude: [
        { path: 'health/live', method: RequestMethod.GET },
        { path: 'health/ready', method: RequestMethod.GET },
      ],
    });
  }
  if (config.swagger === 'protected')
    protect(app, config, [...OPENAPI_PATHS, ASYNCAPI_PATH], API_DOCS_READ);
  if (metrics) {
    if (config.metrics === 'protected') protect(app, config, [METRICS_PATH], METRICS_READ);
    app.use(
      METRICS_PATH,
      config.metrics === 'health-port'
        ? onHealthPortOnly(healthPort!, metrics.handler())
        : metrics.handler(),
    );
  }
  // Before init, so its routes come ahead of the not-found handler.
  if (config.swagger !== 'off') {
    serveOpenApi(app, createOpenApiDocument(app, config, version));
    serveAsyncApi(app, config, version);
  }
  return app;
}
