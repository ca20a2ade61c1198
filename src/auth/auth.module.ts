import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ThrottlerModule } from '@nestjs/throttler';
import { type AppConfig } from '../config/app-config';
import { AuthGuard } from './auth.guard';
import { Authenticator } from './authenticator';
import { RateLimitGuard } from './rate-limit.guard';

/** Authentication for every route, then rate limiting per caller when RATE_LIMIT is set. */
@Module({})
export class AuthModule {
  static forRoot(config: AppConfig): DynamicModule {
    // Guards run in this order: the caller is known before its requests are counted.
    const guards: Provider[] = [{ provide: APP_GUARD, useClass: AuthGuard }];
    const imports = [];
    if (config.rateLimit) {
      imports.push(
        ThrottlerModule.forRoot([
          { limit: config.rateLimit.limit, ttl: config.rateLimit.windowSeconds * 1000 },
        ]),
      );
      guards.push({ provide: APP_GUARD, useClass: RateLimitGuard });
    }
    return {
      module: AuthModule,
      global: true,
      imports,
      providers: [Authenticator, ...guards],
      exports: [Authenticator],
    };
  }
}
