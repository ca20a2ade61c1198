import {
  type Attributes,
  diag,
  type DiagLogger,
  DiagLogLevel,
  type Span,
} from '@opentelemetry/api';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { MySQL2Instrumentation } from '@opentelemetry/instrumentation-mysql2';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { type ClientRequest, IncomingMessage } from 'node:http';
import { pino } from 'pino';
import { name, version } from '../../package.json';
// Nothing else of the service: this module is loaded before the modules the SDK instruments.
import { LINE_OPTIONS } from '../logging/line-options';
import { QueryRedaction } from '../logging/query-redaction';
import { routeTemplate } from '../logging/route-template';

export interface Tracing {
  /** Ends tracing, sending the spans not yet exported; resolves after FLUSH_LIMIT_MS at the latest. */
  shutdown(): Promise<void>;
}

/**
 * How long a shutdown waits for the last spans to reach the collector. A collector that answers takes
 * milliseconds; one that does not would hold the exit for the exporter's own timeout (10 s).
 */
const FLUSH_LIMIT_MS = 1000;

/**
 * Requests that make no trace: the probes of the gateway and the orchestrator, and Prometheus's
 * scrapes, which come every few seconds and say nothing about a caller's request. Matched as routing
 * matches them: any case, a trailing slash, a query.
 */
const UNTRACED = /^\/(health\/(live|ready)|metrics)\/?(\?|$)/i;

/**
 * The server span is named `GET /api/Transaction/GetTransaction/:transaction_id` by the route Express
 * matched, as the request's log line and metrics name it, whatever case or legacy form the path came
 * in; a request no route answered keeps the method alone, so invented URLs make no span names.
 */
function nameByRoute(span: Span, request: ClientRequest | IncomingMessage): void {
  // Called for the server's requests and for any the service sends, whose spans keep their names.
  const route = request instanceof IncomingMessage ? routeTemplate(request) : undefined;
  if (route === undefined) return;
  span.setAttribute('http.route', route);
  span.updateName(`${request.method} ${route}`);
}

/**
 * The server span's `url.query`: the query as sent, with credentials redacted as in the request's log
 * line. It replaces the instrumentation's own, which redacts a few names of signed URLs, in their
 * case alone, and encodes the rest anew. The configuration is not read yet: the SDK takes
 * LOG_REDACT_QUERY_PARAMETERS as it is, and the service stops at start-up if it is not valid.
 */
function redactedQuery(): (request: IncomingMessage) => Attributes {
  const redaction = new QueryRedaction(process.env.LOG_REDACT_QUERY_PARAMETERS?.split(',') ?? []);
  return ({ url = '' }) => {
    const start = url.indexOf('?');
    return start < 0 || start === url.length - 1
      ? {}
      : { 'url.query': redaction.query(url.slice(start + 1)) };
  };
}

/** The SDK's own diagnostics (a failed export, a bad OTEL_* value) as JSON lines, like the service's. */
function diagnostics(): DiagLogger {
  const logger = pino({ ...LINE_OPTIONS, level: 'trace' });
  const at =
    (level: 'error' | 'warn' | 'info' | 'debug' | 'trace') =>
    (message: string, ...details: unknown[]) =>
      logger[level](
        { component: 'opentelemetry', details: details.length ? details : undefined },
        message,
      );
  return {
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
    verbose: at('trace'),
  };
}

/** OTEL_LOG_LEVEL as the SDK names its levels (`none` to `all`); `info` by default, as the SDK's. */
function diagnosticsLevel(): DiagLogLevel {
  const level = process.env.OTEL_LOG_LEVEL?.trim().toUpperCase() ?? 'INFO';
  return DiagLogLevel[level as keyof typeof DiagLogLevel] ?? DiagLogLevel.INFO;
}

/**
 * Starts the OpenTelemetry SDK, configured by the standard OTEL_* variables, with the instrumentations
 * of what the service does: the HTTP server span (continuing the caller's `traceparent`) and every
 * mysql2 query, those of the statement batches included; the NestJS spans between them are
 * HandlerSpans'. Traces only: metrics are
 * Prometheus's (/metrics) and logs are the JSON lines.
 *
 * Nothing of a request's data is recorded: no bodies, no headers (the instrumentations record none
 * unless told), no credential of the URL's query, and a query's text as the service wrote it, with
 * its `?` placeholders, never the values (mysql2's instrumentation would write them into the text).
 */
export function startTracing(): Tracing {
  const sdk = new NodeSDK({
    // The lowest layer: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override it.
    resource: defaultResource().merge(
      resourceFromAttributes({ 'service.name': name, 'service.version': version }),
    ),
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request) => UNTRACED.test(request.url ?? ''),
        applyCustomAttributesOnSpan: nameByRoute,
        startIncomingSpanHook: redactedQuery(),
      }),
      new MySQL2Instrumentation({ maskStatement: true, maskStatementHook: (sql) => sql }),
    ],
    metricReaders: [],
    logRecordProcessors: [],
  });
  // After the constructor, which sets a console logger of its own when OTEL_LOG_LEVEL is set.
  diag.setLogger(diagnostics(), { logLevel: diagnosticsLevel(), suppressOverrideMessage: true });
  sdk.start();
  return {
    shutdown: async () => {
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise<void>((resolve) => (timer = setTimeout(resolve, FLUSH_LIMIT_MS)));
      // A failed export has been reported through the diagnostics already.
      await Promise.race([sdk.shutdown().catch(() => undefined), limit]);
      clearTimeout(timer);
    },
  };
}
