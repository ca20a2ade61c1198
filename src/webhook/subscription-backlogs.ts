import { type PendingOfKind } from '../event-relay/outbox-store';
import { type WebhookStatus } from './entities';
import { webhookCheckpoint } from './delivery-ledger';

/** A subscription as the dispatcher knows it: enough to say what waits for it. */
export interface SubscriptionView {
  readonly id: string;
  /** The routing keys of the events it takes; absent for every kind. */
  readonly kinds?: readonly string[];
  readonly status: WebhookStatus;
}

/** What waits for one subscription: the events of its kinds past its checkpoint. */
export interface SubscriptionBacklog {
  readonly subscription: SubscriptionView;
  readonly events: number;
  /** The first positioned one, in position order; absent when none is positioned yet. */
  readonly first?: number;
  readonly oldest?: Date;
}

/**
 * Each subscription's backlog, from what waits for every webhook checkpoint kind by kind (the
 * events without a position, consumer `''`, wait for all): only its kinds count.
 */
export function subscriptionBacklogs(
  subscriptions: Iterable<SubscriptionView>,
  pending: readonly PendingOfKind[],
): SubscriptionBacklog[] {
  const byConsumer = new Map<string, PendingOfKind[]>();
  for (const row of pending) {
    const rows = byConsumer.get(row.consumer);
    if (rows) rows.push(row);
    else byConsumer.set(row.consumer, [row]);
  }
  const unpositioned = byConsumer.get('') ?? [];
  const backlogs: SubscriptionBacklog[] = [];
  for (const subscription of subscriptions) {
    const { kinds } = subscription;
    const selected = kinds && new Set(kinds);
    let events = 0;
    let first: number | undefined;
    let oldest: Date | undefined;
    for (const row of [
      ...(byConsumer.get(webhookCheckpoint(subscription.id)) ?? []),
      ...unpositioned,
    ]) {
      if (selected && !selected.has(row.routingKey)) continue;
      events += row.events;
      if (row.consumer !== '' && (first === undefined || row.first < first)) first = row.first;
      if (oldest === undefined || row.oldest < oldest) oldest = row.oldest;
    }
    backlogs.push({ subscription, events, first, oldest });
  }
  return backlogs;
}

/**
 * The `count` backlogs to show, furthest behind first: the oldest event waiting longest, then the
 * most events; subscriptions caught up fill what is left, so that while there are no more than
 * `count` every one is shown.
 */
export function furthestBehind(
  backlogs: readonly SubscriptionBacklog[],
  count: number,
): SubscriptionBacklog[] {
  const age = (backlog: SubscriptionBacklog) =>
    backlog.oldest?.getTime() ?? Number.POSITIVE_INFINITY;
  return [...backlogs].sort((a, b) => age(a) - age(b) || b.events - a.events).slice(0, count);
}

/**
 * The position active subscriptions hold the purge at: below the first event each has waiting, as
 * long as the oldest of them is younger than `since`: a subscription that always fails, resumed
 * before it is disabled, would otherwise keep every event in the outbox forever. Undefined when
 * none holds.
 */
export function purgeHeldAt(
  backlogs: readonly SubscriptionBacklog[],
  since: number,
): number | undefined {
  let held: number | undefined;
  for (const { subscription, first, oldest } of backlogs) {
    if (subscription.status !== 'active' || first === undefined) continue;
    if (oldest !== undefined && oldest.getTime() < since) continue;
    if (held === undefined || first - 1 < held) held = first - 1;
  }
  return held;
}
