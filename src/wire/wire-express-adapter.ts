import { ExpressAdapter } from '@nestjs/platform-express';
import { type Response } from 'express';

/**
 * Nest's Express adapter, except that a Buffer a route answers with is sent as it is, in one write,
 * with its length and Express's 304 for a fresh conditional request. (Nest would serialize it as JSON,
 * and a StreamableFile costs a stream and a pipe per response.) The wire layer answers with the cached
 * bytes of a versioned body this way.
 */
export class WireExpressAdapter extends ExpressAdapter {
  override reply(response: Response, body: unknown, statusCode?: number): unknown {
    if (!Buffer.isBuffer(body)) return super.reply(response, body, statusCode);
    if (statusCode) response.status(statusCode);
    return response.send(body);
  }
}
