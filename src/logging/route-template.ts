import { type IncomingMessage } from 'node:http';

/**
 * The route template Express matched for a request (`/api/Transaction/GetTransaction/:transaction_id`),
 * once its handler has run; `undefined` when no route answered it. Whatever case and legacy form the
 * path was sent in, the template is the route's own.
 */
export function routeTemplate(request: IncomingMessage): string | undefined {
  const route = (request as { route?: { path?: unknown } }).route;
  return typeof route?.path === 'string' ? route.path : undefined;
}
