import { type CryptoKey, exportJWK, exportSPKI, generateKeyPair, type JWK, SignJWT } from 'jose';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';

/**
 * Credentials as the gateway's callers present them: API keys and the AUTH_API_KEYS entry that names
 * them, RS256 and ES256 tokens from a test issuer, and a JWKS endpoint that publishes the issuer's key.
 */

/**
 * `name=sha256:<hex>`, or `name=sha256:<hex>:scope+scope` with scopes: an AUTH_API_KEYS entry, which
 * holds the key's hash and never the key.
 */
export const apiKeyEntry = (name: string, key: string, scopes?: readonly string[]) =>
  `${name}=sha256:${createHash('sha256').update(key).digest('hex')}${scopes ? `:${scopes.join('+')}` : ''}`;

/** AUTH_API_KEYS for several keys, comma-separated. */
export const apiKeysVariable = (keys: Record<string, string>) =>
  Object.entries(keys)
    .map(([name, key]) => apiKeyEntry(name, key))
    .join(',');

export const base64url = (value: string | object) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** Seconds since the epoch, as JWT claims count time. */
export const nowSeconds = () => Math.floor(Date.now() / 1000);

export interface Claims {
  iss?: string;
  aud?: string | string[];
  sub?: string;
  exp?: number;
  nbf?: number;
  iat?: number;
  [claim: string]: unknown;
}

/** The signing algorithms a test issuer uses: RSA (most identity providers) and P-256 ECDSA. */
export type IssuerAlgorithm = 'RS256' | 'ES256';

/** A signing key (RS256 unless told) with its key id: what an identity provider holds. */
export class TokenIssuer {
  private constructor(
    readonly kid: string,
    readonly privateKey: CryptoKey,
    readonly publicKey: CryptoKey,
    readonly alg: IssuerAlgorithm,
  ) {}

  static async create(kid: string, alg: IssuerAlgorithm = 'RS256'): Promise<TokenIssuer> {
    const { publicKey, privateKey } = await generateKeyPair(alg);
    return new TokenIssuer(kid, privateKey, publicKey, alg);
  }

  /** The public key as a JWKS lists it. */
  async jwk(): Promise<JWK> {
    return { ...(await exportJWK(this.publicKey)), kid: this.kid, alg: this.alg, use: 'sig' };
  }

  /** The public key as a PEM (`-----BEGIN PUBLIC KEY-----`), as AUTH_JWT_PUBLIC_KEY takes it. */
  spki(): Promise<string> {
    return exportSPKI(this.publicKey);
  }

  /** A token with exactly these claims, signed with this key's algorithm; `kid` defaults to its own. */
  sign(claims: Claims, header: { kid?: string } = {}): Promise<string> {
    return new SignJWT(claims)
      .setProtectedHeader({ alg: this.alg, typ: 'JWT', kid: header.kid ?? this.kid })
      .sign(this.privateKey);
  }
}

/** A token signed HS256 with the given secret: what an algorithm-confusion attack sends. */
export function signHs256(claims: Claims, secret: string): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .sign(new TextEncoder().encode(secret));
}

/** An unsecured token (`alg: none`), its signature empty. */
export const unsecuredToken = (claims: Claims) =>
  `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(claims)}.`;

/** A JWKS endpoint on a loopback port; counts the fetches it answers. */
export class JwksServer {
  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly counter: { fetches: number },
  ) {}

  /** How many requests the endpoint has answered. */
  get fetches(): number {
    return this.counter.fetches;
  }

  static async start(keys: readonly JWK[]): Promise<JwksServer> {
    const counter = { fetches: 0 };
    const server = createServer((request, response) => {
      counter.fetches += 1;
      if (request.url !== '/.well-known/jwks.json') {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify({ keys }));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const { port } = server.address() as AddressInfo;
    return new JwksServer(server, `http://127.0.0.1:${port}/.well-known/jwks.json`, counter);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
  }
}
