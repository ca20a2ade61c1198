import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import Redis from 'ioredis';
import { APP_CONFIG, type AppConfig, type RateLimitConfig } from '../config/app-config';

/** A bucket's state after a request: how many it holds in this window, and when the window ends. */
export interface BucketState {
  readonly count: number;
  readonly resetInMs: number;
}

/** Where the limits are counted, as readiness reports it. */
export interface RateLimitStoreStatus {
  readonly store: 'memory' | 'redis';
  /** Set when REDIS_URL names a Redis that does not answer: each instance counts on its own. */
  readonly redis?: 'unavailable';
}

// Fixed windows: the first hit of a bucket starts its window; INCR and PEXPIRE run as one.
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}`;
const PEEK_SCRIPT = `
local count = redis.call('GET', KEYS[1])
if not count then return {0, 0} end
return {tonumber(count), redis.call('PTTL', KEYS[1])}`;

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

/** Settled once, when the circuit opens: what the requests waiting on Redis race. */
class Stall {
  resolve!: () => void;
  readonly promise = new Promise<undefined>((resolve) => (this.resolve = () => resolve(undefined)));
}

/** Counts in this process: what every instance does without Redis, and while Redis is away. */
class MemoryBuckets {
  private readonly buckets = new Map<string, { count: number; resetAt: number }>();
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

  peek(key: string): BucketState {
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
  hit(key: string): Promise<BucketState> {
    return this.shared(key, HIT_SCRIPT, () => this.memory.hit(key), [String(this.windowMs)]);
  }

  /** The bucket as it stands, counting nothing. */
  peek(key: string): Promise<BucketState> {
    return this.shared(key, PEEK_SCRIPT, () => this.memory.peek(key), []);
  }

  status(): RateLimitStoreStatus {
    if (!this.redis) return { store: 'memory' };
    return this.redisState === 'available'
      ? { store: 'redis' }
      : { store: 'memory', redis: 'unavailable' };
  }

  /** The bucket counted in Redis while its circuit is closed; in memory while it is open (Redis away). */
  private async shared(
    key: string,
    script: string,
    inMemory: () => BucketState,
    args: string[],
  ): Promise<BucketState> {
    if (!this.redis || this.open) return inMemory();
    const stalled = this.stalled.promise;
    const counted = await Promise.race([this.evaluate(key, script, args), stalled]);
    return counted ?? inMemory();
  }

  /** Runs a script in Redis; `undefined` when Redis fails or stalls, the circuit then open. */
  private async evaluate(
    key: string,
    script: string,
    args: string[],
  ): Promise<BucketState | undefined> {
    this.pending += 1;
    this.watchForStall();
    try {
      const [count, resetInMs] = (await this.redis!.eval(script, 1, key, ...args)) as [
        number,
        number,
      ];
      this.answers += 1;
      this.redisAnswered();
      return { count, resetInMs };
    } catch (error) {
      this.redisFailed(error as Error);
      return undefined;
    } finally {
      this.pending -= 1;
    }
  }

  /**
   * While commands are pending, checks every REDIS_STALL_MS that Redis answered one: if it did not,
   * the circuit opens and every request waiting on Redis counts in memory at once.
   */
  private watchForStall(): void {
    if (this.stallWatch) return;
    const answersBefore = this.answers;
    this.stallWatch = setTimeout(() => {
      this.stallWatch = undefined;
      if (this.pending === 0) return;
      if (this.answers !== answersBefore) this.watchForStall();
      else if (!this.open) this.redisFailed(new Error(`no answer within ${REDIS_STALL_MS} ms`));
    }, REDIS_STALL_MS).unref();
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
