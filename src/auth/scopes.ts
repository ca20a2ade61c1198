import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import { DomainError } from '../common/domain-error';
import { WireErrors } from '../wire';

/**
 * What a caller may do: a name (`transactions:write`) an API key or a token is granted, and what it
 * allows, as the OpenAPI document tells a client. Each module declares the scopes of its own routes.
 */
export interface Scope {
  readonly name: string;
  readonly description: string;
}

/** A scope name: `resource:action`, as OAuth 2.0 scope tokens may be written (RFC 6749, 3.3). */
export const SCOPE_NAME = /^[a-z][a-z0-9-]*(?:[.:][a-z][a-z0-9-]*)*$/;

const declared = new Map<string, Scope>();

/** Declares a scope once, beside the routes that require it; a second declaration of a name throws. */
export function declareScope(name: string, description: string): Scope {
  if (!SCOPE_NAME.test(name)) throw new TypeError(`The scope name ${name} is not resource:action`);
  if (declared.has(name)) throw new TypeError(`The scope ${name} is declared twice`);
  const scope = { name, description };
  declared.set(name, scope);
  return scope;
}

/** Every scope declared so far, in declaration order. */
export function declaredScopes(): readonly Scope[] {
  return [...declared.values()];
}

/** The challenge's realm, in every WWW-Authenticate the service sends. */
export const REALM = 'property-sales';

/**
 * An authenticated caller without the scope a route requires (RFC 6750, 3.1): 403, not 401, since
 * other credentials would not help the caller, only a grant would.
 */
export class InsufficientScopeError extends DomainError {
  static readonly status = 403;
  static readonly description =
    "The caller's API key or token lacks the scope this operation requires; see WWW-Authenticate.";
  readonly code = 'insufficient_scope';
  readonly title = 'Insufficient scope';
  /**
   * @param scope The scope the route requires.
   * @param scheme The caller's authentication scheme: `Bearer` or `ApiKey`.
   */
  constructor(
    readonly scope: string,
    scheme: string,
  ) {
    super(`The caller is not granted the scope ${scope}, which this operation requires.`, {
      'WWW-Authenticate': `${scheme} realm="${REALM}", error="insufficient_scope", scope="${scope}"`,
    });
  }
}

export const REQUIRED_SCOPE = Symbol('auth:required-scope');

/** The OpenAPI extension naming an operation's scopes, for the document's security requirements. */
export const REQUIRED_SCOPES_EXTENSION = 'x-required-scopes';

/**
 * The scope a caller needs for a route (or every route of a controller), written beside its
 * `@WireErrors`; the 403 it answers without it is documented with the route, its example naming the
 * scope. Every route needs one (or `@PublicRoute`): the service does not start otherwise.
 */
export const RequiresScope = (scope: Scope) =>
  applyDecorators(
    SetMetadata(REQUIRED_SCOPE, scope),
    ApiExtension(REQUIRED_SCOPES_EXTENSION, [scope.name]),
    WireErrors({
      name: InsufficientScopeError.name,
      status: InsufficientScopeError.status,
      description: InsufficientScopeError.description,
      prototype: InsufficientScopeError.prototype,
      example: new InsufficientScopeError(scope.name, 'Bearer'),
    }),
  );
