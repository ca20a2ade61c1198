import { type MiddlewareConsumer, Module, type NestModule } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Set while the service handles a request, in everything the request's handling awaits: a statement
 * logged with it set was sent for a request, one without it by the service's background work (the
 * relay, an event handler's step).
 */
export const inRequest = new AsyncLocalStorage<true>();

/** Mounted beside the service's modules: every request is handled inside `inRequest`. */
@Module({})
export class RequestContextModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply((_request: unknown, _response: unknown, next: () => void) => inRequest.run(true, next))
      .forRoutes('*');
  }
}
