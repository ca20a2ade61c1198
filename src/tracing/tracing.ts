import { type Tracing } from './sdk';

type Environment = Record<string, string | undefined>;

/** A list variable as the SDK reads one: comma-separated, each entry trimmed, empty ones dropped. */
function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
}

/**
 * Whether the standard variables ask for traces: an exporter named in `OTEL_TRACES_EXPORTER`, or a
 * collector's address in `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the
 * exporter is then OTLP, the SDK's default). `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`
 * keep it off whatever else is set. Everything else (service name, resource, sampler, protocol,
 * headers, batching) is the SDK's to read.
 */
export function tracingRequested(env: Environment): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = list(env.OTEL_TRACES_EXPORTER);
  if (exporters.includes('none')) return false;
  return (
    exporters.length > 0 ||
    list(env.OTEL_EXPORTER_OTLP_ENDPOINT).length > 0 ||
    list(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT).length > 0
  );
}

/**
 * The running SDK, when the environment asked for traces; else `undefined`, and the SDK is never
 * loaded, so that a service without tracing pays nothing for it. main.ts imports this module first:
 * the instrumentations patch http, express, @nestjs/core and mysql2 as they are required, so the SDK
 * must be running before any of them is.
 */
export const tracing: Tracing | undefined = tracingRequested(process.env)
  ? // A conditional require, which an import cannot be: the SDK is loaded only when it runs.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    (require('./sdk') as typeof import('./sdk')).startTracing()
  : undefined;
