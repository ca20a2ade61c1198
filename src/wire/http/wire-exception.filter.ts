import {
  type ArgumentsHost,
  Catch,
  type ExceptionFilter,
  HttpException,
  Inject,
  NotFoundException,
} from '@nestjs/common';
import { type Request, type Response } from 'express';
import { DomainError } from '../../common/domain-error';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { recordFailure } from '../../logging/logging.module';
import { requestContentType } from './wire-body';
import { errorBodyOf, httpErrorBodyOf, INTERNAL_ERROR } from '../codecs/error-bodies';
import { type WireErrorBody } from '../codecs/wire-codec';
import { WireRequestError } from '../model/wire-errors';
import {
  encodeResponse,
  NEGOTIATED_WITH_CHARSET_BY,
  responseCharset,
  WireFormats,
} from './wire-negotiation';
import { RouteMethods } from './route-methods';
import { settleUnreadBody } from './unread-body';

/**
 * Refusals of the client as it stands (unauthenticated, forbidden, a body too large, over a rate):
 * their connections are closed after the answer, so that a refused client holds none. An error may
 * ask the same with a `Connection: close` header of its own.
 */
const CLOSING_STATUSES: ReadonlySet<number> = new Set([401, 403, 413, 429]);

interface DescribedError {
  readonly body: WireErrorBody;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * Whether the router dispatched the request to a route of its method: Express keeps the last route
 * it entered on the request, and enters a route for HEAD even when only GET would run there. Routes
 * taking every method are how Nest mounts middleware, so they are not endpoints.
 */
function reachedRoute(request: Request): boolean {
  const route = request.route as { methods: Record<string, boolean | undefined> } | undefined;
  const method = request.method.toLowerCase();
  return Boolean(route?.methods[method] || (method === 'head' && route?.methods.get));
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
    @Inject(APP_CONFIG) private readonly config: AppConfig,
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
    const closes = CLOSING_STATUSES.has(body.status) || headers?.Connection === 'close';
    settleUnreadBody(request, response, this.config.connections, closes);
    const contentType = requestContentType(request);
    const format = this.formats.forError(request.headers.accept, contentType?.type);
    const charset = responseCharset(request.get('Accept-Charset'), contentType?.declaredCharset);
    response.status(body.status);
    for (const [name, value] of Object.entries(headers ?? {})) response.setHeader(name, value);
    response.setHeader('Content-Type', `${format.mediaType}; charset=${charset}`);
    response.setHeader('Vary', NEGOTIATED_WITH_CHARSET_BY);
    const requestId = (request as { id?: unknown }).id;
    const text = format.writer.encodeError(
      typeof requestId === 'string' ? { ...body, requestId } : body,
    );
    // Bytes, which Express sends as they are: given text, it would declare UTF-8 again.
    response.send(encodeResponse(text, charset));
  }

  private describe(exception: unknown, request: Request): DescribedError {
    if (exception instanceof WireRequestError) return { body: errorBodyOf(exception) };
    if (exception instanceof DomainError)
      return { body: errorBodyOf(exception), headers: exception.headers };
    if (exception instanceof HttpException) return this.describeHttpException(exception, request);
    return { body: INTERNAL_ERROR };
  }

  /**
   * Thrown by a route's handler, guard or pipe: its status and message, as the framework documents.
   * Raised by the router before any route was reached (no route matched, a path that cannot be
   * decoded), as the legacy answered: 404 or 405, else the status alone.
   */
  private describeHttpException(exception: HttpException, request: Request): DescribedError {
    const routed = reachedRoute(request);
    if (!routed && exception instanceof NotFoundException) return this.describeUnmatched(request);
    return { body: httpErrorBodyOf(exception, routed) };
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
