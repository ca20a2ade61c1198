import { hostname } from 'node:os';
import { stdTimeFunctions } from 'pino';
import { name as SERVICE, version as VERSION } from '../../package.json';
import { describeFailure } from './failure-details';

/**
 * Every line carries its level by name, the service and its version (so that lines of several
 * services and releases in one store tell apart), the process and host, its time as ISO 8601, and a
 * failure as describeFailure tells it.
 */
export const LINE_OPTIONS = {
  base: { service: SERVICE, version: VERSION, pid: process.pid, hostname: hostname() },
  formatters: { level: (label: string) => ({ level: label }) },
  timestamp: stdTimeFunctions.isoTime,
  serializers: { err: describeFailure },
} as const;
