import { type INestApplication, type NestApplicationOptions, RequestMethod } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type NestExpressApplication } from '@nestjs/platform-express';
import helmet from 'helmet';
import { Logger } from 'nestjs-pino';
import { version } from '../package.json';
import { AppModule } from './app.module';
import { type AppConfig } from './config/app-config';
import { REQUEST_ID_HEADER } from './logging/logging.module';
import { createOpenApiDocument, serveOpenApi } from './openapi/openapi-document';
import { setServiceTimeZone } from './wire/wire-date';

/** Builds the HTTP application for a configuration: what main.ts serves and the e2e tests drive. */
export async function createApp(
  config: AppConfig,
  options: Pick<NestApplicationOptions, 'logger'> = {},
): Promise<INestApplication> {
  setServiceTimeZone(config.timeZone);
  // The wire layer reads bodies itself, per media type and with its own limit.
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    bodyParser: false,
    bufferLogs: options.logger === undefined,
    logger: options.logger,
  });
  if (options.logger === undefined) app.useLogger(app.get(Logger));
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
  app.enableShutdownHooks();
  // Before init, so its routes come ahead of the not-found handler.
  serveOpenApi(app, createOpenApiDocument(app, config, version));
  return app;
}
