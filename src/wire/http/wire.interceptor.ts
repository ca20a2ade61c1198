import {
  type CallHandler,
  type ExecutionContext,
  Inject,
  Injectable,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { type Request, type Response } from 'express';
import { from, mergeMap, type Observable, of, switchMap } from 'rxjs';
import { APP_CONFIG, type AppConfig } from '../../config/app-config';
import { readWireBody, requestContentType } from './wire-body';
import { wireModelOf } from '../model/wire-model';
import { NEGOTIATED_BY, WireFormats } from './wire-negotiation';
import { WIRE_RESPONSE, type WireResponseOptions } from '../openapi/wire-response.decorator';
import { RepresentationCache, strongEtagOf, VersionedBody } from './versioned-body';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

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
  ) {}

  private readonly representations = new RepresentationCache();

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    const declared = this.reflector.get<WireResponseOptions | undefined>(
      WIRE_RESPONSE,
      context.getHandler(),
    );
    // Read once: it types the body, and the response is negotiated on it when Accept does not decide.
    const contentType = requestContentType(request);
    const handle = () =>
      next
        .handle()
        .pipe(
          mergeMap((result: unknown) =>
            declared
              ? this.write(request, response, declared, contentType?.type, result)
              : of(result),
          ),
        );
    if (!METHODS_WITH_BODY.has(request.method)) return handle();
    return from(readWireBody(request, contentType, this.formats, this.config.bodyLimitBytes)).pipe(
      switchMap((body) => {
        request.body = body;
        return handle();
      }),
    );
  }

  private async write(
    request: Request,
    response: Response,
    declared: WireResponseOptions,
    requestMediaType: string | undefined,
    result: unknown,
  ): Promise<unknown> {
    if (result === undefined || result === null) return result;
    const format = this.formats.forResponse(request.headers.accept, requestMediaType);
    const encode = (value: object) => format.writer.encode(wireModelOf(declared.type), value);
    response.setHeader('Content-Type', `${format.mediaType}; charset=utf-8`);
    response.setHeader('Vary', NEGOTIATED_BY);
    const conditional = request.method === 'GET' || request.method === 'HEAD';
    if (result instanceof VersionedBody) {
      const cached = await this.representations.get(
        result as VersionedBody<object>,
        format.mediaType,
        encode,
      );
      if (conditional) response.setHeader('ETag', cached.etag);
      // The cached bytes, as they are; WireExpressAdapter answers 304 when the client holds them.
      return cached.bytes;
    }
    const text = encode(result);
    // WireExpressAdapter answers 304 when an If-None-Match names the ETag set here.
    if (conditional && !response.hasHeader('ETag')) response.setHeader('ETag', strongEtagOf(text));
    return text;
  }
}
