/**
 * The Standard Webhooks retry schedule, in units of WEBHOOKS_RETRY_BASE_MS (1 s by default):
 * after the first failure at once, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, and 10 h again from
 * then on.
 */
const SCHEDULE_UNITS = [0, 5, 300, 1800, 7200, 18_000, 36_000];
/** Each delay is moved up to this share either way at random, so that retries do not come in step. */
const JITTER = 0.2;

/**
 * How long to wait before the attempt after `failures` (1 or more) failed ones in a row, in ms: the
 * schedule's step with ±20% jitter (`random` in [0, 1)), and never past `disableAt` (ms from now),
 * the moment the subscription is disabled unless an attempt succeeds: the last attempt is made then.
 */
export function retryDelay(
  failures: number,
  baseMs: number,
  disableAt: number,
  random: () => number = Math.random,
): number {
  const units = SCHEDULE_UNITS[Math.min(Math.max(failures, 1), SCHEDULE_UNITS.length) - 1];
  const delay = units * baseMs * (1 + JITTER * (2 * random() - 1));
  return Math.max(0, Math.min(Math.round(delay), disableAt));
}
