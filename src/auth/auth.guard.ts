import { type CanActivate, type ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { type Request } from 'express';
import { Authenticator, type Caller } from './authenticator';

const PUBLIC_ROUTE = Symbol('auth:public');

/** Opens a route to every caller (the health probes). */
export const PublicRoute = () => SetMetadata(PUBLIC_ROUTE, true);

/** A request once authenticated: its caller, when the mode identifies one. */
export type AuthenticatedRequest = Request & { caller?: Caller };

/** Authenticates every route but the public ones, and keeps the caller on the request. */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: Authenticator,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const isPublic = this.reflector.getAllAndOverride<boolean | undefined>(PUBLIC_ROUTE, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (isPublic) return true;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    request.caller = await this.authenticator.authenticate(request.headers);
    return true;
  }
}
