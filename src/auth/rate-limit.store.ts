import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { APP_CONFIG, type AppConfig, type RateLimitConfig } from '../config/app-config';

/** A bucket's state after a request: how many it holds in this window, and when the window ends. */
export interface BucketState {
  readonly count: number;
  readonly resetInMs: number;
}

/** A bucket a credential check is counted in if it fails, and how many failures its window allows. */
export interface CheckBucket {
  readonly key: string;
  readonly limit: number;
}

/**
 * A credential check's place in its buckets: taken before the check, so that no more checks than a
 * bucket has left are ever under way; or the refusal, when a bucket has spent its limit.
 */
export type Admission =
  | {
      readonly admitted: true;
      /** Gives the place back after the check, counting the request in the buckets of `counted`. */
      release(counted: readonly string[]): Promise<void>;
    }
  | { readonly admitted: false; readonly resetInMs: number };

/** Where the limits are counted, as readiness reports it. */
export interface RateLimitStoreStatus {
  readonly store: 'memory' | 'redis';
  /** Set when REDIS_URL names a Redis that does not answer: each instance counts on its own. */
  readonly redis?: 'unavailable';
}

/** What a script answers: two numbers. */
type Reply = [number, number];
/** A reservation's outcome, the first of its reply (the second: the time left of a spent window). */
const REFUSED = 0;
const BUSY = 1;
const ADMITTED = 2;

// Fixed windows: the first hit of a bucket starts its window; INCR and PEXPIRE run as one.
const HIT_FUNCTION = `
local function hit(key, window)
  local count = redis.call('INCR', key)
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then
    redis.call('PEXPIRE', key, window)
    ttl = tonumber(window)
  end
  return {count, ttl}
end`;
const HIT_SCRIPT = `${HIT_FUNCTION}
return hit(KEYS[1], ARGV[1])`;
/**
 * KEYS: each bucket's count, then its checks under way (a sorted set of ids, scored by when their
 * hold lapses); ARGV: the check's id, its hold, each bucket's limit. Refused when a bucket has spent
 * its limit; busy when the checks under way could spend what is left; else admitted in every bucket.
 * Redis's own clock (TIME; Redis 5 or later) dates the holds, whatever the instances' clocks say.
 */
const RESERVE_SCRIPT = `
local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)
local busy = false
for i = 1, #KEYS / 2 do
  local count = tonumber(redis.call('GET', KEYS[i * 2 - 1]) or 0)
  local limit = tonumber(ARGV[i + 2])
  if count >= limit then return {${REFUSED}, redis.call('PTTL', KEYS[i * 2 - 1])} end
  redis.call('ZREMRANGEBYSCORE', KEYS[i * 2], '-inf', now)
  if count + redis.call('ZCARD', KEYS[i * 2]) >= limit then busy = true end
end
if busy then return {${BUSY}, 0} end
for i = 1, #KEYS / 2 do
  redis.call('ZADD', KEYS[i * 2], now + ARGV[2], ARGV[1])
  redis.call('PEXPIRE', KEYS[i * 2], ARGV[2])
end
return {${ADMITTED}, 0}`;
/** KEYS as RESERVE_SCRIPT's; ARGV: the check's id, the window, then 1 for a bucket it counts in. */
const RELEASE_SCRIPT = `${HIT_FUNCTION}
for i = 1, #KEYS / 2 do
  redis.call('ZREM', KEYS[i * 2], ARGV[1])
  if ARGV[i + 2] == '1' then hit(KEYS[i * 2 - 1], ARGV[2]) end
end
return {0, 0}`;

/** A Redis command past this has failed: the probe's bound, and the last resort of any command. */
const REDIS_COMMAND_TIMEOUT_MS = 500;
/**
 * A Redis that leaves its commands unanswered this long is taken as away (the circuit opens): every
 * request waiting on it counts in memory at once, and so does every request after, without waiting.
 * A Redis that answers takes well under a millisecond.
 */
const REDIS_STALL_MS = 50;
/** While the circuit is open, Redis is probed (PING) this often, one probe at a time. */
const REDIS_RETRY_MS = 1000;
/** How long the start waits for Redis before serving with limits in memory. */
const REDIS_CONNECT_WAIT_MS = 2000;
/**
 * How long a check holds its place: longer than any check takes (a JWKS fetch is bounded to 3 s), so
 * that a place lost with its instance, or with Redis, is free again after this, not after the window.
 * A check that waits for a place waits no longer than this.
 */
const CHECK_HOLD_MS = 5000;
/** A check whose buckets are taken by checks under way asks again after this, doubling to the cap. */
const BUSY_RETRY_MS = 5;
const BUSY_RETRY_MAX_MS = 25;

/** Settled once, when the circuit opens: what the requests waiting on Redis race. */
class Stall {
  resolve!: () => void;
  readonly promise = new Promise<undefined>((resolve) => (this.resolve = () => resolve(undefined)));
}

/** Counts in this process: what every instance does without Redis, and while Redis is away. */
class MemoryBuckets {
  private readonly buckets = new Map<string, { count: number; resetAt: number }>();
  /** Per bucket, the checks under way. */
  private readonly checking = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly windowMs: number) {
    // Ended windows are dropped once per window, so the map holds only the clients of about two.
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const [key, bucket] of this.buckets) if (bucket.resetAt <= now) this.buckets.delete(key);
    }, windowMs).unref();
  }

  hit(key: string): BucketState {
    const now = Date.now();
    let bucket = this.buckets.get(key);
    if (!bucket || bucket.resetAt <= now) {
      bucket = { count: 0, resetAt: now + this.windowMs };
      this.buckets.set(key, bucket);
    }
    bucket.count += 1;
    return { count: bucket.count, resetInMs: bucket.resetAt - now };
  }

  /** As RESERVE_SCRIPT; no hold lapses here, as each place is released by the process that took it. */
  reserve(buckets: readonly CheckBucket[]): Reply {
    let busy = false;
    for (const { key, limit } of buckets) {
      const { count, resetInMs } = this.peek(key);
      if (count >= limit) return [REFUSED, resetInMs];
      if (count + (this.checking.get(key) ?? 0) >= limit) busy = true;
    }
    if (busy) return [BUSY, 0];
    for (const { key } of buckets) this.checking.set(key, (this.checking.get(key) ?? 0) + 1);
    return [ADMITTED, 0];
  }

  release(buckets: readonly CheckBucket[], counted: readonly string[]): void {
    for (const { key } of buckets) {
      const left = this.checking.get(key)! - 1;
      if (left === 0) this.checking.delete(key);
      else this.checking.set(key, left);
      if (counted.includes(key)) this.hit(key);
    }
  }

  private peek(key: string): BucketState {
    const now = Date.now();
    const bucket = this.buckets.get(key);
    return bucket && bucket.resetAt > now
      ? { count: bucket.count, resetInMs: bucket.resetAt - now }
      : { count: 0, resetInMs: 0 };
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}

/**
 * Request counts per bucket and window. With REDIS_URL every instance counts in the same Redis, so
 * the limit holds for the service as a whole; without it, or while Redis does not answer, each
 * instance counts in its own memory (and says so in its logs and readiness). Redis is never needed to
 * serve.
 */
@Injectable()
export class RateLimitStore implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(RateLimitStore.name);
  private readonly memory: MemoryBuckets;
  private readonly windowMs: number;
  private readonly redis?: Redis;
  /** `connecting` until Redis first answers or fails; each change is logged once. */
  private redisState: 'connecting' | 'available' | 'unavailable' = 'connecting';
  /** Open while Redis is away: requests count in memory, and one probe at a time asks it again. */
  private open = false;
  private probe?: NodeJS.Timeout;
  /** Set at shutdown: no probe is sent any more. */
  private stopped = false;
  /** Commands sent and not yet answered, and the answers so far: what the stall watch compares. */
  private pending = 0;
  private answers = 0;
  private stallWatch?: NodeJS.Timeout;
  /** Settles every command waiting on Redis with the memory count once the circuit opens. */
  private stalled = new Stall();

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const { windowSeconds, redisUrl, keyPrefix } = config.rateLimit as RateLimitConfig;
    this.windowMs = windowSeconds * 1000;
    this.memory = new MemoryBuckets(this.windowMs);
    if (redisUrl) {
      this.redis = new Redis(redisUrl, {
        keyPrefix,
        lazyConnect: true,
        // While Redis is away a command fails at once, and the request counts in memory.
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
        connectTimeout: REDIS_CONNECT_WAIT_MS,
        // Reconnect attempts 50 ms apart, growing to 2 s: counting is shared again within 2 s of
        // Redis's return (ioredis 5's schedule; 6's default backs off to 5 s, with jitter).
        retryStrategy: (attempt) => Math.min(attempt * 50, 2000),
      });
      // Reconnection is ioredis's own; without a listener its errors would be thrown.
      this.redis.on('error', (error: Error) => this.redisFailed(error));
      this.redis.on('ready', () => this.redisAnswered());
    }
  }

  async onModuleInit(): Promise<void> {
    if (!this.redis) return;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, REDIS_CONNECT_WAIT_MS);
    });
    // A Redis that does not answer at start is reported, and retried, like one that goes away later.
    await Promise.race([
      this.redis.connect().catch((error: Error) => this.redisFailed(error)),
      waited,
    ]);
    clearTimeout(timer);
  }

  onApplicationShutdown(): void {
    this.memory.close();
    this.stopped = true;
    clearTimeout(this.stallWatch);
    clearTimeout(this.probe);
    this.redis?.disconnect();
  }

  /** Counts one request in the bucket. */
  async hit(key: string): Promise<BucketState> {
    const reply = await this.redisReply(HIT_SCRIPT, [key], [String(this.windowMs)]);
    if (!reply) return this.memory.hit(key);
    const [count, resetInMs] = reply;
    return { count, resetInMs };
  }

  /**
   * Takes a place for a credential check in every bucket, all or none. While checks under way hold
   * what a bucket has left, waits for their outcome: they may succeed, and successes never count.
   */
  async reserve(buckets: readonly CheckBucket[]): Promise<Admission> {
    const id = randomUUID();
    const keys = buckets.flatMap(({ key }) => [key, `checking:${key}`]);
    const args = [id, String(CHECK_HOLD_MS), ...buckets.map(({ limit }) => String(limit))];
    const deadline = Date.now() + CHECK_HOLD_MS;
    for (let retryMs = BUSY_RETRY_MS; ; retryMs = Math.min(retryMs * 2, BUSY_RETRY_MAX_MS)) {
      // Left unanswered, the reservation may still be made once Redis answers again: its release is
      // sent right behind it, so that no place stays taken there for a hold.
      const reply = await this.redisReply(RESERVE_SCRIPT, keys, args, () => {
        void this.releaseInRedis(id, buckets, keys, []);
      });
      const [outcome, resetInMs] = reply ?? this.memory.reserve(buckets);
      if (outcome === REFUSED) return { admitted: false, resetInMs };
      if (outcome === ADMITTED)
        return {
          admitted: true,
          // Where the place was taken, whatever the circuit says by then.
          release: async (counted) => {
            if (reply) await this.releaseInRedis(id, buckets, keys, counted);
            else this.memory.release(buckets, counted);
          },
        };
      // Taken for a whole hold (by checks lost with their instance, or others always first): refused.
      if (Date.now() >= deadline) return { admitted: false, resetInMs: 0 };
      await sleep(retryMs);
    }
  }

  status(): RateLimitStoreStatus {
    if (!this.redis) return { store: 'memory' };
    return this.redisState === 'available'
      ? { store: 'redis' }
      : { store: 'memory', redis: 'unavailable' };
  }

  private async releaseInRedis(
    id: string,
    buckets: readonly CheckBucket[],
    keys: string[],
    counted: readonly string[],
  ): Promise<void> {
    const flags = buckets.map(({ key }) => (counted.includes(key) ? '1' : '0'));
    // Sent even while the circuit is open, though not waited for then: a Redis that only stalled
    // frees the place when it answers again, rather than a hold later.
    const released = this.evaluate(RELEASE_SCRIPT, keys, [id, String(this.windowMs), ...flags]);
    if (!this.open && (await Promise.race([released, this.stalled.promise]))) return;
    // Redis is away: the request counts here meanwhile.
    for (const { key } of buckets) if (counted.includes(key)) this.memory.hit(key);
  }

  /**
   * Runs a script in Redis while its circuit is closed; `undefined` while it is open, or when Redis
   * fails or stalls on the way (the circuit then opens), and then `unanswered` runs.
   */
  private async redisReply(
    script: string,
    keys: string[],
    args: string[],
    unanswered?: () => void,
  ): Promise<Reply | undefined> {
    if (!this.redis || this.open) return undefined;
    const reply = await Promise.race([this.evaluate(script, keys, args), this.stalled.promise]);
    if (!reply) unanswered?.();
    return reply;
  }

  /** Runs a script in Redis; `undefined` when Redis fails or stalls, the circuit then open. */
  private async evaluate(
    script: string,
    keys: string[],
    args: string[],
  ): Promise<Reply | undefined> {
    this.pending += 1;
    this.watchForStall();
    try {
      const reply = (await this.redis!.eval(script, keys.length, ...keys, ...args)) as Reply;
      this.answers += 1;
      this.redisAnswered();
      return reply;
    } catch (error) {
      this.redisFailed(error as Error);
      return undefined;
    } finally {
      this.pending -= 1;
    }
  }

  /**
   * While commands are pending, checks every REDIS_STALL_MS that Redis answered one: if it did not,
   * the circuit opens and every request waiting on Redis counts in memory at once. The check waits
   * for what the sockets hold to be read first (setImmediate runs after the event loop's poll for
   * I/O): a timer past due because this process was paused (a long garbage collection, a CPU quota
   * spent, a starved machine) would otherwise fire before the answers that came meanwhile were read,
   * and take this process's pause for Redis's.
   */
  private watchForStall(): void {
    if (this.stallWatch) return;
    const answersBefore = this.answers;
    this.stallWatch = setTimeout(
      () =>
        setImmediate(() => {
          this.stallWatch = undefined;
          if (this.pending === 0) return;
          if (this.answers !== answersBefore) this.watchForStall();
          else if (!this.open) this.redisFailed(new Error(`no answer within ${REDIS_STALL_MS} ms`));
        }).unref(),
      REDIS_STALL_MS,
    ).unref();
  }

  /** One PING: the circuit closes when it is answered, else the next probe is due. */
  private async sendProbe(): Promise<void> {
    try {
      await this.redis!.ping();
      this.probe = undefined;
      this.redisAnswered();
    } catch (error) {
      this.probe = undefined;
      this.redisFailed(error as Error);
    }
  }

  private redisAnswered(): void {
    this.open = false;
    if (this.redisState === 'available') return;
    this.redisState = 'available';
    this.logger.log('Redis answers: rate limits are shared by every instance.');
  }

  private redisFailed(error: Error): void {
    this.open = true;
    this.stalled.resolve();
    this.stalled = new Stall();
    // No request waits on a probe: a timer sends it, one at a time, until Redis answers.
    if (!this.stopped)
      this.probe ??= setTimeout(() => void this.sendProbe(), REDIS_RETRY_MS).unref();
    if (this.redisState === 'unavailable') return;
    this.redisState = 'unavailable';
    this.logger.warn(
      `Redis is unavailable (${error.message}): rate limits are counted in memory, per instance, until it answers again.`,
    );
  }
}
