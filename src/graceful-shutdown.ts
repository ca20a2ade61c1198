import { type INestApplication } from '@nestjs/common';
import { type Server } from 'node:http';

/**
 * On SIGTERM or SIGINT: stop accepting connections, let requests in flight finish (closing each
 * keep-alive connection as its response ends, so a gateway cannot hold the process open), close the
 * application and its pool, and exit 0. Past `timeoutMs` the process exits 1 regardless.
 */
export function installGracefulShutdown(app: INestApplication, timeoutMs: number): void {
  const server = app.getHttpServer() as Server;
  let closing = false;
  server.on('request', (_request, response) => {
    if (closing) response.setHeader('Connection', 'close');
    response.on('finish', () => {
      if (closing) server.closeIdleConnections();
    });
  });
  const stop = () => {
    if (closing) return;
    closing = true;
    setTimeout(() => process.exit(1), timeoutMs).unref();
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
