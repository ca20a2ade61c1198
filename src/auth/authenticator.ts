import { Inject, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { type IncomingHttpHeaders } from 'node:http';
import {
  createRemoteJWKSet,
  type CryptoKey,
  importSPKI,
  type JWTVerifyGetKey,
  jwtVerify,
} from 'jose';
import { DomainError } from '../common/domain-error';
import { APP_CONFIG, type AppConfig, type ApiKey, type AuthConfig } from '../config/app-config';

/** Who made a request: an API key's name or a token's subject. */
export interface Caller {
  readonly id: string;
}

const REALM = 'property-sales';

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

type Verify = (headers: IncomingHttpHeaders) => Promise<Caller>;

const sha256 = (text: string) => createHash('sha256').update(text).digest();

/** `X-Api-Key: …` or `Authorization: ApiKey …`; every configured key is compared, in constant time. */
function apiKeyVerifier(keys: readonly ApiKey[]): Verify {
  const challenge = `ApiKey realm="${REALM}"`;
  return async (headers) => {
    const authorization = headers.authorization?.match(/^ApiKey\s+(\S+)\s*$/i)?.[1];
    const presented =
      typeof headers['x-api-key'] === 'string' ? headers['x-api-key'] : authorization;
    if (!presented) throw new AuthenticationError('The request carries no API key.', challenge);
    const digest = sha256(presented);
    let caller: Caller | undefined;
    for (const key of keys)
      if (timingSafeEqual(digest, key.sha256) && !caller) caller = { id: key.name };
    if (!caller)
      throw new AuthenticationError(
        'The API key is not valid.',
        `${challenge}, error="invalid_key"`,
      );
    return Promise.resolve(caller);
  };
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
      if (payload.exp! - payload.iat! > config.maxLifetimeSeconds) throw new RangeError('lifetime');
      return { id: payload.sub! };
    } catch {
      throw new AuthenticationError(
        'The bearer token is not valid.',
        `${challenge}, error="invalid_token", error_description="The token is not valid"`,
      );
    }
  };
}

/**
 * Authenticates requests in the configured mode. `none` trusts the network (the gateway authenticates);
 * `apikey` and `jwt` identify the caller, whose id the history and the request log record.
 */
@Injectable()
export class Authenticator {
  private readonly verify?: Verify;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const { auth } = config;
    if (auth.mode === 'apikey') this.verify = apiKeyVerifier(auth.keys);
    if (auth.mode === 'jwt') this.verify = jwtVerifier(auth);
  }

  /** The caller, `undefined` without authentication; throws AuthenticationError. */
  async authenticate(headers: IncomingHttpHeaders): Promise<Caller | undefined> {
    return this.verify?.(headers);
  }
}
