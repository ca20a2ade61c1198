import { Injectable } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { METHODS } from 'node:http';

/** The parts of Express's router this reads: each route layer matches a path and lists its methods. */
interface RouterLayer {
  route?: { methods: Record<string, boolean> };
  match(path: string): boolean;
}

/** Which methods the routes matching a path accept: what tells 405 (with `Allow`) from 404. */
@Injectable()
export class RouteMethods {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  allowedFor(path: string): string[] {
    const app = this.adapterHost.httpAdapter.getInstance<{ router: { stack: RouterLayer[] } }>();
    const methods = new Set<string>();
    for (const layer of app.router.stack) {
      if (!layer.route || !layer.match(path)) continue;
      const taken = Object.keys(layer.route.methods);
      // Nest mounts middleware on exact paths as routes taking every method: those are not endpoints.
      if (taken.includes('_all') || taken.length >= METHODS.length) continue;
      for (const [method, enabled] of Object.entries(layer.route.methods)) {
        if (enabled && method !== '_all') methods.add(method.toUpperCase());
      }
    }
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods];
  }
}
