import { type DynamicModule, Module } from '@nestjs/common';
import { type Request, type Response } from 'express';
import { LoggerModule } from 'nestjs-pino';
import { stdTimeFunctions } from 'pino';
import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type ServerResponse } from 'node:http';
import { type AppConfig } from '../config/app-config';

export const REQUEST_ID_HEADER = 'X-Request-Id';

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

/**
 * One JSON line per request (method, route, status, duration, request id), through pino. Only those
 * fields are logged: never headers, bodies or credentials.
 */
@Module({})
export class LoggingModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        LoggerModule.forRoot({
          pinoHttp: {
            level: config.logLevel,
            timestamp: stdTimeFunctions.isoTime,
            transport: config.prettyLogs
              ? { target: 'pino-pretty', options: { singleLine: true } }
              : undefined,
            genReqId: assignRequestId,
            quietReqLogger: true,
            serializers: {
              // `ip` follows TRUST_PROXY: the client's address as the trusted gateway reports it.
              req: (request: Request & { id: string }) => ({
                id: request.id,
                method: request.method,
                url: request.url,
                remoteAddress: request.ip,
              }),
              res: (response: Response) => ({ statusCode: response.statusCode }),
            },
            // Added when the response is logged: only then has the router matched an endpoint.
            customSuccessObject: (request, _response, line: object) => ({
              ...line,
              route: routeOf(request),
            }),
            customErrorObject: (request, _response, _error, line: object) => ({
              ...line,
              route: routeOf(request),
            }),
            customLogLevel: (_request, response, error) =>
              error || response.statusCode >= 500
                ? 'error'
                : response.statusCode >= 400
                  ? 'warn'
                  : 'info',
            customSuccessMessage: (request, response, responseTime) =>
              `${request.method} ${routeOf(request) ?? request.url} ${response.statusCode} ${Math.round(responseTime)}ms`,
            customErrorMessage: (request, response) =>
              `${request.method} ${routeOf(request) ?? request.url} ${response.statusCode}`,
          },
        }),
      ],
    };
  }
}
