import { Counter, Gauge, Histogram } from 'prom-client';
import { registerBacklogGauges } from '../event-relay/backlog-gauges';
import { type ServiceMetrics } from '../metrics/service-metrics';
import { type DeliveryResult } from './webhook-sender';
import {
  furthestBehind,
  type SubscriptionBacklog,
  type SubscriptionView,
} from './subscription-backlogs';

/** What the deliveries count. */
export interface WebhookMetrics {
  delivered(result: DeliveryResult, seconds: number): void;
}

/** Where the gauges read the subscriptions and their backlogs, once a scrape each. */
export interface WebhookGaugeSources {
  readonly subscriptions: () => Iterable<SubscriptionView>;
  /** Every subscription's backlog; none when the database does not answer. */
  readonly backlogs: () => Promise<readonly SubscriptionBacklog[]>;
  /** The most subscriptions with series of their own (WEBHOOKS_METRICS_SUBSCRIPTIONS). */
  readonly shown: number;
}

/**
 * The webhooks' metrics, a bounded number of series whatever the number of subscriptions: the
 * backlog gauges name at most `shown` subscriptions, the furthest behind (so that an alert on the
 * oldest undelivered event fires at any number), and two gauges count them all.
 */
export function registerWebhookMetrics(
  { registry }: ServiceMetrics,
  { subscriptions, backlogs, shown }: WebhookGaugeSources,
): WebhookMetrics {
  const registers = [registry];
  // A scrape reads the backlogs once for the gauges that show them.
  let reading: Promise<readonly SubscriptionBacklog[]> | undefined;
  const read = () =>
    (reading ??= backlogs().finally(() => {
      reading = undefined;
    }));
  registerBacklogGauges(
    registry,
    {
      label: 'subscription',
      pending: {
        name: 'webhook_pending_events',
        help: `Committed events each webhook subscription selects and has not yet acknowledged (paused and disabled ones included); the ${shown} subscriptions furthest behind (WEBHOOKS_METRICS_SUBSCRIPTIONS).`,
      },
      oldest: {
        name: 'webhook_oldest_undelivered_age_seconds',
        help: `Age of the oldest committed event each webhook subscription selects and has not yet acknowledged, 0 when none waits; the ${shown} subscriptions furthest behind (WEBHOOKS_METRICS_SUBSCRIPTIONS).`,
      },
    },
    async () =>
      furthestBehind(await read(), shown).map(({ subscription, events, oldest }) => ({
        name: subscription.id,
        backlog: { events, oldest },
      })),
  );
  new Gauge({
    name: 'webhook_subscriptions_behind',
    help: 'Active webhook subscriptions with a committed event waiting for them, however many the backlog gauges show.',
    registers,
    async collect() {
      this.set(
        (await read()).filter(
          ({ subscription, events }) => subscription.status === 'active' && events > 0,
        ).length,
      );
    },
  });
  new Gauge({
    name: 'webhook_subscriptions_disabled',
    help: 'Webhook subscriptions disabled after failing WEBHOOKS_DISABLE_AFTER_MS; ResumeWebhook enables one again.',
    registers,
    collect() {
      let disabled = 0;
      for (const { status } of subscriptions()) if (status === 'disabled') disabled++;
      this.set(disabled);
    },
  });
  const deliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook delivery attempts by result: delivered (2xx), failed (another status, a redirect, a broken connection), timeout (no whole answer within WEBHOOKS_TIMEOUT_MS), refused (the address check refused the target, or its host refused the connection).',
    labelNames: ['result'],
    registers,
  });
  const duration = new Histogram({
    name: 'webhook_delivery_duration_seconds',
    help: 'From sending a webhook delivery to the end of its answer (or its failure).',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers,
  });
  return {
    delivered(result, seconds) {
      deliveries.inc({ result });
      duration.observe(seconds);
    },
  };
}
