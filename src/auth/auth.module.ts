import { type DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD, DiscoveryModule } from '@nestjs/core';
import { type AppConfig } from '../config/app-config';
import { AuthGuard } from './auth.guard';
import { Authenticator } from './authenticator';
import { RateLimitGuard } from './rate-limit.guard';
import { RateLimitStore } from './rate-limit.store';
import { ScopeCheck } from './scope-check';

/**
 * Authentication and authorization by scope for every route (ScopeCheck makes sure each has one); with a rate limit (RATE_LIMIT, or AUTH_FAILURE_LIMIT, on by default
 * with authentication), inside rate limiting (RateLimitGuard), which must see failed authentications
 * to count them.
 */
@Module({})
export class AuthModule {
  static forRoot(config: AppConfig): DynamicModule {
    const providers = config.rateLimit
      ? [
          AuthGuard,
          RateLimitStore,
          RateLimitGuard,
          { provide: APP_GUARD, useExisting: RateLimitGuard },
        ]
      : [{ provide: APP_GUARD, useClass: AuthGuard }];
    return {
      module: AuthModule,
      global: true,
      imports: [DiscoveryModule],
      providers: [Authenticator, ScopeCheck, ...providers],
      exports: [Authenticator, ...(config.rateLimit ? [RateLimitStore, RateLimitGuard] : [])],
    };
  }
}
