import { tracingRequested } from './tracing';

describe('tracingRequested', () => {
  it('is off without variables, and with unrelated OTEL_* ones the SDK reads once it runs', () => {
    expect(tracingRequested({})).toBe(false);
    expect(
      tracingRequested({
        OTEL_SERVICE_NAME: 'sales',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_TRACES_EXPORTER: ' ',
        OTEL_EXPORTER_OTLP_ENDPOINT: '',
      }),
    ).toBe(false);
  });

  it.each([
    [{ OTEL_TRACES_EXPORTER: 'otlp' }],
    [{ OTEL_TRACES_EXPORTER: 'console' }],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }],
    [{ OTEL_SDK_DISABLED: 'false', OTEL_TRACES_EXPORTER: 'otlp' }],
  ])('is on when an exporter or a collector is named: %j', (env) => {
    expect(tracingRequested(env)).toBe(true);
  });

  it.each([
    [{ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' }],
    [{ OTEL_SDK_DISABLED: ' TRUE ', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }],
    [{ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }],
    [{ OTEL_TRACES_EXPORTER: 'otlp, none' }],
  ])('is off when told so, whatever else is set: %j', (env) => {
    expect(tracingRequested(env)).toBe(false);
  });
});
