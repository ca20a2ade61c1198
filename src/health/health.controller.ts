import { Controller, Get, Optional, ServiceUnavailableException } from '@nestjs/common';
import { ApiOperation, ApiResponse } from '@nestjs/swagger';
import { PublicRoute } from '../auth/auth.guard';
import { WireTag } from '../wire';
import { SkipRateLimit } from '../auth/rate-limit.guard';
import { RateLimitStore } from '../auth/rate-limit.store';
import {
  HealthCheckService,
  type HealthCheckResult,
  HealthIndicatorService,
} from '@nestjs/terminus';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DomainError } from '../common/domain-error';
import { DATABASE_RETRY_AFTER_SECONDS } from '../database/database-errors';
import { SchemaCheck } from '../database/schema-check';
import { UnitOfWork } from '../database/unit-of-work';
import { Readiness } from './readiness';
import { withinTrace } from '../tracing/background';

/** How long the readiness probe waits for the database before calling it unreachable. */
const PING_TIMEOUT_MS = 1500;

/** The work's value, or `undefined` once `ms` have passed without one. */
async function within<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export class ServiceNotReadyError extends DomainError {
  static readonly status = 503;
  static readonly description = 'Not ready; retry after Retry-After seconds.';
  readonly code = 'not_ready';
  readonly title = 'Not ready';
  /** @param details What each failing check said, for the log line of the probe. */
  constructor(reason: string, details?: unknown) {
    super(
      `${reason}; the service is not ready.`,
      { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) },
      { cause: details },
    );
  }
}

/** What a failed readiness says, and the failing checks' details, which stay in the logs. */
function notReady(failure: ServiceUnavailableException): ServiceNotReadyError {
  const { error = {} } = failure.getResponse() as Pick<HealthCheckResult, 'error'>;
  const reason =
    error.database || !error.schema
      ? 'The database does not answer'
      : 'The database schema is not the one this release expects';
  return new ServiceNotReadyError(reason, error);
}

/** Probes for the gateway and the orchestrator, outside the API prefix and always open. */
@WireTag(
  'Health',
  'Probes for the gateway and the orchestrator: never authenticated, never rate limited.',
)
@PublicRoute()
@SkipRateLimit()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly readiness: Readiness,
    private readonly indicators: HealthIndicatorService,
    private readonly schema: SchemaCheck,
    private readonly unitOfWork: UnitOfWork,
    @Optional() private readonly rateLimits?: RateLimitStore,
  ) {}

  @Get('live')
  @ApiOperation({
    operationId: 'Live',
    summary: 'The process answers.',
    description:
      'Touches nothing else, so a database outage never gets a healthy instance restarted: the ' +
      "orchestrator's liveness probe.",
  })
  @ApiResponse({ status: 200, description: 'Alive.' })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({
    operationId: 'Ready',
    summary:
      'The database answers a ping in time and its schema is the one this release expects; the details say where rate limits are counted.',
    description:
      "The gateway's and the orchestrator's readiness probe: 503 while the database is away, " +
      'while its schema is not the one this release expects, and once shutdown has begun.',
  })
  @ApiResponse({ status: 200, description: 'Ready to serve.' })
  @ApiResponse({
    status: ServiceNotReadyError.status,
    description: ServiceNotReadyError.description,
  })
  async ready(): Promise<HealthCheckResult> {
    this.readiness.assertServing();
    try {
      return await this.health.check([
        () => this.databasePing(),
        () => this.schemaCheck(),
        ...(this.rateLimits ? [() => this.rateLimitStore(this.rateLimits!)] : []),
      ]);
    } catch (error) {
      if (error instanceof ServiceUnavailableException) throw notReady(error);
      throw error;
    }
  }

  /**
   * A failed ping keeps the driver's code and message, for the probe's log line (never its body).
   * With several nodes in DATABASE_URL, the details say which one is in use and which are out; with
   * read replicas, where reads go and each replica's state and lag. Only the primary is pinged: a
   * replica left out never makes the service unready.
   */
  private async databasePing() {
    const indicator = this.indicators.check('database');
    const nodes = () => {
      const status = this.unitOfWork.nodes();
      const replicas = this.unitOfWork.replicas();
      return { ...(status && { nodes: status }), ...replicas };
    };
    try {
      const answered = await within(
        withinTrace(() => this.dataSource.query<unknown[]>('SELECT 1')),
        PING_TIMEOUT_MS,
      );
      return answered
        ? indicator.up(nodes())
        : indicator.down({ message: `No answer within ${PING_TIMEOUT_MS} ms`, ...nodes() });
    } catch (error) {
      const { code, message } = error as { code?: unknown; message?: unknown };
      return indicator.down({ code, message, ...nodes() });
    }
  }

  private async schemaCheck() {
    const indicator = this.indicators.check('schema');
    try {
      // Undefined when the database did not answer in time; the ping reports that.
      const matches = await within(this.schema.matches(), PING_TIMEOUT_MS);
      return matches ? indicator.up() : indicator.down();
    } catch {
      return indicator.down();
    }
  }

  /** Counting in memory while Redis is away still serves: reported, never a reason to be unready. */
  private rateLimitStore(store: RateLimitStore) {
    return this.indicators.check('rateLimit').up({ ...store.status() });
  }
}
