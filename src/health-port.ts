import { type INestApplication } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { type Express, type RequestHandler } from 'express';
import { createServer, type Server } from 'node:http';
import { DomainError } from './common/domain-error';
import { type ConnectionLimits } from './config/app-config';
import { applyTimeouts } from './connection-limits';

/** The probes' paths (HealthController), outside the API prefix. */
const HEALTH_PATH = /^\/health\//;

export class NotAHealthProbeError extends DomainError {
  static readonly status = 404;
  static readonly description =
    'The health port serves the health probes (and, with METRICS=health-port, the metrics) only.';
  readonly code = 'not_a_health_probe';
  readonly title = 'Not found';
  constructor() {
    super('This port serves only /health/live and /health/ready.');
  }
}

/**
 * On a request that came in on the health port, refuses every path but the probes and `alsoServed`
 * (404 in the service's error format); requests on the main port pass.
 */
export function onlyHealthOn(healthPort: number, alsoServed: readonly string[]): RequestHandler {
  return (request, _response, next) => {
    if (
      request.socket.localPort === healthPort &&
      !HEALTH_PATH.test(request.path) &&
      !alsoServed.includes(request.path)
    ) {
      next(new NotAHealthProbeError());
    } else {
      next();
    }
  };
}

/**
 * `handler` for requests on the health port alone: on the main port the request goes on to what
 * answers an unknown path, so the API's clients do not learn it is served elsewhere.
 */
export function onHealthPortOnly(healthPort: number, handler: RequestHandler): RequestHandler {
  return (request, response, next) => {
    if (request.socket.localPort === healthPort) handler(request, response, next);
    else next();
  };
}

/**
 * Serves the application on the health port too, with the main port's timeouts but outside its
 * connection caps, so the orchestrator's probes are answered while clients saturate the main port.
 * The same application: the same probes, request logs and error format (onlyHealthOn refuses the
 * rest). Resolves once listening; rejects when the port cannot be bound.
 */
export function listenForHealth(
  app: INestApplication,
  limits: ConnectionLimits,
  healthPort: number,
): Promise<Server> {
  const server = createServer(app.get(HttpAdapterHost).httpAdapter.getInstance<Express>());
  applyTimeouts(server, limits);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(healthPort, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}
