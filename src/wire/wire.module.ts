import { Global, Module } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { FormReader } from './codecs/form.codec';
import { JsonCodec } from './codecs/json.codec';
import { RouteMethods } from './http/route-methods';
import { RepresentationCache } from './http/versioned-body';
import { WireBodyPipe } from './http/wire-body.pipe';
import { WireExceptionFilter } from './http/wire-exception.filter';
import { WireInterceptor } from './http/wire.interceptor';
import { WireFormats } from './http/wire-negotiation';
import { XmlCodec } from './codecs/xml.codec';
import { checkWireModels } from './model/wire-validation';

/** Stands for the wire models' rules, read and found sound when the application is built. */
export const WIRE_MODELS_CHECKED = Symbol('WireModelsChecked');

/**
 * The cross-cutting wire layer: content negotiation, request codecs and error bodies for every module.
 * A module takes part by declaring wire models for its DTOs and `@WireResponse` on its routes.
 */
@Global()
@Module({
  providers: [
    {
      provide: WireFormats,
      inject: [APP_CONFIG],
      // Writers in Web API's formatter order: JSON wins ties.
      useFactory: (config: AppConfig) => {
        const json = new JsonCodec();
        const xml = new XmlCodec(config.xmlNamespace);
        return new WireFormats([json, xml, new FormReader()], [json, xml]);
      },
    },
    {
      provide: WIRE_MODELS_CHECKED,
      // While the application is built, before it listens: a class-validator decorator that would not
      // work on a wire DTO stops the start, named with its class, member and the option to use.
      useFactory: () => {
        checkWireModels();
        return true;
      },
    },
    RouteMethods,
    RepresentationCache,
    { provide: APP_INTERCEPTOR, useClass: WireInterceptor },
    { provide: APP_PIPE, useClass: WireBodyPipe },
    { provide: APP_FILTER, useClass: WireExceptionFilter },
  ],
  exports: [WireFormats, RepresentationCache],
})
export class WireModule {}
