import { Gauge, type Registry } from 'prom-client';
import { type Backlog } from './outbox-store';

/** One consumer's backlog, named as the gauges' label names it. */
export interface NamedBacklog {
  readonly name: string;
  readonly backlog: Backlog;
}

/** The two gauges of a kind of consumer: their names and helps, and the label naming a consumer. */
export interface BacklogGauges {
  readonly label: string;
  readonly pending: { readonly name: string; readonly help: string };
  readonly oldest: { readonly name: string; readonly help: string };
}

/**
 * Registers the gauges of consumers' backlogs, read from `backlogs` once a scrape: how many committed
 * events each consumer has not taken, and how old the oldest of them is (0 when none waits).
 */
export function registerBacklogGauges(
  registry: Registry,
  { label, pending, oldest }: BacklogGauges,
  backlogs: () => Promise<readonly NamedBacklog[]>,
): void {
  const registers = [registry];
  // A scrape collects both gauges at once: they share one read of the backlogs.
  let reading: Promise<readonly NamedBacklog[]> | undefined;
  const read = () =>
    (reading ??= backlogs().finally(() => {
      reading = undefined;
    }));
  new Gauge({
    ...pending,
    labelNames: [label],
    registers,
    async collect() {
      this.reset();
      for (const { name, backlog } of await read()) this.set({ [label]: name }, backlog.events);
    },
  });
  new Gauge({
    ...oldest,
    labelNames: [label],
    registers,
    async collect() {
      this.reset();
      const now = Date.now();
      for (const { name, backlog } of await read())
        this.set(
          { [label]: name },
          backlog.oldest ? Math.max(0, now - backlog.oldest.getTime()) / 1000 : 0,
        );
    },
  });
}
