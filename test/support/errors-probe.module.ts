import {
  type CanActivate,
  ConflictException,
  Controller,
  ForbiddenException,
  Get,
  HttpException,
  InternalServerErrorException,
  Module,
  NotFoundException,
  Param,
  ParseIntPipe,
  Post,
  Res,
  ServiceUnavailableException,
  UseGuards,
} from '@nestjs/common';
import { type Response } from 'express';
import { declareScope, RequiresScope } from '../../src/auth/scopes';
import { DomainError } from '../../src/common/domain-error';
import { WireCreated, WireErrors } from '../../src/wire';

/** Text no answer may carry: what a careless server error would leak. */
export const INTERNAL_DETAIL = 'SELECT secret FROM probe_credentials';

/** A NestJS exception of the module's own, listed in @WireErrors as a domain error is. */
export class ProbeClosedException extends ConflictException {
  static readonly description = 'The probe is closed for the day.';
  constructor() {
    super('The probe closed at five.');
  }
}

/** Where the created probe record is, as the Created route's Location says. */
export const CREATED_LOCATION = '/api/ErrorsProbe/Record/7';

/** A module's own 403, declared without touching the wire layer. */
export class ProbeRefusedError extends DomainError {
  static readonly status = 403;
  static readonly description = 'The probe refuses this caller.';
  static readonly example = new ProbeRefusedError();
  readonly code = 'probe_refused';
  readonly title = 'Probe refused';
  constructor() {
    super('The probe does not serve you.');
  }
}

/** A module's own 422. */
export class ProbeUnprocessableError extends DomainError {
  static readonly status = 422;
  static readonly description = 'The probe cannot process this request.';
  static readonly example = new ProbeUnprocessableError('the probe is empty');
  readonly code = 'probe_unprocessable';
  readonly title = 'Probe unprocessable';
  constructor(reason: string) {
    super(`The probe cannot process this: ${reason}.`);
  }
}

/** A module's own 404, whose description must not read as any other module's. */
export class DeveloperNotFoundError extends DomainError {
  static readonly status = 404;
  static readonly description = 'No such developer.';
  static readonly example = new DeveloperNotFoundError(7);
  readonly code = 'developer_not_found';
  readonly title = 'Developer not found';
  constructor(developerId: number) {
    super(`No developer with developer_id ${developerId} exists.`);
  }
}

class RefusingGuard implements CanActivate {
  canActivate(): boolean {
    return false;
  }
}

const PROBES_USE = declareScope('probes:use', 'Call the error probes.');

/**
 * Errors as a team writes them from the NestJS documentation, and as domain errors: each route
 * throws one, and every answer must keep its status and message.
 */
@RequiresScope(PROBES_USE)
@Controller('ErrorsProbe')
class ErrorsProbeController {
  @Post('Developer')
  createDeveloper(): never {
    throw new NotFoundException('No such developer.');
  }

  @Get('Conflict')
  conflict(): never {
    throw new ConflictException('probe');
  }

  @Get('Forbidden')
  forbidden(): never {
    throw new ForbiddenException();
  }

  @Get('Unprocessable')
  unprocessable(): never {
    // The shape ValidationPipe throws: a list of violations.
    throw new HttpException(
      {
        message: ['n must not be greater than 10', 'page must be an integer number'],
        error: 'Unprocessable Entity',
        statusCode: 422,
      },
      422,
    );
  }

  @Get('Guarded')
  @UseGuards(RefusingGuard)
  guarded(): string {
    return 'unreachable';
  }

  @Get('GetDeveloper/:developer_id')
  @WireErrors(400, DeveloperNotFoundError, 500)
  developer(@Param('developer_id', ParseIntPipe) developerId: number): never {
    throw new DeveloperNotFoundError(developerId);
  }

  @Get('Refused')
  @WireErrors(ProbeRefusedError, ProbeUnprocessableError, 500)
  refused(): never {
    throw new ProbeRefusedError();
  }

  @Get('DomainUnprocessable')
  domainUnprocessable(): never {
    throw new ProbeUnprocessableError('the moon is full');
  }

  @Get('Closed')
  @WireErrors(ProbeClosedException, 500)
  closed(): never {
    throw new ProbeClosedException();
  }

  @Post('Record')
  @WireCreated({ description: 'The record was created; Location says where it is.' })
  record(@Res({ passthrough: true }) response: Response): void {
    response.location(CREATED_LOCATION);
  }

  @Get('Crash')
  crash(): never {
    throw new Error(INTERNAL_DETAIL);
  }

  @Get('ServerError')
  serverError(): never {
    throw new InternalServerErrorException(INTERNAL_DETAIL);
  }

  @Get('Unavailable')
  unavailable(): never {
    throw new ServiceUnavailableException(INTERNAL_DETAIL);
  }
}

/** Mounted beside the service's modules by the module-errors suite only. */
@Module({ controllers: [ErrorsProbeController] })
export class ErrorsProbeModule {}
