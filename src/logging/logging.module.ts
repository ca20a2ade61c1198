import { type DynamicModule, Module, RequestMethod } from '@nestjs/common';
import { type Request } from 'express';
import { LoggerModule } from 'nestjs-pino';
import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type ServerResponse } from 'node:http';
import { type Logger, pino, stdTimeFunctions } from 'pino';
import { pinoHttp } from 'pino-http';
import { type AuthenticatedRequest } from '../auth/auth.guard';
import { type AppConfig } from '../config/app-config';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/** The request logger, which createApp mounts ahead of every route (the API, probes and Swagger). */
export const HTTP_LOGGER = Symbol('HTTP_LOGGER');

// A gateway's id is kept when it is a plain token; anything else could forge log lines.
const ACCEPTABLE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The gateway's X-Request-Id, or a new one; echoed on the response. */
export function assignRequestId(request: IncomingMessage, response: ServerResponse): string {
  const incoming = request.headers['x-request-id'];
  const id =
    typeof incoming === 'string' && ACCEPTABLE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  response.setHeader(REQUEST_ID_HEADER, id);
  return id;
}

/** The route template a request matched (`/api/Transaction/GetTransaction/:transaction_id`), if any. */
function routeOf(request: IncomingMessage): string | undefined {
  const route = (request as { route?: { path?: unknown } }).route;
  return typeof route?.path === 'string' ? route.path : undefined;
}

/** What is known of a request once it is answered: the route it matched and who called. */
const completion = (request: IncomingMessage) => ({
  route: routeOf(request),
  caller: (request as AuthenticatedRequest).caller?.id,
});

/**
 * One JSON line per request (method, route, status, duration, request id, caller, client address),
 * through pino. Only those fields are logged: never headers, bodies or credentials.
 */
function createHttpLogger(logger: Logger) {
  return pinoHttp({
    logger,
    genReqId: assignRequestId,
    quietReqLogger: true,
    serializers: {
      // pino hands serializers its own view of the request; `raw` is Express's, whose `ip` follows
      // TRUST_PROXY: the client's address as the trusted gateway reports it.
      req: (request: { id: string; method: string; url: string; raw: Request }) => ({
        id: request.id,
        method: request.method,
        url: request.url,
        remoteAddress: request.raw.ip,
      }),
      res: (response: { statusCode: number }) => ({ statusCode: response.statusCode }),
    },
    customLogLevel: (_request, response, error) =>
      error || response.statusCode >= 500 ? 'error' : response.statusCode >= 400 ? 'warn' : 'info',
    customSuccessMessage: (request, response, responseTime) =>
      `${request.method} ${routeOf(request) ?? request.url} ${response.statusCode} ${Math.round(responseTime)}ms`,
    customErrorMessage: (request, response) =>
      `${request.method} ${routeOf(request) ?? request.url} ${response.statusCode}`,
    // Added when the response is logged: only then has the router matched a route.
    customSuccessObject: (request, _response, line: object) => ({
      ...line,
      ...completion(request),
    }),
    customErrorObject: (request, _response, _error, line: object) => ({
      ...line,
      ...completion(request),
    }),
  });
}

@Module({})
export class LoggingModule {
  static forRoot(config: AppConfig): DynamicModule {
    const logger = pino({
      level: config.logLevel,
      timestamp: stdTimeFunctions.isoTime,
      transport: config.prettyLogs
        ? { target: 'pino-pretty', options: { singleLine: true } }
        : undefined,
    });
    return {
      module: LoggingModule,
      // The service's own lines (start-up, errors) go through the same logger as the requests'.
      imports: [
        LoggerModule.forRoot({
          pinoHttp: { logger },
          useExisting: true,
          forRoutes: [{ path: '{*path}', method: RequestMethod.ALL }],
        }),
      ],
      providers: [{ provide: HTTP_LOGGER, useValue: createHttpLogger(logger) }],
      exports: [HTTP_LOGGER],
    };
  }
}
