import { type DynamicModule, type LoggerService, Module } from '@nestjs/common';
import { type Request, type RequestHandler, type Response } from 'express';
import { Logger as NestPinoLogger, LoggerModule, PinoLogger } from 'nestjs-pino';
import { randomUUID } from 'node:crypto';
import { destination, type Logger, pino } from 'pino';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { LINE_OPTIONS } from './line-options';
import { QueryRedaction } from './query-redaction';
import { routeTemplate } from './route-template';
import { traceIdsOf } from './trace-ids';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/** The request logger, which createApp mounts ahead of every route (the API, probes and Swagger). */
export const HTTP_LOGGER = Symbol('HTTP_LOGGER');

// A gateway's id is kept when it is a plain token; anything else could forge log lines.
const ACCEPTABLE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The gateway's X-Request-Id, or a new one; echoed on the response. */
function assignRequestId(request: Request, response: Response): string {
  const incoming = request.headers['x-request-id'];
  const id =
    typeof incoming === 'string' && ACCEPTABLE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  response.setHeader(REQUEST_ID_HEADER, id);
  return id;
}

const FAILURE = Symbol('failure');
type FailedResponse = Response & { [FAILURE]?: unknown };

/** Notes what made a response a 5xx, for its request line to carry (with the request id). */
export function recordFailure(response: Response, failure: unknown): void {
  (response as FailedResponse)[FAILURE] = failure;
}

/** What authentication notes on a request (src/auth), as the request line reads it. */
interface Audited {
  readonly caller?: { readonly id: string };
  readonly refusedScope?: string;
}

/**
 * One JSON line per request (method, route, status, duration, request id, caller, the scope a 403
 * refused it for, client address, and the trace ids when there is a trace), written once the
 * response finishes or the connection closes.
 * Only those fields are logged: never headers, bodies or credentials (the URL's are redacted). It runs
 * on every request, so it logs through the root logger: no child logger and no async context per
 * request.
 */
function createHttpLogger(logger: Logger, redaction: QueryRedaction): RequestHandler {
  return (request, response, next) => {
    const started = Date.now();
    const id = assignRequestId(request, response);
    (request as Request & { id: string }).id = id;
    // Read now, in the request's own context: the server span's, when tracing is on.
    const traced = traceIdsOf(request);
    const complete = () => {
      response.off('finish', complete);
      response.off('close', complete);
      const status = response.statusCode;
      const failure = (response as FailedResponse)[FAILURE];
      const route = routeTemplate(request);
      const level =
        failure !== undefined || status >= 500
          ? 'error'
          : status >= 400
            ? 'warn'
            : // The gateway's and the orchestrator's probes come every few seconds.
              route?.startsWith(PROBES)
              ? 'debug'
              : 'info';
      if (!logger.isLevelEnabled(level)) return;
      const responseTime = Date.now() - started;
      const url = redaction.url(request.originalUrl);
      logger[level](
        {
          reqId: id,
          req: { id, method: request.method, url, remoteAddress: request.ip },
          res: { statusCode: status },
          responseTime,
          route,
          caller: (request as Audited).caller?.id,
          missing_scope: (request as Audited).refusedScope,
          err: failure,
          trace_id: traced?.trace_id,
          span_id: traced?.span_id,
        },
        `${request.method} ${route ?? url} ${status} ${responseTime}ms`,
      );
    };
    response.on('finish', complete);
    response.on('close', complete);
    next();
  };
}

/** Routes of the health probes, whose successes are logged at debug. */
const PROBES = '/health/';

/** The service's one logger, on stdout: requests, start-up, shutdown, and the framework's own lines. */
export function createRootLogger(config: Pick<AppConfig, 'logLevel' | 'prettyLogs'>): Logger {
  return pino({
    ...LINE_OPTIONS,
    level: config.logLevel,
    transport: config.prettyLogs
      ? { target: 'pino-pretty', options: { singleLine: true } }
      : undefined,
  });
}

/**
 * Where a failure to start is told, on stderr, as one JSON line whatever LOG_LEVEL and LOG_FORMAT
 * say (they may be what failed): synchronous, so the line is out before the process exits.
 */
export function createStartupFailureLogger(): Logger {
  return pino(LINE_OPTIONS, destination({ fd: 2, sync: true }));
}

/** The framework's logger writing through the root logger, from the first line of the start-up. */
export function frameworkLogger(logger: Logger): LoggerService {
  return new NestPinoLogger(new PinoLogger({ pinoHttp: { logger } }), {});
}

@Module({})
export class LoggingModule {
  static forRoot(logger: Logger): DynamicModule {
    return {
      module: LoggingModule,
      // The service's own lines (start-up, errors) go through the same logger as the requests'.
      imports: [
        LoggerModule.forRoot({
          pinoHttp: { logger },
          useExisting: true,
          // No middleware of its own: the request line above is the only per-request logging.
          forRoutes: [],
        }),
      ],
      providers: [
        {
          provide: HTTP_LOGGER,
          useFactory: (config: AppConfig) =>
            createHttpLogger(logger, new QueryRedaction(config.logRedactQueryParameters)),
          inject: [APP_CONFIG],
        },
      ],
      exports: [HTTP_LOGGER],
    };
  }
}
