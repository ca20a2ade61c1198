import {
  type CallHandler,
  type ExecutionContext,
  Inject,
  Injectable,
  type NestInterceptor,
} from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { Reflector } from '@nestjs/core';
import { type Request, type Response } from 'express';
import { map, type Observable } from 'rxjs';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { RawWireBody, readWireBody, requestContentType, type RequestMediaType } from './wire-body';
import { MalformedBodyError, RequestValidationError } from '../model/wire-errors';
import { wireModelOf } from '../model/wire-model';
import {
  encodeResponse,
  NEGOTIATED_WITH_CHARSET_BY,
  responseCharset,
  WireFormats,
} from './wire-negotiation';
import { WIRE_RESPONSE, type WireResponseOptions } from '../openapi/wire-response.decorator';
import { RepresentationCache, strongEtagOf, VersionedBody } from './versioned-body';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

const NOT_DTOS: readonly unknown[] = [Object, String, Number, Boolean, Array];

/**
 * Whether a handler takes its body untyped (`@Body() body`) or by member (`@Body('name') name`), as
 * the NestJS documentation allows: no DTO reads such a body in the pipe, so it is parsed here.
 */
function readsUntypedBody(context: ExecutionContext): boolean {
  const controller = context.getClass();
  const method = context.getHandler().name;
  const args = Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, method) as
    Record<string, { index: number; data?: unknown }> | undefined;
  const prototype = controller.prototype as object;
  const types = Reflect.getMetadata('design:paramtypes', prototype, method) as
    unknown[] | undefined;
  const bodies = Object.entries(args ?? {})
    .filter(([key]) => key.startsWith(`${RouteParamtypes.BODY}:`))
    .map(([, arg]) => arg);
  return (
    bodies.length > 0 &&
    bodies.every(({ index, data }) => data !== undefined || NOT_DTOS.includes(types?.[index]))
  );
}

/** An untyped body as its format carries it: members as sent, XML and form values as text. */
function parsedUntyped(body: RawWireBody): object {
  try {
    const { text, encoding } = body.decode();
    return body.reader.decodePlain(text, undefined, encoding);
  } catch (error) {
    if (error instanceof MalformedBodyError)
      throw RequestValidationError.ofBody('body', ...error.reasons);
    throw error;
  }
}

/**
 * The wire layer around every route: reads the request body for the pipe to parse, and writes the
 * handler's result in the negotiated format, with an ETag on GET responses that carry none yet.
 */
@Injectable()
export class WireInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly formats: WireFormats,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly representations: RepresentationCache,
  ) {}

  private readonly untypedBodies = new WeakMap<object, boolean>();

  /**
   * Nest awaits what an interceptor returns, then the last value the handler's observable emits: the
   * body is read before the handler runs, and a response that takes a promise to write (a versioned
   * body's cached bytes) is sent once it resolves.
   */
  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    const declared = this.reflector.get<WireResponseOptions | undefined>(
      WIRE_RESPONSE,
      context.getHandler(),
    );
    // Read once: it types the body, and the response is negotiated on it when Accept does not decide.
    const contentType = requestContentType(request);
    if (METHODS_WITH_BODY.has(request.method)) {
      const { bodyLimitBytes, connections } = this.config;
      const body = await readWireBody(
        request,
        contentType,
        this.formats,
        bodyLimitBytes,
        connections,
      );
      request.body = body && this.readsUntypedBody(context) ? parsedUntyped(body) : body;
    }
    const results = next.handle();
    if (!declared) return results;
    return results.pipe(
      map((result: unknown) => this.write(request, response, declared, contentType, result)),
    );
  }

  private readsUntypedBody(context: ExecutionContext): boolean {
    const handler = context.getHandler();
    let untyped = this.untypedBodies.get(handler);
    if (untyped === undefined) {
      untyped = readsUntypedBody(context);
      this.untypedBodies.set(handler, untyped);
    }
    return untyped;
  }

  /** The result's bytes in the negotiated format; a promise of them for a versioned body. */
  private write(
    request: Request,
    response: Response,
    declared: WireResponseOptions,
    contentType: RequestMediaType | undefined,
    result: unknown,
  ): unknown {
    if (result === undefined || result === null) return result;
    const format = this.formats.forResponse(request.headers.accept, contentType?.type);
    const charset = responseCharset(request.get('Accept-Charset'), contentType?.declaredCharset);
    const encode = (value: object) =>
      encodeResponse(format.writer.encode(wireModelOf(declared.type), value), charset);
    response.setHeader('Content-Type', `${format.mediaType}; charset=${charset}`);
    response.setHeader('Vary', NEGOTIATED_WITH_CHARSET_BY);
    const conditional = request.method === 'GET' || request.method === 'HEAD';
    if (result instanceof VersionedBody) {
      return this.representations
        .get(result as VersionedBody<object>, `${format.mediaType} ${charset}`, encode)
        .then((cached) => {
          if (conditional) response.setHeader('ETag', cached.etag);
          // The cached bytes, as they are; WireExpressAdapter answers 304 when the client holds them.
          return cached.bytes;
        });
    }
    // Bytes, which WireExpressAdapter sends as they are: Express would parse the Content-Type again.
    const bytes = encode(result);
    // WireExpressAdapter answers 304 when an If-None-Match names the ETag set here.
    if (conditional && !response.hasHeader('ETag')) response.setHeader('ETag', strongEtagOf(bytes));
    return bytes;
  }
}
