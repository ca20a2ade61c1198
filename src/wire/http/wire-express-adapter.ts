import { ExpressAdapter } from '@nestjs/platform-express';
import { type Response } from 'express';

/** Whether an If-None-Match header names the ETag: `*`, or any tag of its list, compared weakly. */
function namesEtag(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => opaque(tag) === opaque(etag));
}

/**
 * A successful GET or HEAD whose ETag the client already holds: answered 304 without a body. Unlike
 * Express's `fresh`, this ignores `Cache-Control: no-cache` and `Pragma: no-cache` on the request:
 * they tell caches to revalidate, and revalidating is what the client asks the origin to do here
 * (Node's fetch adds both to every conditional request).
 */
function isNotModified(response: Response, statusCode: number): boolean {
  const { method, headers } = response.req;
  const etag = response.getHeader('ETag');
  return (
    (method === 'GET' || method === 'HEAD') &&
    statusCode >= 200 &&
    statusCode < 300 &&
    typeof etag === 'string' &&
    typeof headers['if-none-match'] === 'string' &&
    namesEtag(headers['if-none-match'], etag)
  );
}

/**
 * Nest's Express adapter, except that a conditional request whose ETag still matches is answered 304,
 * and a Buffer a route answers with is sent as it is, in one write, with its length. (Nest would
 * serialize it as JSON, and a StreamableFile costs a stream and a pipe per response.) The wire layer
 * answers with the cached bytes of a versioned body this way.
 *
 * Its not-found handler is mounted at the root, as NestJS 11 mounted it: a path no route takes, inside
 * the API prefix or outside it (`/swagger` when it is off, any other path), is answered 404 or 405 in
 * the client's format by the exception filter. NestJS 12 mounts it under the global prefix alone, and
 * leaves the rest to Express's HTML page.
 */
export class WireExpressAdapter extends ExpressAdapter {
  override setNotFoundHandler(
    handler: Parameters<ExpressAdapter['setNotFoundHandler']>[0],
  ): unknown {
    return super.setNotFoundHandler(handler, '');
  }

  override reply(response: Response, body: unknown, statusCode?: number): unknown {
    if (isNotModified(response, statusCode ?? response.statusCode)) {
      response.removeHeader('Content-Type');
      return response.status(304).end();
    }
    if (!Buffer.isBuffer(body)) return super.reply(response, body, statusCode);
    if (statusCode) response.status(statusCode);
    return response.send(body);
  }
}
