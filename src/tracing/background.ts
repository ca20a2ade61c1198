import { context, ROOT_CONTEXT, type Attributes, SpanStatusCode, trace } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import { name, version } from '../../package.json';

const tracer = trace.getTracer(name, version);

/**
 * Runs database work in the trace it belongs to: a request's, or a background step's that does
 * something (backgroundTrace). Outside any, with tracing suppressed: the polls that look for events,
 * the probes' checks and the metrics' reads run every few hundred milliseconds and find nothing
 * most of the time, and each of their queries would be a trace of its own. Without tracing (no SDK
 * loaded) the context is the API's no-op one, and this costs a function call.
 */
export function withinTrace<T>(work: () => Promise<T>): Promise<T> {
  const active = context.active();
  return trace.getSpan(active) ? work() : context.with(suppressTracing(active), work);
}

/**
 * Runs a background step that has something to do (events to publish, to handle, to deliver) as a
 * trace of its own, named `spanName`: its database queries are its span's children. A failure is
 * recorded on the span and thrown on.
 */
export function backgroundTrace<T>(
  spanName: string,
  attributes: Attributes,
  work: () => Promise<T>,
): Promise<T> {
  return tracer.startActiveSpan(
    spanName,
    { root: true, attributes },
    ROOT_CONTEXT,
    async (span) => {
      try {
        return await work();
      } catch (error) {
        span.recordException(error as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}
