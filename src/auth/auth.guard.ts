import { type CanActivate, type ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { type Request } from 'express';
import { Authenticator, type CallerOf } from './authenticator';
import { REQUIRED_SCOPE, type Scope } from './scopes';

export const PUBLIC_ROUTE = Symbol('auth:public');

/** Opens a route to every caller (the health probes): it needs no credential and no scope. */
export const PublicRoute = () => SetMetadata(PUBLIC_ROUTE, true);

/** A request once authenticated: its caller, when the mode identifies one. */
export type AuthenticatedRequest = Request & CallerOf;

/**
 * Authenticates every route but the public ones, and keeps the caller on the request; then lets the
 * caller through only with the route's scope (RequiresScope).
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: Authenticator,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.isPublic(context)) return true;
    await this.authenticate(context);
    this.authorize(context);
    return true;
  }

  isPublic(context: ExecutionContext): boolean {
    return this.metadata<boolean>(PUBLIC_ROUTE, context) ?? false;
  }

  /** Sets the request's caller; throws AuthenticationError. */
  async authenticate(context: ExecutionContext): Promise<void> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    request.caller = await this.authenticator.authenticate(request.headers);
  }

  /** Throws InsufficientScopeError unless the request's caller holds the route's scope. */
  authorize(context: ExecutionContext): void {
    const scope = this.metadata<Scope>(REQUIRED_SCOPE, context)!;
    this.authenticator.authorize(context.switchToHttp().getRequest<AuthenticatedRequest>(), scope);
  }

  private metadata<T>(key: symbol, context: ExecutionContext): T | undefined {
    return this.reflector.getAllAndOverride<T | undefined>(key, [
      context.getHandler(),
      context.getClass(),
    ]);
  }
}
