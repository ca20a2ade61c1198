import { type INestApplication, type NestApplicationOptions, RequestMethod } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type NestExpressApplication } from '@nestjs/platform-express';
import { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import helmet from 'helmet';
import { Logger } from 'nestjs-pino';
import { version } from '../package.json';
import { AppModule } from './app.module';
import { Authenticator } from './auth/authenticator';
import { type AppConfig } from './config/app-config';
import { HTTP_LOGGER, REQUEST_ID_HEADER } from './logging/logging.module';
import { createOpenApiDocument, OPENAPI_PATHS, serveOpenApi } from './openapi/openapi-document';
import { setServiceTimeZone } from './wire/wire-date';
import { WireExpressAdapter } from './wire/wire-express-adapter';

/** Builds the HTTP application for a configuration: what main.ts serves and the e2e tests drive. */
export async function createApp(
  config: AppConfig,
  options: Pick<NestApplicationOptions, 'logger'> = {},
): Promise<INestApplication> {
  setServiceTimeZone(config.timeZone);
  // The wire layer reads bodies itself, per media type and with its own limit.
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot(config),
    new WireExpressAdapter(),
    {
      bodyParser: false,
      // A failed start (no database, say) rejects here; main.ts reports it and exits.
      abortOnError: false,
      bufferLogs: options.logger === undefined,
      logger: options.logger,
    },
  );
  if (options.logger === undefined) app.useLogger(app.get(Logger));
  // First of all: every request, whatever answers it, gets a request id and a log line.
  app.use(app.get<RequestHandler>(HTTP_LOGGER));
  // ETags are set deliberately by the wire layer; Express's own would hash every body again.
  app.set('etag', false);
  app.set('trust proxy', config.trustProxy);
  // TLS ends at the gateway; upgrading sub-requests would break the Swagger UI over plain HTTP.
  app.use(helmet({ contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } }));
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
  if (config.swagger === 'protected') {
    const authenticator = app.get(Authenticator);
    app.use(OPENAPI_PATHS, (request: Request, _response: Response, next: NextFunction) => {
      authenticator.authenticate(request.headers).then(() => next(), next);
    });
  }
  // Before init, so its routes come ahead of the not-found handler.
  if (config.swagger !== 'off') serveOpenApi(app, createOpenApiDocument(app, config, version));
  return app;
}
