import { Injectable } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { METHODS } from 'node:http';

/** The parts of Express's router this reads: each route layer matches a path and lists its methods. */
interface RouterLayer {
  route?: { path: unknown; methods: Record<string, boolean> };
  match(path: string): boolean;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A path ending in several slashes, with one: scanned from the end, linear however many there are. */
function withOneTrailingSlash(path: string): string {
  let end = path.length;
  while (end > 0 && path.charCodeAt(end - 1) === 0x2f) end--;
  return path.length - end > 1 ? path.slice(0, end + 1) : path;
}

/** Which methods the routes matching a path accept: what tells 405 (with `Allow`) from 404. */
@Injectable()
export class RouteMethods {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  allowedFor(path: string): string[] {
    const methods = new Set<string>();
    for (const route of this.endpoints()) {
      if (!route.match(path)) continue;
      for (const [method, enabled] of Object.entries(route.route!.methods)) {
        if (enabled) methods.add(method.toUpperCase());
      }
    }
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods];
  }

  /** Every endpoint served, with its path as routed (`/api/.../:transaction_id`) and its methods. */
  routes(): { path: string; methods: string[] }[] {
    return this.endpoints().flatMap(({ route }) =>
      typeof route!.path === 'string'
        ? [
            {
              path: route!.path,
              methods: Object.entries(route!.methods)
                .filter(([, enabled]) => enabled)
                .map(([method]) => method.toUpperCase()),
            },
          ]
        : [],
    );
  }

  /**
   * Where the legacy route template `api/{controller}/{action}/{id}` routed a path under `prefix`: a
   * run of slashes after its last segment made no difference (Web API's route matching skipped
   * trailing separators), and an endpoint taking no parameter also matched with one more segment,
   * its ignored id (perhaps empty). Returns the path to route instead.
   */
  legacyRouting(prefix: string): (path: string) => string {
    const under = prefix ? `/${prefix}/`.toLowerCase() : '/';
    const paths = this.endpoints()
      .map((layer) => layer.route!.path)
      .filter(
        (path): path is string =>
          typeof path === 'string' && !/[:*{]/.test(path) && path.toLowerCase().startsWith(under),
      );
    const alternatives = paths.map(escapeRegExp).join('|') || '(?!)';
    const withTrailingId = new RegExp(`^(${alternatives})/[^/]*/?$`, 'i');
    return (path) => {
      if (!path.toLowerCase().startsWith(under)) return path;
      // One trailing slash is what Express's routes match without strict routing.
      const trimmed = withOneTrailingSlash(path);
      return withTrailingId.exec(trimmed)?.[1] ?? trimmed;
    };
  }

  private endpoints(): RouterLayer[] {
    const app = this.adapterHost.httpAdapter.getInstance<{ router: { stack: RouterLayer[] } }>();
    return app.router.stack.filter((layer) => {
      if (!layer.route) return false;
      const taken = Object.keys(layer.route.methods);
      // Nest mounts middleware on exact paths as routes taking every method: those are not endpoints.
      return !taken.includes('_all') && taken.length < METHODS.length;
    });
  }
}
