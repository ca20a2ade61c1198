import { type PendingOfKind } from '../event-relay/outbox-store';
import { webhookCheckpoint } from './delivery-ledger';
import {
  furthestBehind,
  purgeHeldAt,
  subscriptionBacklogs,
  type SubscriptionView,
} from './subscription-backlogs';

const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second));

const waiting = (
  id: string,
  routingKey: string,
  events: number,
  first: number,
  oldest: number,
): PendingOfKind => ({
  consumer: id === '' ? '' : webhookCheckpoint(id),
  routingKey,
  events,
  first,
  oldest: at(oldest),
});

const every: SubscriptionView = { id: 'every-kind', status: 'active' };
const agents: SubscriptionView = { id: 'agents-only', kinds: ['agents'], status: 'active' };
const idle: SubscriptionView = { id: 'caught-up', status: 'active' };
const paused: SubscriptionView = { id: 'paused-one', status: 'paused' };

describe('subscription backlogs, from what waits for each webhook checkpoint kind by kind', () => {
  const pending = [
    waiting('every-kind', 'agents', 3, 11, 20),
    waiting('every-kind', 'requirements', 2, 10, 15),
    waiting('agents-only', 'agents', 1, 14, 30),
    waiting('agents-only', 'requirements', 5, 12, 10),
    waiting('paused-one', 'agents', 7, 4, 5),
    // Committed, without a position yet: waiting for every subscription of its kind.
    waiting('', 'agents', 2, 0, 40),
  ];

  it('counts for each subscription only the events of its kinds, those not positioned yet included', () => {
    const backlogs = subscriptionBacklogs([every, agents, idle, paused], pending);
    expect(
      backlogs.map(({ subscription, events, first, oldest }) => [
        subscription.id,
        events,
        first,
        oldest,
      ]),
    ).toEqual([
      ['every-kind', 7, 10, at(15)],
      ['agents-only', 3, 14, at(30)],
      ['caught-up', 2, undefined, at(40)],
      ['paused-one', 9, 4, at(5)],
    ]);
  });

  it('shows the subscriptions furthest behind first, then the most events, and no more than asked', () => {
    const backlogs = subscriptionBacklogs([every, agents, idle, paused], pending.slice(0, 5));
    expect(furthestBehind(backlogs, 3).map(({ subscription }) => subscription.id)).toEqual([
      'paused-one',
      'every-kind',
      'agents-only',
    ]);
    // Fewer subscriptions than asked for: every one, the caught-up last.
    expect(furthestBehind(backlogs, 10).map(({ subscription }) => subscription.id)).toEqual([
      'paused-one',
      'every-kind',
      'agents-only',
      'caught-up',
    ]);
  });

  it('holds the purge below the first waiting event of an active subscription, while its oldest is young enough', () => {
    const positioned = pending.slice(0, 5);
    const backlogs = subscriptionBacklogs([every, agents, idle, paused], positioned);
    // The paused one holds nothing; the lowest active hold is every-kind's, below its event 10.
    expect(purgeHeldAt(backlogs, at(0).getTime())).toBe(9);
    // every-kind's oldest (15 s) is now too old to hold: agents-only's event 14 holds.
    expect(purgeHeldAt(backlogs, at(16).getTime())).toBe(13);
    expect(purgeHeldAt(backlogs, at(31).getTime())).toBeUndefined();
    expect(purgeHeldAt(subscriptionBacklogs([idle], positioned), 0)).toBeUndefined();
  });
});
