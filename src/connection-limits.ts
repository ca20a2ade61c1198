import { type RequestHandler } from 'express';
import { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type Socket } from 'node:net';
import { DomainError } from './common/domain-error';
import { type ConnectionLimits } from './config/app-config';

/** How often, at most, the server looks for connections past their header or request timeout. */
const TIMEOUT_CHECK_MS = 1000;

/** The health probes (HealthController): never counted among the requests in progress, never refused. */
const PROBE = /^\/health\/(?:live|ready)(?:\?|$)/;

/** How soon a request refused for want of room may come again: requests in progress end quickly. */
const BUSY_RETRY_AFTER_SECONDS = 1;

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

/**
 * The connections kept out of requests' reach, out of `maxConnections`: a tenth, at least one. The
 * requests in progress leave them to the probes and to new clients.
 */
export function reservedConnections(maxConnections: number): number {
  return Math.ceil(maxConnections / 10);
}

export class ServerBusyError extends DomainError {
  static readonly status = 503;
  static readonly description =
    'As many requests are in progress on this instance as it takes (HTTP_MAX_CONNECTIONS less a tenth); retry after Retry-After seconds.';
  readonly code = 'server_busy';
  readonly title = 'Server busy';
  constructor() {
    super(
      'As many requests are in progress on this instance as it takes; retry after ' +
        `${BUSY_RETRY_AFTER_SECONDS} second.`,
      { 'Retry-After': String(BUSY_RETRY_AFTER_SECONDS), Connection: 'close' },
    );
  }
}

interface OpenConnection {
  readonly address: string;
  /** Requests read on it whose answers have not finished. */
  inFlight: number;
}

/**
 * The open connections of a server, each busy (a request in progress) or idle (waiting for its first
 * request, or kept alive between two), and the requests in progress other than the probes.
 */
class OpenConnections {
  private readonly open = new Map<Socket, OpenConnection>();
  /** Each address's idle connections, oldest idle first (a Set keeps the order of insertion). */
  private readonly idle = new Map<string, Set<Socket>>();
  private readonly perClient = new Map<string, number>();
  /** Requests in progress past `maxInProgress`: the admission middleware refuses them. */
  private readonly refused = new WeakSet<IncomingMessage>();
  private inProgress = 0;
  private readonly maxInProgress: number;

  constructor(private readonly limits: ConnectionLimits) {
    this.maxInProgress = limits.maxConnections - reservedConnections(limits.maxConnections);
  }

  /**
   * Past its address's cap a new connection is closed at once; at the cap of all, an idle connection
   * makes room for it, else it is closed at once.
   */
  connected(socket: Socket): void {
    const address = socket.remoteAddress;
    // A socket already closed has no address left to count.
    if (address === undefined) return;
    const { maxConnections, maxConnectionsPerClient } = this.limits;
    const fromClient = this.perClient.get(address) ?? 0;
    if (
      (maxConnectionsPerClient > 0 && fromClient >= maxConnectionsPerClient) ||
      (this.open.size >= maxConnections && !this.closeAnIdleOne())
    ) {
      socket.destroy();
      return;
    }
    this.open.set(socket, { address, inFlight: 0 });
    this.perClient.set(address, fromClient + 1);
    this.markIdle(socket, address);
    socket.once('close', () => this.forget(socket));
  }

  /** A request read whole: its connection is busy until the answer has finished. */
  received(request: IncomingMessage, response: ServerResponse): void {
    const { socket } = request;
    const connection = this.open.get(socket);
    if (!connection) return;
    connection.inFlight += 1;
    this.idle.get(connection.address)?.delete(socket);
    const probe = PROBE.test(request.url ?? '');
    const counted = !probe && this.inProgress < this.maxInProgress;
    if (counted) this.inProgress += 1;
    else if (!probe) this.refused.add(request);
    response.once('close', () => {
      if (counted) this.inProgress -= 1;
      connection.inFlight -= 1;
      if (connection.inFlight === 0 && this.open.get(socket) === connection)
        this.markIdle(socket, connection.address);
    });
  }

  /** Refuses (503, the connection closed after) a request past the cap of requests in progress. */
  admission(): RequestHandler {
    return (request, _response, next) =>
      next(this.refused.has(request) ? new ServerBusyError() : undefined);
  }

  private markIdle(socket: Socket, address: string): void {
    const idle = this.idle.get(address);
    if (idle) idle.add(socket);
    else this.idle.set(address, new Set([socket]));
  }

  /**
   * Closes the oldest idle connection of the address holding the most idle ones, so that one client's
   * idle connections make room before another's; false when none is idle.
   */
  private closeAnIdleOne(): boolean {
    let most: Set<Socket> | undefined;
    for (const idle of this.idle.values()) if (idle.size > (most?.size ?? 0)) most = idle;
    const [oldest] = most ?? [];
    if (oldest === undefined) return false;
    this.forget(oldest);
    oldest.destroy();
    return true;
  }

  private forget(socket: Socket): void {
    const connection = this.open.get(socket);
    if (!connection) return;
    const { address } = connection;
    this.open.delete(socket);
    const idle = this.idle.get(address);
    idle?.delete(socket);
    if (idle?.size === 0) this.idle.delete(address);
    const left = this.perClient.get(address)! - 1;
    if (left === 0) this.perClient.delete(address);
    else this.perClient.set(address, left);
  }
}

/**
 * Bounds what one client connection may hold (applyTimeouts), and how many connections there may be.
 * At `maxConnections` open, a new connection closes the oldest idle connection of the address holding
 * the most idle ones, so idle connections (the slow clients' before their first request, the
 * keep-alive ones between two) never keep a new client out; it is refused only when every connection
 * is busy. Requests in progress other than the probes are at most `maxConnections` less a tenth
 * (reservedConnections): past it they are answered 503 `server_busy`, so the probes and new clients
 * always find a connection. Past the cap per client address, that address's new connections are
 * closed at once, so one client cannot take every slot from the others. Returns the middleware that
 * refuses the requests past the cap, to mount first after the request log.
 */
export function applyConnectionLimits(server: Server, limits: ConnectionLimits): RequestHandler {
  applyTimeouts(server, limits);
  const connections = new OpenConnections(limits);
  server.on('connection', (socket: Socket) => connections.connected(socket));
  // Before the application's own listener, which starts answering before it returns.
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) =>
    connections.received(request, response),
  );
  return connections.admission();
}
