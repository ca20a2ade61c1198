import { createHmac } from 'node:crypto';
import { Agent, request } from 'undici';
import { CLOUD_EVENT_ENCODING, CLOUD_EVENT_MEDIA_TYPE } from '../events/cloud-event';
import {
  checkedLookup,
  TARGET_REFUSED,
  type TargetResolver,
  type TargetRules,
  targetUrl,
} from './webhook-targets';

/**
 * How one delivery ended: `delivered` (a 2xx), `failed` (another status, a redirect among them, or a
 * broken connection), `timeout` (no whole answer within WEBHOOKS_TIMEOUT_MS), `refused` (the target
 * refused by the address check, or the connection refused by its host).
 */
export type DeliveryResult = 'delivered' | 'failed' | 'timeout' | 'refused';

export interface DeliveryOutcome {
  readonly result: DeliveryResult;
  /** What went wrong, for the log and the subscription's disabled_reason: short, bounded. */
  readonly reason?: string;
}

/** The most of a subscriber's answer read (and quoted): its body is never stored or logged whole. */
const EXCERPT_BYTES = 256;

/** One delivery: the event as the broker gets it, and where it goes. */
export interface Delivery {
  readonly url: string;
  /** The secrets that sign it: the current one, and the previous one during its grace period. */
  readonly secrets: readonly string[];
  /** The CloudEvents id: the webhook-id, the same on every retry. */
  readonly eventId: string;
  /** The CloudEvent, structured JSON, as stored in the outbox and published to the broker. */
  readonly body: string;
}

/** What begins a Standard Webhooks secret, before the base64 of its key. */
const SECRET_PREFIX = 'whsec_';

/**
 * The Standard Webhooks `v1` signature of one delivery: the base64 of the HMAC-SHA256, keyed with the
 * secret's bytes, of `id.timestamp.body`, exactly as the standardwebhooks package signs. Computed
 * with node:crypto's HMAC, because the package's own SHA-256 is written in JavaScript and takes
 * several times as long, once a delivery; the suites verify every delivery with the package.
 */
export function signDelivery(
  secret: string,
  eventId: string,
  timestamp: Date,
  body: string,
): string {
  const key = Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  );
  const seconds = Math.floor(timestamp.getTime() / 1000);
  return `v1,${createHmac('sha256', key).update(`${eventId}.${seconds}.${body}`).digest('base64')}`;
}

/** Node.js's codes for a connection its target refused, or this service's address check did. */
const REFUSED_CODES = new Set(['ECONNREFUSED', TARGET_REFUSED]);
const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** What is read of an error and its causes, from whichever realm (undici's, a DOMException). */
interface Cause {
  readonly name?: string;
  readonly code?: string;
  readonly message?: string;
  readonly cause?: unknown;
}

/** How deep a chain of causes is read. */
const CAUSE_DEPTH = 8;

/** The error and its causes, outermost first: objects, not `instanceof Error`, across realms. */
function* causes(error: unknown): Generator<Cause> {
  let at = error;
  for (let depth = 0; depth < CAUSE_DEPTH && typeof at === 'object' && at !== null; depth++) {
    yield at;
    at = (at as Cause).cause;
  }
}

/** The first bytes of an answer's body, as text; the rest is never read. */
async function excerptOf(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    length += chunk.length;
    if (length >= EXCERPT_BYTES) break;
  }
  body.destroy();
  return Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8');
}

/**
 * POSTs events to subscribers, signed as the Standard Webhooks specification says
 * (signDelivery): `webhook-id`, `webhook-timestamp`, and `webhook-signature` with a `v1,` signature
 * per secret. Redirects are not followed (a 3xx fails); each connection's addresses are checked
 * again as it is made, unless private networks are allowed.
 */
export class WebhookSender {
  private readonly agent: Agent;

  constructor(
    private readonly rules: TargetRules,
    private readonly timeoutMs: number,
    private readonly userAgent: string,
    resolver: TargetResolver,
  ) {
    this.agent = new Agent({
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      connect: {
        timeout: timeoutMs,
        ...(!rules.allowPrivateNetworks && { lookup: checkedLookup(resolver) }),
      },
    });
  }

  async send({ url, secrets, eventId, body }: Delivery): Promise<DeliveryOutcome> {
    let target: URL;
    try {
      target = targetUrl(url, this.rules);
    } catch (error) {
      return { result: 'refused', reason: (error as Error).message };
    }
    const timestamp = new Date();
    const signature = secrets
      .map((secret) => signDelivery(secret, eventId, timestamp, body))
      .join(' ');
    try {
      const response = await request(target, {
        method: 'POST',
        dispatcher: this.agent,
        signal: AbortSignal.timeout(this.timeoutMs),
        headers: {
          'content-type': `${CLOUD_EVENT_MEDIA_TYPE}; charset=${CLOUD_EVENT_ENCODING}`,
          'user-agent': this.userAgent,
          'webhook-id': eventId,
          'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body,
      });
      if (response.statusCode >= 200 && response.statusCode < 300) {
        // Taken: its body is not read.
        await response.body.dump();
        return { result: 'delivered' };
      }
      const excerpt = await excerptOf(response.body);
      return {
        result: 'failed',
        reason: `answered ${response.statusCode}${excerpt ? `: ${JSON.stringify(excerpt)}` : ''}`,
      };
    } catch (error) {
      return this.failure(error);
    }
  }

  private failure(error: unknown): DeliveryOutcome {
    for (const cause of causes(error)) {
      if (cause.name === 'TimeoutError' || (cause.code && TIMEOUT_CODES.has(cause.code)))
        return { result: 'timeout', reason: `no answer within ${this.timeoutMs} ms` };
      if (cause.code && REFUSED_CODES.has(cause.code))
        return { result: 'refused', reason: String(cause.message) };
    }
    const [outer] = causes(error);
    return { result: 'failed', reason: String(outer?.message ?? error) };
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
