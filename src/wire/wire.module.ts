import { Global, Module } from '@nestjs/common';
import { APP_FILTER, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { JsonCodec } from './json.codec';
import { RouteMethods } from './route-methods';
import { WireBodyPipe } from './wire-body.pipe';
import { WireExceptionFilter } from './wire-exception.filter';
import { WireInterceptor } from './wire.interceptor';
import { WireFormats } from './wire-negotiation';

/**
 * The cross-cutting wire layer: content negotiation, request codecs and error bodies for every module.
 * A module takes part by declaring wire models for its DTOs and `@WireResponse` on its routes.
 */
@Global()
@Module({
  providers: [
    { provide: WireFormats, useFactory: () => new WireFormats([new JsonCodec()]) },
    RouteMethods,
    { provide: APP_INTERCEPTOR, useClass: WireInterceptor },
    { provide: APP_PIPE, useClass: WireBodyPipe },
    { provide: APP_FILTER, useClass: WireExceptionFilter },
  ],
  exports: [WireFormats],
})
export class WireModule {}
