import { Inject, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { type IncomingHttpHeaders } from 'node:http';
import {
  createRemoteJWKSet,
  type CryptoKey,
  importSPKI,
  type JWTVerifyGetKey,
  type JWTPayload,
  jwtVerify,
} from 'jose';
import { DomainError } from '../common/domain-error';
import { APP_CONFIG, type AppConfig, type ApiKey, type AuthConfig } from '../config/app-config';
import { InsufficientScopeError, REALM, type Scope } from './scopes';

/** Who made a request: an API key's name or a token's subject, and what it was granted. */
export interface Caller {
  readonly id: string;
  /** The scopes granted; `undefined` for an API key listed without scopes, which has them all. */
  readonly scopes?: ReadonlySet<string>;
}

export class AuthenticationError extends DomainError {
  static readonly status = 401;
  static readonly description =
    'Missing or invalid credentials (AUTH_MODE apikey or jwt); see WWW-Authenticate.';
  static readonly example = new AuthenticationError(
    'The request carries no API key.',
    `ApiKey realm="${REALM}"`,
  );
  readonly code = 'unauthenticated';
  readonly title = 'Authentication required';
  /** @param challenge The scheme and parameters the caller must answer with. */
  constructor(message: string, challenge: string) {
    super(message, { 'WWW-Authenticate': challenge });
  }
}

/**
 * Whether `caller` was granted `scope`. Without authentication (AUTH_MODE none: no caller), and for
 * an API key listed without scopes, every scope is granted.
 */
export function holdsScope(caller: Caller | undefined, scope: Scope): boolean {
  const scopes = caller?.scopes;
  return !scopes || scopes.has(scope.name);
}

/** What authentication and authorization note on a request: its caller, and a scope it was refused. */
export interface CallerOf {
  caller?: Caller;
  /** The scope the caller lacked, which the request's log line names. */
  refusedScope?: string;
}

type Verify = (headers: IncomingHttpHeaders) => Promise<Caller>;

const sha256 = (text: string) => createHash('sha256').update(text).digest();

/** `X-Api-Key: …` or `Authorization: ApiKey …`; every configured key is compared, in constant time. */
function apiKeyVerifier(keys: readonly ApiKey[]): Verify {
  const challenge = `ApiKey realm="${REALM}"`;
  // Each key's caller, made once: a request only finds it.
  const callers = keys.map(({ name, sha256, scopes }) => ({
    sha256,
    caller: { id: name, scopes: scopes && new Set(scopes) } satisfies Caller,
  }));
  return async (headers) => {
    const authorization = headers.authorization?.match(/^ApiKey\s+(\S+)\s*$/i)?.[1];
    const presented =
      typeof headers['x-api-key'] === 'string' ? headers['x-api-key'] : authorization;
    if (!presented) throw new AuthenticationError('The request carries no API key.', challenge);
    const digest = sha256(presented);
    let caller: Caller | undefined;
    for (const key of callers)
      if (timingSafeEqual(digest, key.sha256) && !caller) caller = key.caller;
    if (!caller)
      throw new AuthenticationError(
        'The API key is not valid.',
        `${challenge}, error="invalid_key"`,
      );
    return Promise.resolve(caller);
  };
}

/** The claims the service reads or jose checks, of the types RFC 7519 and the grants' profiles say. */
interface TypedClaims {
  readonly iss?: string;
  /** The caller's identity: a subject that names no one identifies no caller. */
  readonly sub: string;
  readonly aud?: string | readonly string[];
  readonly exp?: number;
  readonly nbf?: number;
  readonly iat?: number;
  /** Space-separated scope tokens (RFC 8693, OAuth 2.0). */
  readonly scope?: string;
  /** Space-separated like `scope` (Azure AD), or an array of tokens (Okta). */
  readonly scp?: string | readonly string[];
  /** App roles, which AUTH_JWT_ROLE_SCOPES maps to scopes. */
  readonly roles?: readonly string[];
}

const isString = (value: unknown) => typeof value === 'string';
const isStrings = (value: unknown) => Array.isArray(value) && value.every(isString);
const isStringOrStrings = (value: unknown) => isString(value) || isStrings(value);

/**
 * Each claim's type, checked whenever the claim is present. jose checks that the dates are numbers and
 * that `iss` and `aud` name the service, not the rest: `sub`, the grants, an audience list's other
 * members, and that a date is finite (JSON reads `-1e400` as -Infinity).
 */
const CLAIM_TYPES: { readonly [name in keyof TypedClaims]-?: (value: unknown) => boolean } = {
  iss: isString,
  sub: (value) => isString(value) && value !== '',
  aud: isStringOrStrings,
  exp: Number.isFinite,
  nbf: Number.isFinite,
  iat: Number.isFinite,
  scope: isString,
  scp: isStringOrStrings,
  roles: isStrings,
};

/**
 * Throws unless every claim of CLAIM_TYPES the token carries is of its type: a token whose `sub` is an
 * array or an object, or whose grants are of another shape, is invalid, not read in some other way.
 */
function assertClaimTypes(payload: JWTPayload): asserts payload is JWTPayload & TypedClaims {
  for (const [name, valid] of Object.entries(CLAIM_TYPES))
    if (Object.hasOwn(payload, name) && !valid(payload[name]))
      throw new TypeError(`The "${name}" claim is not of its type`);
}

/** A grant's scope tokens: split at spaces, or as its array lists them. */
const scopeTokens = (claim: string | readonly string[] = []) =>
  typeof claim === 'string' ? claim.split(' ').filter(Boolean) : claim;

/**
 * What a token grants: the scopes of its `scope` and `scp` claims, and those AUTH_JWT_ROLE_SCOPES maps
 * its `roles` to (the app roles an identity provider gives a client-credentials token).
 */
function grantedScopes(
  claims: TypedClaims,
  roleScopes: ReadonlyMap<string, readonly string[]>,
): ReadonlySet<string> {
  const roles = (claims.roles ?? []).flatMap((role) => roleScopes.get(role) ?? []);
  return new Set([...scopeTokens(claims.scope), ...scopeTokens(claims.scp), ...roles]);
}

/**
 * `Authorization: Bearer …`, verified against the issuer's keys, issuer and audience, with bounded skew.
 * A token must say when it was issued, not in the future, and live (`exp` - `iat`) no longer than
 * AUTH_JWT_MAX_LIFETIME_SECONDS: a long-lived token is refused outright, not only once it is old.
 */
function jwtVerifier(config: Extract<AuthConfig, { mode: 'jwt' }>): Verify {
  const challenge = `Bearer realm="${REALM}"`;
  let key: Promise<CryptoKey> | JWTVerifyGetKey;
  if (config.jwksUrl) key = createRemoteJWKSet(new URL(config.jwksUrl), { timeoutDuration: 3000 });
  else key = importSPKI(config.publicKey!, config.algorithms[0]);
  return async (headers) => {
    const token = headers.authorization?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
    if (!token) throw new AuthenticationError('The request carries no bearer token.', challenge);
    try {
      const verificationKey = typeof key === 'function' ? key : await key;
      const { payload } = await jwtVerify(
        token,
        verificationKey as Parameters<typeof jwtVerify>[1],
        {
          issuer: config.issuer,
          audience: config.audience,
          algorithms: [...config.algorithms],
          clockTolerance: config.clockSkewSeconds,
          requiredClaims: ['sub', 'exp', 'iat'],
          // Also checks that `iat` is a number and not ahead of the clock.
          maxTokenAge: config.maxLifetimeSeconds,
        },
      );
      assertClaimTypes(payload);
      if (payload.exp! - payload.iat! > config.maxLifetimeSeconds) throw new RangeError('lifetime');
      return { id: payload.sub, scopes: grantedScopes(payload, config.roleScopes) };
    } catch {
      throw new AuthenticationError(
        'The bearer token is not valid.',
        `${challenge}, error="invalid_token", error_description="The token is not valid"`,
      );
    }
  };
}

/**
 * Authenticates requests in the configured mode, and authorizes them by scope. `none` trusts the
 * network (the gateway authenticates and decides); `apikey` and `jwt` identify the caller, whose id
 * the history and the request log record, and whose scopes decide what it may call.
 */
@Injectable()
export class Authenticator {
  private readonly verify?: Verify;
  /** The scheme a 403's challenge names. */
  private readonly scheme: string;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const { auth } = config;
    if (auth.mode === 'apikey') this.verify = apiKeyVerifier(auth.keys);
    if (auth.mode === 'jwt') this.verify = jwtVerifier(auth);
    this.scheme = auth.mode === 'apikey' ? 'ApiKey' : 'Bearer';
  }

  /** The caller, `undefined` without authentication; throws AuthenticationError. */
  async authenticate(headers: IncomingHttpHeaders): Promise<Caller | undefined> {
    return this.verify?.(headers);
  }

  /**
   * Throws InsufficientScopeError unless the request's caller was granted `scope` (holdsScope), and
   * notes the refused scope on the request.
   */
  authorize(request: CallerOf, scope: Scope): void {
    if (holdsScope(request.caller, scope)) return;
    request.refusedScope = scope.name;
    throw new InsufficientScopeError(scope.name, this.scheme);
  }
}
