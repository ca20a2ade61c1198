import { type Request, type Response } from 'express';
import { createHash } from 'node:crypto';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

type Coding = 'br' | 'gzip' | 'identity';

/**
 * A JSON document the service builds once at start (the OpenAPI document is about 300 KB): compressed
 * once, in each coding a client may ask for, and tagged, so that a generator or Swagger UI fetching it
 * again gets a 304. The tag is weak: the same document in any coding.
 */
export function servedJson(text: string): (request: Request, response: Response) => void {
  const identity = Buffer.from(text);
  const bodies: Record<Coding, Buffer> = {
    br: brotliCompressSync(identity, { params: { [constants.BROTLI_PARAM_QUALITY]: 9 } }),
    gzip: gzipSync(identity, { level: 9 }),
    identity,
  };
  const etag = `W/"${createHash('sha256').update(identity).digest('base64url')}"`;
  return (request, response) => {
    const coding = (request.acceptsEncodings('br', 'gzip', 'identity') || 'identity') as Coding;
    response.setHeader('Vary', 'Accept-Encoding');
    response.setHeader('ETag', etag);
    // Revalidated on every use, so a new release's document is never read stale.
    response.setHeader('Cache-Control', 'no-cache');
    if (request.fresh) {
      response.status(304).end();
      return;
    }
    response.setHeader('Content-Type', 'application/json; charset=utf-8');
    if (coding !== 'identity') response.setHeader('Content-Encoding', coding);
    response.setHeader('Content-Length', bodies[coding].length);
    response.end(request.method === 'HEAD' ? undefined : bodies[coding]);
  };
}
