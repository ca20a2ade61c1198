import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { type AuthenticatedRequest } from '../auth/auth.guard';
import { holdsScope } from '../auth/authenticator';
import { declareScope } from '../auth/scopes';

export const WEBHOOKS_ADMIN = declareScope(
  'webhooks:admin',
  "With webhooks:manage: every webhook subscription, whoever owns it, where webhooks:manage reaches the caller's own alone. For the service's operators.",
);

/**
 * Who calls a webhook route: the owner of what it creates, and whether it reaches every subscription
 * (webhooks:admin) or its own alone. Without authentication the caller is the operator: no owner, and
 * every scope, webhooks:admin included.
 */
export type WebhookActor =
  | { readonly owner: string | null; readonly admin: true }
  | { readonly owner: string; readonly admin: false };

/** The request's WebhookActor, from its authenticated caller. */
export const Actor = createParamDecorator((_: unknown, context: ExecutionContext): WebhookActor => {
  const { caller } = context.switchToHttp().getRequest<AuthenticatedRequest>();
  if (!caller) return { owner: null, admin: true };
  return { owner: caller.id, admin: holdsScope(caller, WEBHOOKS_ADMIN) };
});
