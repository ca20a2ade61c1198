import {
  type CallHandler,
  type ExecutionContext,
  Injectable,
  type NestInterceptor,
} from '@nestjs/common';
import { type Attributes, context, type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import { type Request } from 'express';
import { Observable } from 'rxjs';
import { routeTemplate } from '../logging/route-template';

const COMPONENT = '@nestjs/core';

/**
 * The NestJS layer of a trace, beneath the HTTP server span: `TransactionController.getTransaction`
 * (the request's route in the controller) and, within it, `getTransaction` (the handler), with the
 * database spans of the handler beneath them. The names and attributes are those of
 * @opentelemetry/instrumentation-nestjs-core, which supports NestJS below 12 only (and patches
 * `require`, which NestJS 12's ES modules do not go through): this stands in for it until it does.
 *
 * A request outside a recording trace (tracing off, or a caller's decision not to sample) costs one
 * look at the active span.
 */
@Injectable()
export class HandlerSpans implements NestInterceptor {
  private readonly tracer = trace.getTracer(COMPONENT);

  intercept(execution: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (execution.getType() !== 'http' || !trace.getActiveSpan()?.isRecording())
      return next.handle();
    const controller = execution.getClass().name;
    const callback = execution.getHandler().name;
    const request = execution.switchToHttp().getRequest<Request>();
    const requestSpan = this.tracer.startSpan(`${controller}.${callback}`, {
      attributes: {
        component: COMPONENT,
        'nestjs.type': 'request_context',
        'nestjs.controller': controller,
        'nestjs.callback': callback,
        'http.request.method': request.method,
        'http.route': routeTemplate(request),
      } satisfies Attributes,
    });
    const requestContext = trace.setSpan(context.active(), requestSpan);
    const handlerSpan = this.tracer.startSpan(
      callback,
      {
        attributes: { component: COMPONENT, 'nestjs.type': 'handler', 'nestjs.callback': callback },
      },
      requestContext,
    );
    const end = (error?: unknown) => {
      for (const span of [handlerSpan, requestSpan]) {
        if (error !== undefined) recordError(span, error);
        span.end();
      }
    };
    return new Observable((subscriber) =>
      context.with(trace.setSpan(requestContext, handlerSpan), () =>
        next.handle().subscribe({
          next: (value) => subscriber.next(value),
          error: (error: unknown) => {
            end(error);
            subscriber.error(error);
          },
          complete: () => {
            end();
            subscriber.complete();
          },
        }),
      ),
    );
  }
}

function recordError(span: Span, error: unknown): void {
  if (error instanceof Error) span.recordException(error);
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
}
