import {
  type ArgumentsHost,
  Catch,
  type ExceptionFilter,
  HttpException,
  NotFoundException,
} from '@nestjs/common';
import { type Request, type Response } from 'express';
import { STATUS_CODES } from 'node:http';
import { DomainError, type DomainErrorKind } from '../../common/domain-error';
import { recordFailure } from '../../logging/logging.module';
import { requestMediaType } from './wire-body';
import { type WireErrorBody } from '../codecs/wire-codec';
import { RequestValidationError, WireRequestError } from '../model/wire-errors';
import { NEGOTIATED_BY, WireFormats } from './wire-negotiation';
import { RouteMethods } from './route-methods';

const STATUS_OF_KIND: Record<DomainErrorKind, number> = {
  unauthenticated: 401,
  not_found: 404,
  conflict: 409,
  precondition_failed: 412,
  rate_limited: 429,
  unavailable: 503,
};

/** Seconds a client should wait before retrying when the database is away. */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** The headers a domain error implies: the challenge of a 401, the Retry-After of a 429 or 503. */
function headersOf(error: DomainError): Record<string, string> {
  const headers: Record<string, string> = {};
  if (error.challenge) headers['WWW-Authenticate'] = error.challenge;
  if (error.kind === 'rate_limited' || error.kind === 'unavailable') {
    headers['Retry-After'] = String(error.retryAfterSeconds ?? UNAVAILABLE_RETRY_AFTER_SECONDS);
  }
  return headers;
}

const STATUS_OF_WIRE_ERROR: Record<WireRequestError['code'], { status: number; title: string }> = {
  invalid_request: { status: 400, title: 'Invalid request' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  payload_too_large: { status: 413, title: 'Request body too large' },
};

const INTERNAL_ERROR: WireErrorBody = {
  status: 500,
  code: 'internal_error',
  title: 'Internal error',
  message: 'An error has occurred.',
};

interface DescribedError {
  readonly body: WireErrorBody;
  readonly headers?: Record<string, string>;
}

/** A client-supplied URL in a message: unescaped, as the legacy quoted it, and kept short. */
function quoteUrl(url: string): string {
  let readable = url;
  try {
    readable = decodeURIComponent(url);
  } catch {
    // Not valid percent-encoding: quoted as it came.
  }
  return readable.length > 200 ? `${readable.slice(0, 200)}…` : readable;
}

/**
 * Every error leaves through here, in the negotiated format (an XML request gets an XML error; JSON
 * carries the legacy members and RFC 9457's). Nothing internal (stack, SQL, driver text) reaches a
 * client.
 */
@Catch()
export class WireExceptionFilter implements ExceptionFilter {
  constructor(
    private readonly formats: WireFormats,
    private readonly routes: RouteMethods,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<Request>();
    const response = host.switchToHttp().getResponse<Response>();
    const { body, headers } = this.describe(exception, request);
    if (body.status >= 500) recordFailure(response, exception);
    if (response.headersSent) {
      response.destroy();
      return;
    }
    const format = this.formats.forError(request.headers.accept, requestMediaType(request));
    response.status(body.status);
    for (const [name, value] of Object.entries(headers ?? {})) response.setHeader(name, value);
    response.setHeader('Content-Type', `${format.mediaType}; charset=utf-8`);
    response.setHeader('Vary', NEGOTIATED_BY);
    const requestId = (request as { id?: unknown }).id;
    response.send(
      format.writer.encodeError(typeof requestId === 'string' ? { ...body, requestId } : body),
    );
  }

  private describe(exception: unknown, request: Request): DescribedError {
    if (exception instanceof WireRequestError) {
      const { status, title } = STATUS_OF_WIRE_ERROR[exception.code];
      const modelState =
        exception instanceof RequestValidationError ? exception.modelState : undefined;
      return {
        body: { status, code: exception.code, title, message: exception.message, modelState },
      };
    }
    if (exception instanceof DomainError) {
      const status = STATUS_OF_KIND[exception.kind];
      return {
        body: { status, code: exception.code, title: exception.title, message: exception.message },
        headers: headersOf(exception),
      };
    }
    if (exception instanceof NotFoundException) return this.describeUnmatched(request);
    if (exception instanceof HttpException && exception.getStatus() < 500) {
      // Raised by the framework itself (a path that cannot be decoded, say): described by its status alone.
      const status = exception.getStatus();
      const title = STATUS_CODES[status] ?? 'Client error';
      return { body: { status, code: `http_${status}`, title, message: `${title}.` } };
    }
    return { body: INTERNAL_ERROR };
  }

  /** The router matched no route: 405 when the path exists under other methods, else 404. */
  private describeUnmatched(request: Request): DescribedError {
    const allowed = this.routes.allowedFor(request.path);
    if (allowed.length > 0) {
      return {
        body: {
          status: 405,
          code: 'method_not_allowed',
          title: 'Method not allowed',
          message: `The requested resource does not support http method '${request.method}'.`,
        },
        headers: { Allow: allowed.join(', ') },
      };
    }
    return {
      body: {
        status: 404,
        code: 'route_not_found',
        title: 'Not found',
        // The URI as the legacy's routing read it: escapes of plain characters and dot segments resolved.
        message: `No HTTP resource was found that matches the request URI '${quoteUrl(request.url)}'.`,
      },
    };
  }
}
