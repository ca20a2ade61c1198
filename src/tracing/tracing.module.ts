import { Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { HandlerSpans } from './handler-spans.interceptor';

/** The NestJS spans of a trace, around every handler (see HandlerSpans). */
@Module({ providers: [{ provide: APP_INTERCEPTOR, useClass: HandlerSpans }] })
export class TracingModule {}
