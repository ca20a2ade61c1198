import {
  type CanActivate,
  type ExecutionContext,
  Inject,
  Injectable,
  SetMetadata,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DomainError } from '../common/domain-error';
import { APP_CONFIG, type AppConfig, type RateLimitConfig } from '../config/app-config';
import { AuthGuard, type AuthenticatedRequest } from './auth.guard';
import { AuthenticationError } from './authenticator';
import { type BucketState, RateLimitStore } from './rate-limit.store';

export class RateLimitedError extends DomainError {
  static readonly status = 429;
  static readonly description =
    'Too many requests from this caller or client address (RATE_LIMIT); retry after Retry-After seconds.';
  static readonly example = new RateLimitedError(12);
  readonly code = 'rate_limited';
  readonly title = 'Too many requests';
  constructor(retryAfterSeconds: number) {
    super(`Too many requests; retry after ${retryAfterSeconds} seconds.`, {
      'Retry-After': String(retryAfterSeconds),
    });
  }
}

const SKIP_RATE_LIMIT = Symbol('rate-limit:skip');

/** Leaves a route out of rate limiting (the health probes: the gateway must always reach them). */
export const SkipRateLimit = () => SetMetadata(SKIP_RATE_LIMIT, true);

/**
 * Authentication with rate limiting around it. With RATE_LIMIT, a request is counted against its
 * caller once authenticated; an anonymous one, and one whose credentials fail, against its client
 * address (as TRUST_PROXY derives it: a raw X-Forwarded-For never picks the bucket). With
 * AUTH_FAILURE_LIMIT (on by default when authentication is), failed authentications are also counted
 * on their own per address. An address past either limit is refused before its credentials are
 * checked, and each check first takes a place in the buckets its failure would count in: however many
 * requests arrive together, keys cannot be guessed faster than the limits allow.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  private readonly config: RateLimitConfig;
  private readonly authenticates: boolean;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly reflector: Reflector,
    private readonly auth: AuthGuard,
    private readonly store: RateLimitStore,
  ) {
    this.config = config.rateLimit as RateLimitConfig;
    this.authenticates = config.auth.mode !== 'none';
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const skip = this.reflector.getAllAndOverride<boolean | undefined>(SKIP_RATE_LIMIT, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (skip) return this.auth.canActivate(context);
    const open = this.auth.isPublic(context);
    await this.admit(context.switchToHttp().getRequest<AuthenticatedRequest>(), async () => {
      if (!open) await this.auth.authenticate(context);
    });
    // After admission: a caller refused for its scope has spent a request, not failed to authenticate.
    if (!open) this.auth.authorize(context);
    return true;
  }

  /**
   * Runs `authenticate` (which sets `request.caller`, or throws AuthenticationError) within the
   * limits; throws RateLimitedError past them. Also for what authenticates outside the guards.
   */
  async admit(request: AuthenticatedRequest, authenticate: () => Promise<unknown>): Promise<void> {
    const ip = request.ip ?? request.socket.remoteAddress ?? 'unknown';
    const address = `address:${ip}`;
    const { limit, authFailureLimit } = this.config;
    if (!this.authenticates) {
      await authenticate();
      if (limit > 0) this.refuseWhenOver(await this.store.hit(address), limit);
      return;
    }
    // The buckets a failure counts in: no more checks are under way in each than it has failures left.
    const buckets = [
      { key: `failures:${ip}`, limit: authFailureLimit },
      { key: address, limit },
    ].filter((bucket) => bucket.limit > 0);
    const admission = await this.store.reserve(buckets);
    if (!admission.admitted) throw this.refusal(admission);
    let counted: string[] = [];
    try {
      await authenticate();
      // A caller's requests count against the caller; a request without one (an open route's)
      // against its address.
      if (!request.caller) counted = [address];
    } catch (error) {
      if (error instanceof AuthenticationError) counted = buckets.map(({ key }) => key);
      throw error;
    } finally {
      await admission.release(counted);
    }
    if (limit > 0 && request.caller)
      this.refuseWhenOver(await this.store.hit(`caller:${request.caller.id}`), limit);
  }

  /** After a request is counted: it was one too many. */
  private refuseWhenOver(state: BucketState, limit: number): void {
    if (state.count > limit) throw this.refusal(state);
  }

  private refusal({ resetInMs }: { resetInMs: number }): RateLimitedError {
    return new RateLimitedError(Math.max(1, Math.ceil(resetInMs / 1000)));
  }
}
