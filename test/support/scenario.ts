import { type INestApplication, Injectable, Module, type OnModuleInit } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import { UnitOfWork } from '../../src/database/unit-of-work';
import { type ReceivedEvent } from '../../src/events/event-handler.decorator';
import { Outbox } from '../../src/events/outbox';
import { type IntegrationEventType } from '../../src/events/integration-event';
import { ExactDecimal, JsonCodec, wireModelOf } from '../../src/wire';

/** How long `toArrive` waits, unless told. */
const ARRIVAL_MS = 10_000;
const POLL_MS = 20;

const codec = new JsonCodec();

/**
 * An event's data as its JSON carries it, for comparing with what a client sent: exact decimals (as
 * handlers receive them) as numbers, dates as ISO text.
 */
export function asJson(data: object): unknown {
  return JSON.parse(
    JSON.stringify(data, (_, value: unknown) =>
      value instanceof ExactDecimal ? value.toNumber() : value,
    ),
  );
}

/**
 * Scenario's consumer of the events, as the outbox counts consumers: every kind is stored, from the
 * service's start (a restarted service's first events too). Without it, an event no broker, feed or
 * handler of its kind takes is not stored, and a scenario would wait for it in vain.
 */
@Injectable()
class EveryEventObserved implements OnModuleInit {
  constructor(private readonly outbox: Outbox) {}

  onModuleInit(): void {
    this.outbox.enable();
  }
}

/** What a service mounts for Scenario to observe its events. */
@Module({ providers: [EveryEventObserved] })
export class ScenarioModule {}

/**
 * An event-driven test in the words of Spring Modulith's Scenario: stimulate the application, then
 * wait for an event of a type, matching what the test expects, to commit.
 *
 *   const event = await new Scenario(running.app)
 *     .stimulate(() => running.http.post(UPDATE).send(body).expect(204))
 *     .andWaitForEventOfType(TEST_LEDGER_SPLITS_CHANGED)
 *     .matching((event) => event.subject === '1001')
 *     .toArrive();
 *
 * It reads the events committed after the stimulus began from the outbox, as the relay does, so it
 * sees what any module publishes, in process or not, in a service that mounts ScenarioModule (as
 * RunningApp does).
 */
export class Scenario {
  /** `app`: the application, or what answers the current one (a suite that restarts its service). */
  constructor(private readonly app: INestApplication | (() => INestApplication)) {}

  /** Runs `stimulus` (a request, an import) once the events before it are set aside. */
  stimulate(stimulus: () => Promise<unknown>): Stimulated {
    return new Stimulated(() => this.current().get(DataSource), stimulus);
  }

  /**
   * Publishes an event as its module would, in a unit of work of its own (by default the example its
   * declaration gives): the stimulus of a reaction to an event that no request of the suite makes,
   * as Spring Modulith's `Scenario.publish` is.
   */
  publish<T extends object>(
    type: IntegrationEventType<T>,
    data: T = type.example,
    subject: string | undefined = type.exampleSubject,
  ): Stimulated {
    return this.stimulate(() =>
      this.current()
        .get(UnitOfWork)
        .write((_manager, publish) => {
          publish({ type, subject, time: new Date(), data });
          return Promise.resolve();
        }),
    );
  }

  private current(): INestApplication {
    return typeof this.app === 'function' ? this.app() : this.app;
  }
}

export class Stimulated {
  private readonly done: Promise<number>;

  constructor(
    private readonly dataSource: () => DataSource,
    stimulus: () => Promise<unknown>,
  ) {
    this.done = (async () => {
      const mark = await this.lastSequence();
      await stimulus();
      return mark;
    })();
  }

  andWaitForEventOfType<T extends object>(type: IntegrationEventType<T>): AwaitedEvent<T> {
    return new AwaitedEvent(type, (after) => this.eventsOf(type, after), this.done);
  }

  /** The last event stored so far: the stimulus's come after it. */
  private async lastSequence(): Promise<number> {
    const [{ last }] = await this.dataSource().query<[{ last: number | string | null }]>(
      'SELECT MAX(sequence) AS last FROM event_outbox',
    );
    return Number(last ?? 0);
  }

  private async eventsOf<T extends object>(
    type: IntegrationEventType<T>,
    after: number,
  ): Promise<ReceivedEvent<T>[]> {
    const rows = await this.dataSource().query<{ body: unknown }[]>(
      'SELECT body FROM event_outbox WHERE sequence > ? AND routing_key = ? ORDER BY sequence',
      [after, type.routingKey],
    );
    return rows.map(({ body }) => {
      const { data, ...attributes } = (typeof body === 'string' ? JSON.parse(body) : body) as Omit<
        ReceivedEvent<T>,
        'data'
      > & { data: unknown };
      return {
        ...attributes,
        data: codec.decode(JSON.stringify(data), wireModelOf(type.payload)) as T,
      };
    });
  }
}

export class AwaitedEvent<T extends object> {
  private readonly filters: ((event: ReceivedEvent<T>) => boolean)[] = [];

  constructor(
    private readonly type: IntegrationEventType<T>,
    private readonly read: (after: number) => Promise<ReceivedEvent<T>[]>,
    private readonly done: Promise<number>,
  ) {}

  /** Only an event for which `filter` holds will do. */
  matching(filter: (event: ReceivedEvent<T>) => boolean): this {
    this.filters.push(filter);
    return this;
  }

  /** The first matching event committed after the stimulus began; fails, naming what did arrive. */
  async toArrive(timeoutMs = ARRIVAL_MS): Promise<ReceivedEvent<T>> {
    const after = await this.done;
    const until = Date.now() + timeoutMs;
    let seen: ReceivedEvent<T>[];
    do {
      seen = await this.read(after);
      const found = seen.find((event) => this.filters.every((filter) => filter(event)));
      if (found) return found;
      await sleep(POLL_MS);
    } while (Date.now() < until);
    throw new Error(
      `No matching ${this.type.type} event committed within ${timeoutMs} ms; ${seen.length} of that type did: ${JSON.stringify(seen.map((event) => event.data))}`,
    );
  }

  /**
   * The matching events committed after the stimulus began, once `done` holds of them (a batched
   * reaction's last batch arrived…); fails, naming what did arrive, when it does not in time.
   */
  async toArriveUntil(
    done: (events: readonly ReceivedEvent<T>[]) => boolean,
    timeoutMs = ARRIVAL_MS,
  ): Promise<ReceivedEvent<T>[]> {
    const after = await this.done;
    const until = Date.now() + timeoutMs;
    let seen: ReceivedEvent<T>[];
    do {
      seen = (await this.read(after)).filter((event) =>
        this.filters.every((filter) => filter(event)),
      );
      if (done(seen)) return seen;
      await sleep(POLL_MS);
    } while (Date.now() < until);
    throw new Error(
      `The ${this.type.type} events committed within ${timeoutMs} ms do not complete: ${JSON.stringify(seen.map((event) => event.data))}`,
    );
  }

  /** The matching events of the type committed after the stimulus, once `ms` have passed. */
  async allWithin(ms: number): Promise<ReceivedEvent<T>[]> {
    const after = await this.done;
    await sleep(ms);
    return (await this.read(after)).filter((event) =>
      this.filters.every((filter) => filter(event)),
    );
  }
}
