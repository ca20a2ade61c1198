import { type Server } from 'node:http';
import { type ConnectionLimits } from './config/app-config';

/** How often, at most, the server looks for connections past their header or request timeout. */
const TIMEOUT_CHECK_MS = 1000;

/**
 * Bounds what one client connection may hold: a head or a whole request that arrives too slowly is
 * answered 408 and closed, an idle keep-alive connection is closed, and past the cap new connections
 * are refused at once, so a flood of slow clients runs out of connections, not the process out of
 * file descriptors. The minimum body rate is the wire layer's (it reads the bodies).
 */
export function applyConnectionLimits(server: Server, limits: ConnectionLimits): void {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.maxConnections = limits.maxConnections;
  // Node enforces both timeouts on this interval, 30 s unless told (it reads it when listening):
  // a slow client would outlive a short timeout by that much.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval =
    Math.min(TIMEOUT_CHECK_MS, limits.headersTimeoutMs);
}
