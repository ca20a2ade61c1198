import { type ReactedEvent } from './module-files';

/**
 * How a generated suite makes another module publish the event its module reacts to: through that
 * module's own door into the service (a request, an import), as a client would. An event this table
 * does not know is published as its module would publish it (Scenario.publish, with the example its
 * declaration gives); a suite can then be changed to stimulate that module instead.
 */
export interface Stimulus {
  /** What the suite imports for it: names by module path (from test/). */
  readonly imports: Readonly<Record<string, readonly string[]>>;
  /** Scopes of the key it calls a route with (the suite's STIMULATOR); none when it calls none. */
  readonly scopes: readonly string[];
  /** A statement of the suite's top level (a counter of values it changes each time). */
  readonly declaration?: string;
  /** A statement of the suite's beforeAll: the rows it needs. */
  readonly setup?: string;
  /** An expression: the Scenario's stimulated state, the event published once. */
  readonly stimulated: string;
  /** What it does, in the test's name. */
  readonly description: string;
}

/** A transaction the suite seeds for the stimuli that change one. */
const TRANSACTION = 4242;

const KNOWN: Readonly<Record<string, Stimulus>> = {
  'transaction.agents-changed': {
    imports: { './support/fixtures': ['CATALOGUE', 'transactionRecord'] },
    scopes: ['transactions:write'],
    declaration:
      '/** The broker each UpdateAgents stimulus sets: another each time, so each changes the chain. */\nlet broker = 100;',
    setup: `await context.running.seed({ requirements: CATALOGUE, transactions: [transactionRecord(${TRANSACTION})] });`,
    stimulated: `new Scenario(() => context.running.app).stimulate(() =>
        context.http
          .post('/api/Transaction/UpdateAgents')
          .set(STIMULATOR)
          .send({ transaction_id: ${TRANSACTION}, financetype: 'Cash', brokerid: (broker += 1) })
          .expect(204),
      )`,
    description: 'an UpdateAgents that changes the broker',
  },
  'data.imported': {
    imports: { './support/fixtures': ['CATALOGUE', 'transactionRecord'] },
    scopes: [],
    stimulated: `new Scenario(() => context.running.app).stimulate(() =>
        context.running.seed({ requirements: CATALOGUE, transactions: [transactionRecord(${TRANSACTION + 1})] }),
      )`,
    description: 'an import run',
  },
};

/** The stimulus of the suite's test of the reaction to `event`. */
export function stimulusOf(event: ReactedEvent): Stimulus {
  return (
    KNOWN[event.routingKey] ?? {
      imports: {},
      scopes: [],
      stimulated: `new Scenario(() => context.running.app).publish(${event.constant})`,
      description: `${event.constant} published as the ${event.folder} module would`,
    }
  );
}
