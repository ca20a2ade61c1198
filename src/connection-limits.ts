import { type Server } from 'node:http';
import { type Socket } from 'node:net';
import { type ConnectionLimits } from './config/app-config';

/** How often, at most, the server looks for connections past their header or request timeout. */
const TIMEOUT_CHECK_MS = 1000;

/**
 * A head or a whole request that arrives too slowly is answered 408 and closed, and an idle
 * keep-alive connection is closed. The minimum body rate is the wire layer's (it reads the bodies).
 */
export function applyTimeouts(server: Server, limits: ConnectionLimits): void {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  // Node enforces both timeouts on this interval, 30 s unless told (it reads it when listening):
  // a slow client would outlive a short timeout by that much.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval =
    Math.min(TIMEOUT_CHECK_MS, limits.headersTimeoutMs);
}

/** Past `cap` open connections from one remote address, a new one from it is closed at once. */
function capPerClient(server: Server, cap: number): void {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    // A socket already closed has no address left to count.
    if (address === undefined) return;
    const count = (open.get(address) ?? 0) + 1;
    if (count > cap) {
      socket.destroy();
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
  });
}

/**
 * Bounds what one client connection may hold (applyTimeouts), and how many connections there may
 * be: past the cap new connections are refused at once, so a flood of slow clients runs out of
 * connections, not the process out of file descriptors; past the cap per client address, that
 * address's new connections are closed at once, so one client cannot take every slot from the others.
 */
export function applyConnectionLimits(server: Server, limits: ConnectionLimits): void {
  applyTimeouts(server, limits);
  server.maxConnections = limits.maxConnections;
  if (limits.maxConnectionsPerClient > 0) capPerClient(server, limits.maxConnectionsPerClient);
}
