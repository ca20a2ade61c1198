import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import { PublicRoute } from '../auth/auth.guard';
import {
  HealthCheckService,
  type HealthCheckResult,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import { DomainError } from '../common/domain-error';
import { DATABASE_RETRY_AFTER_SECONDS } from '../database/database-errors';

/** How long the readiness probe waits for the database before calling it unreachable. */
const PING_TIMEOUT_MS = 1500;

export class ServiceNotReadyError extends DomainError {
  static readonly status = 503;
  static readonly description = 'Not ready; retry after Retry-After seconds.';
  readonly code = 'not_ready';
  readonly title = 'Not ready';
  constructor() {
    super('The database does not answer; the service is not ready.', {
      'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS),
    });
  }
}

/** Probes for the gateway and the orchestrator, outside the API prefix and always open. */
@ApiTags('Health')
@PublicRoute()
@SkipThrottle()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
  ) {}

  @Get('live')
  @ApiOperation({ operationId: 'Live', summary: 'The process answers.' })
  @ApiResponse({ status: 200, description: 'Alive.' })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({ operationId: 'Ready', summary: 'The database answers a ping in time.' })
  @ApiResponse({ status: 200, description: 'Ready to serve.' })
  @ApiResponse({
    status: ServiceNotReadyError.status,
    description: ServiceNotReadyError.description,
  })
  async ready(): Promise<HealthCheckResult> {
    try {
      return await this.health.check([
        () => this.database.pingCheck('database', { timeout: PING_TIMEOUT_MS }),
      ]);
    } catch (error) {
      if (error instanceof ServiceUnavailableException) throw new ServiceNotReadyError();
      throw error;
    }
  }
}
