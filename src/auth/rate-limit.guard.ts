import { type ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard, type ThrottlerLimitDetail } from '@nestjs/throttler';
import { DomainError } from '../common/domain-error';
import { type AuthenticatedRequest } from './auth.guard';

export class RateLimitedError extends DomainError {
  static readonly status = 429;
  static readonly description =
    'Too many requests from this caller (RATE_LIMIT); retry after Retry-After seconds.';
  readonly code = 'rate_limited';
  readonly title = 'Too many requests';
  constructor(retryAfterSeconds: number) {
    super(`Too many requests; retry after ${retryAfterSeconds} seconds.`, {
      'Retry-After': String(retryAfterSeconds),
    });
  }
}

/**
 * Counts requests per caller: the authenticated identity, else the client address as TRUST_PROXY
 * derives it. A raw X-Forwarded-For header is never read, so a client cannot pick its own bucket.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  protected override getTracker(request: Record<string, unknown>): Promise<string> {
    const { caller, ip, socket } = request as unknown as AuthenticatedRequest;
    return Promise.resolve(
      caller ? `caller:${caller.id}` : `address:${ip ?? socket.remoteAddress ?? 'unknown'}`,
    );
  }

  /** One bucket per caller across every route (the default would keep one per route). */
  protected override generateKey(
    _context: ExecutionContext,
    tracker: string,
    throttlerName: string,
  ): string {
    return `${throttlerName}:${tracker}`;
  }

  protected override throwThrottlingException(
    _context: unknown,
    detail: ThrottlerLimitDetail,
  ): Promise<void> {
    throw new RateLimitedError(Math.max(1, Math.ceil(detail.timeToBlockExpire)));
  }
}
