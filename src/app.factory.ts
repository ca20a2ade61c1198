import { type INestApplication, type NestApplicationOptions } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import { type AppConfig } from './config/app-config';
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
    logger: options.logger ?? ['error', 'warn', 'log'],
  });
  // ETags are set deliberately by the wire layer; Express's own would hash every body again.
  app.set('etag', false);
  app.set('x-powered-by', false);
  if (config.apiPrefix) app.setGlobalPrefix(config.apiPrefix);
  app.enableShutdownHooks();
  return app;
}
