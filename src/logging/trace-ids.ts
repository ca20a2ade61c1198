import { context, isSpanContextValid, trace, TraceFlags } from '@opentelemetry/api';
import { type IncomingMessage } from 'node:http';

/** What a request's log line says of its trace, so that the line can be found from the trace. */
export interface TraceIds {
  readonly trace_id: string;
  /** The service's span of the request: only when tracing is on and the span is sampled (exported). */
  readonly span_id?: string;
}

/**
 * A W3C Trace Context `traceparent` of version 00: `00-<trace id>-<parent id>-<flags>`, lowercase hex.
 * Anything else is ignored, as the specification asks: other versions, upper case, extra text, and a
 * header sent twice (Node.js joins the copies with a comma).
 */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
/** An id of zeros only is invalid. */
const ZEROS = /^0+$/;

/** The trace id of a valid `traceparent` header; `undefined` for an invalid or missing one. */
export function traceIdOfTraceparent(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const match = TRACEPARENT.exec(header);
  if (!match || ZEROS.test(match[1]) || ZEROS.test(match[2])) return undefined;
  return match[1];
}

/**
 * The trace a request belongs to, read as it starts. With tracing on, its server span's ids (that span
 * continues the caller's trace); with tracing off, or on a request tracing ignores (the probes), the
 * trace id of the caller's `traceparent`, so that the line still joins the gateway's trace. Without
 * either, `undefined`: the line carries no trace fields.
 */
export function traceIdsOf(request: IncomingMessage): TraceIds | undefined {
  // Without the SDK, the API's no-op context holds no span: this costs a few calls.
  const span = trace.getSpanContext(context.active());
  if (span && isSpanContextValid(span))
    return {
      trace_id: span.traceId,
      span_id: span.traceFlags & TraceFlags.SAMPLED ? span.spanId : undefined,
    };
  const traceId = traceIdOfTraceparent(request.headers.traceparent);
  return traceId === undefined ? undefined : { trace_id: traceId };
}
