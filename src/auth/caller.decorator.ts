import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { type AuthenticatedRequest } from './auth.guard';

/** The authenticated caller's id, or `undefined` when the mode identifies nobody. */
export const CallerId = createParamDecorator(
  (_: unknown, context: ExecutionContext) =>
    context.switchToHttp().getRequest<AuthenticatedRequest>().caller?.id,
);
