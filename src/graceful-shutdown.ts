import { type INestApplication } from '@nestjs/common';
import { type Server, type ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { type Logger } from 'pino';
import { DataSource } from 'typeorm';
import { Readiness } from './health/readiness';
import { type Tracing } from './tracing/sdk';

export interface ShutdownTimes {
  /** Readiness answers 503 this long, requests still served, before the listener closes. */
  readonly drainMs: number;
  /** After the drain, how long requests in flight may take; then the process exits 1 regardless. */
  readonly timeoutMs: number;
}

/**
 * How long a kept-alive connection must have been idle, once the listener has closed, before the
 * server closes it: a client sending back to back has its next request on the way by then, and has it
 * answered (closing the connection) rather than cut.
 */
const QUIET_MS = 500;

interface Connection {
  /** Responses under way on it. */
  inFlight: number;
  /** When its last response ended; `undefined` while it has not carried one. */
  idleSince?: number;
}

/**
 * On SIGTERM or SIGINT: readiness turns 503 at once while requests are still served, for the drain
 * delay, which gives the gateway time to stop sending here. Then the listener closes, each response
 * closes its connection (`Connection: close`), and once every connection has closed the application
 * and its pool close, then the health listener, if any (its probes answer until then); with tracing
 * on, the last spans are sent (for a second at most); the process exits 0.
 *
 * No request the server has received is cut: a connection ends after its response; one kept alive
 * and quiet is closed as its keep-alive timeout would close it; a new one that has not sent its first
 * request yet is left to send it (or to the header timeout).
 */
export function installGracefulShutdown(
  app: INestApplication,
  logger: Logger,
  times: ShutdownTimes,
  health?: Server,
  tracing?: Tracing,
): void {
  const server = app.getHttpServer() as Server;
  const readiness = app.get(Readiness);
  const connections = new Map<Socket, Connection>();
  const responses = new Set<ServerResponse>();
  let closing = false;
  /** Requests received from the signal on: what the drain served. */
  let drained = 0;
  const closeAfter = (response: ServerResponse) => {
    if (!response.headersSent) response.setHeader('Connection', 'close');
  };
  const endWhenQuiet = (socket: Socket, connection: Connection) => {
    if (connection.inFlight > 0 || connection.idleSince === undefined) return;
    const quietFor = Date.now() - connection.idleSince;
    if (quietFor >= QUIET_MS) socket.end();
    else setTimeout(() => endWhenQuiet(socket, connection), QUIET_MS - quietFor).unref();
  };
  server.on('connection', (socket: Socket) => {
    connections.set(socket, { inFlight: 0 });
    socket.once('close', () => connections.delete(socket));
  });
  server.on('request', (request, response: ServerResponse) => {
    const connection = connections.get(request.socket);
    if (connection) connection.inFlight += 1;
    if (readiness.shuttingDown) drained += 1;
    if (closing) closeAfter(response);
    responses.add(response);
    response.once('close', () => {
      responses.delete(response);
      if (!connection) return;
      connection.inFlight -= 1;
      connection.idleSince = Date.now();
      // A response under way when the listener closed may have said keep-alive: its connection ends here.
      if (closing && connection.inFlight === 0) request.socket.end();
    });
  });
  const shutDown = async (signal: NodeJS.Signals) => {
    const signalled = Date.now();
    readiness.beginShutdown();
    logger.info(
      { signal, drainMs: times.drainMs },
      `${signal}: readiness answers 503 for ${times.drainMs} ms while requests are served, then the listener closes`,
    );
    await delay(times.drainMs);
    closing = true;
    const inFlight = responses.size;
    const open = connections.size;
    setTimeout(() => {
      logger.error(
        {
          signal,
          timeoutMs: times.timeoutMs,
          inFlight: responses.size,
          connections: connections.size,
        },
        `Shutdown timed out: ${responses.size} request(s) still in flight ${times.timeoutMs} ms after the listener closed; exiting with code 1`,
      );
      process.exit(1);
    }, times.timeoutMs).unref();
    // Resolves once every connection has closed: the pool is still there for the last requests.
    await new Promise<void>((resolve) => {
      // The plain listener's close: the HTTP server's own also cuts every connection it sees idle at
      // once, among them those whose next request is on its way, and stops the header timeout.
      NetServer.prototype.close.call(server, () => resolve());
      responses.forEach(closeAfter);
      connections.forEach((connection, socket) => endWhenQuiet(socket, connection));
    });
    const dataSource = app.get(DataSource);
    await app.close();
    // NestJS logs a shutdown hook's failure and goes on: a pool that did not close fails the stop.
    if (dataSource.isInitialized) throw new Error('The database pool did not close.');
    // Then the health listener: its probes were answered (readiness 503) until the pool closed.
    health?.close();
    health?.closeAllConnections();
    // The spans of the last requests, which ended as their responses did.
    await tracing?.shutdown();
    logger.info(
      {
        signal,
        requests: drained,
        inFlight,
        connections: open,
        durationMs: Date.now() - signalled,
      },
      `Stopped after ${signal}: ${drained} request(s) received while draining, ${inFlight} in flight ` +
        `and ${open} connection(s) open when the listener closed, all finished; the database pool is closed`,
    );
  };
  const stop = (signal: NodeJS.Signals) => {
    if (readiness.shuttingDown) return;
    shutDown(signal).then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error(
          { signal, err: error },
          `Shutdown failed after ${signal}; exiting with code 1`,
        );
        process.exit(1);
      },
    );
  };
  // Repeated signals change nothing: Ctrl-C under `npm start` reaches the service twice, from the
  // terminal and forwarded by npm, and a second one must not cut the requests the first one drains.
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
