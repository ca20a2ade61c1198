import { createConnection } from 'mysql2/promise';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Response } from 'supertest';
import { DatabaseUnavailableError } from '../src/database/database-errors';
import { UnitOfWork } from '../src/database/unit-of-work';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { expectProblem } from './support/http-assertions';
import { describeOnEachDatabase } from './support/test-app';
import {
  AGENT_FIELDS,
  AGENT_ID_FIELDS,
  type AgentChange,
  changesOf,
  getTransactionPath,
  TransactionProbe,
  UPDATE_AGENTS,
  type WireBody,
} from './support/update-agents-cases';

/**
 * Issue item 4: many connections updating one transaction never lose an update, on either database,
 * and the history records every call in commit order; on MariaDB a real deadlock is retried.
 */

const CALLS = 50;

/** The fixture's agent members, as the history writes them: ids, names, or null. */
const FIXTURE = transactionRecord(0) as WireBody;

const isIdField = (field: string) => (AGENT_ID_FIELDS as readonly string[]).includes(field);

/** A value for `field` no other call and no fixture uses. */
const valueFor = (field: string, call: number) =>
  isIdField(field) ? 100000 + call : `Agent ${call} as ${field}`;

const changeOf = (record: WireBody, field: string): AgentChange | undefined =>
  changesOf(record).find((change) => change.field === field);

describeOnEachDatabase('concurrent UpdateAgents on one transaction', (context) => {
  const probe = new TransactionProbe(context);

  const SAME_MEMBERS = 7001;
  const ONE_MEMBER_EACH = 7002;
  const SPREAD = 7003;
  const DEADLOCK_FIRST = 7004;
  const DEADLOCK_SECOND = 7005;
  const HELD = 7006;

  beforeAll(async () => {
    await context.running.seed({
      requirements: CATALOGUE,
      transactions: [
        SAME_MEMBERS,
        ONE_MEMBER_EACH,
        SPREAD,
        DEADLOCK_FIRST,
        DEADLOCK_SECOND,
        HELD,
      ].map((id) => transactionRecord(id)),
    });
  });

  /**
   * Sends every body at once, each on its own connection, and waits for all the answers; checks that
   * all of them really were in flight together.
   */
  async function sendAllAtOnce(bodies: readonly WireBody[]): Promise<Response[]> {
    let inFlight = 0;
    let mostInFlight = 0;
    const responses = await Promise.all(
      bodies.map(async (body) => {
        inFlight++;
        mostInFlight = Math.max(mostInFlight, inFlight);
        try {
          return await context.http
            .post(UPDATE_AGENTS)
            .set('Content-Type', 'application/json')
            .set('Connection', 'close')
            .send(JSON.stringify(body));
        } finally {
          inFlight--;
        }
      }),
    );
    expect(mostInFlight).toBe(bodies.length);
    for (const response of responses) {
      expect({ status: response.status, body: response.text }).toEqual({ status: 204, body: '' });
    }
    return responses;
  }

  /**
   * The history is in commit order: its stamps never go back in time, and each record holds the
   * version its call left, one after the other up to the transaction's; each call's 204 named its
   * own version in its ETag.
   */
  function expectCommitOrder(
    history: readonly WireBody[],
    transaction: WireBody,
    responses: readonly Response[],
  ): void {
    const stamps = history.map((record) => Date.parse(record.stamp as string));
    expect(stamps.every(Number.isFinite)).toBe(true);
    expect(stamps).toEqual([...stamps].sort((a, b) => a - b));
    const ids = history.map((record) => record.assignment_id as number);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    const last = transaction.row_version as number;
    const versions = history.map((record) => record.row_version);
    expect(versions).toEqual(history.map((_, index) => last - history.length + 1 + index));
    const answered = responses
      .map((response) => Number(/^"\d+\.(\d+)"$/.exec(String(response.headers.etag))?.[1]))
      .sort((a, b) => a - b);
    expect(answered).toEqual(versions);
  }

  it(`loses none of ${CALLS} concurrent updates of brokerid and brokername; the history chains in commit order`, async () => {
    const bodies = Array.from({ length: CALLS }, (_, call) => ({
      transaction_id: SAME_MEMBERS,
      financetype: 'Cash',
      brokerid: 1000 + call,
      brokername: `Broker ${call}`,
    }));
    const responses = await sendAllAtOnce(bodies);

    const { transaction, history } = await probe.snapshot(SAME_MEMBERS);
    expect(history).toHaveLength(CALLS);
    expectCommitOrder(history, transaction, responses);
    let brokerid = FIXTURE.brokerid;
    let brokername = FIXTURE.brokername;
    for (const record of history) {
      expect(record.transaction_id).toBe(SAME_MEMBERS);
      expect(changesOf(record).map((change) => change.field)).toEqual(['brokerid', 'brokername']);
      const id = changeOf(record, 'brokerid')!;
      const name = changeOf(record, 'brokername')!;
      // Each record starts where the one before it ended…
      expect({ brokerid: id.before, brokername: name.before }).toEqual({ brokerid, brokername });
      // …and is one whole call: its id and its name came in the same body.
      expect(name.after).toBe(`Broker ${Number(id.after) - 1000}`);
      brokerid = id.after;
      brokername = name.after;
    }
    // Every call is in the history exactly once.
    expect(history.map((record) => changeOf(record, 'brokerid')!.after).sort()).toEqual(
      bodies.map((body) => body.brokerid).sort(),
    );
    // What is stored is what the last record wrote.
    expect({ brokerid: transaction.brokerid, brokername: transaction.brokername }).toEqual({
      brokerid,
      brokername,
    });
  });

  it(`stores every one of ${AGENT_FIELDS.length} concurrent calls that each set a different agent member`, async () => {
    const bodies = AGENT_FIELDS.map((field, call) => ({
      transaction_id: ONE_MEMBER_EACH,
      financetype: 'Cash',
      [field]: valueFor(field, call),
    }));
    const responses = await sendAllAtOnce(bodies);

    const { transaction, history } = await probe.snapshot(ONE_MEMBER_EACH);
    const expected = Object.fromEntries(
      AGENT_FIELDS.map((field, call) => [field, valueFor(field, call)]),
    );
    expect(Object.fromEntries(AGENT_FIELDS.map((field) => [field, transaction[field]]))).toEqual(
      expected,
    );
    expect(history).toHaveLength(AGENT_FIELDS.length);
    expectCommitOrder(history, transaction, responses);
    for (const record of history) {
      const changes = changesOf(record);
      expect(changes).toHaveLength(1);
      const [{ field, before, after }] = changes;
      expect({ field, before, after }).toEqual({
        field,
        before: FIXTURE[field],
        after: expected[field],
      });
    }
    expect(history.map((record) => changesOf(record)[0].field).sort()).toEqual(
      [...AGENT_FIELDS].sort(),
    );
  });

  it(`loses none of ${CALLS} concurrent calls spread over all agent members: each member's history chains`, async () => {
    const fieldOf = (call: number) => AGENT_FIELDS[call % AGENT_FIELDS.length];
    const bodies = Array.from({ length: CALLS }, (_, call) => ({
      transaction_id: SPREAD,
      financetype: 'Cash',
      [fieldOf(call)]: valueFor(fieldOf(call), call),
    }));
    const responses = await sendAllAtOnce(bodies);

    const { transaction, history } = await probe.snapshot(SPREAD);
    expect(history).toHaveLength(CALLS);
    expectCommitOrder(history, transaction, responses);
    const current = Object.fromEntries(AGENT_FIELDS.map((field) => [field, FIXTURE[field]]));
    for (const record of history) {
      const changes = changesOf(record);
      expect(changes).toHaveLength(1);
      const [{ field, before, after }] = changes;
      expect({ field, before }).toEqual({ field, before: current[field] });
      current[field] = after;
    }
    // Every call's value was written once, and what is stored is each member's last write.
    expect(history.map((record) => changesOf(record)[0].after).sort()).toEqual(
      bodies.map((body, call) => body[fieldOf(call)]).sort(),
    );
    expect(Object.fromEntries(AGENT_FIELDS.map((field) => [field, transaction[field]]))).toEqual(
      current,
    );
  });

  if (context.kind === 'mariadb') {
    it('retries a unit of work that InnoDB kills as a deadlock victim, and both units complete', async () => {
      const unitOfWork = context.running.app.get(UnitOfWork);
      const attempts: Record<string, number> = { first: 0, second: 0 };
      // Both units hold their first row before either asks for its second: a lock cycle.
      let arrived = 0;
      let allArrived!: () => void;
      const barrier = new Promise<void>((resolve) => (allArrived = resolve));
      const unit = (name: string, firstRow: number, secondRow: number) =>
        unitOfWork.write(async (manager) => {
          const attempt = ++attempts[name];
          const update = 'UPDATE sales_transaction SET status = ? WHERE transaction_id = ?';
          await manager.query(update, [`${name} ${attempt} on its first row`, firstRow]);
          if (++arrived === 2) allArrived();
          await barrier;
          await manager.query(update, [`${name} ${attempt} on its second row`, secondRow]);
          return attempt;
        });

      const finished = await Promise.all([
        unit('first', DEADLOCK_FIRST, DEADLOCK_SECOND),
        unit('second', DEADLOCK_SECOND, DEADLOCK_FIRST),
      ]);

      // One unit ran once; the victim ran again, and its second run committed last.
      expect([...finished].sort()).toEqual([1, 2]);
      expect(finished).toEqual([attempts.first, attempts.second]);
      const victim = attempts.first === 2 ? 'first' : 'second';
      const [victimFirst, victimSecond] =
        victim === 'first' ? [DEADLOCK_FIRST, DEADLOCK_SECOND] : [DEADLOCK_SECOND, DEADLOCK_FIRST];
      const status = async (id: number) =>
        (await context.http.get(getTransactionPath(id)).expect(200)).body.status as string;
      expect({
        [victimFirst]: await status(victimFirst),
        [victimSecond]: await status(victimSecond),
      }).toEqual({
        [victimFirst]: `${victim} 2 on its first row`,
        [victimSecond]: `${victim} 2 on its second row`,
      });
    });

    it('answers 503 with Retry-After, in bounded time, to an update of a row another session holds, and does not apply it later', async () => {
      const holder = await createConnection({
        uri: context.database.url.replace(/^mariadb:/, 'mysql:'),
      });
      let response: Response;
      let ms: number;
      try {
        await holder.query('START TRANSACTION');
        await holder.query('SELECT * FROM sales_transaction WHERE transaction_id = ? FOR UPDATE', [
          HELD,
        ]);
        const started = performance.now();
        response = await context.http
          .post(UPDATE_AGENTS)
          .set('Content-Type', 'application/json')
          .send(JSON.stringify({ transaction_id: HELD, financetype: 'Cash', brokerid: 4321 }));
        ms = performance.now() - started;
      } finally {
        await holder.query('ROLLBACK');
        await holder.end();
      }
      expectProblem(response, 503, { modelState: false });
      expect(response.headers['retry-after']).toMatch(/^\d+$/);
      // DATABASE_TIMEOUT_MS is 5 s by default.
      expect(ms).toBeLessThan(5000 + 1500);
      // The client was told its update was not made: it must not be made once the lock is released.
      await sleep(1000);
      const { transaction, history } = await probe.snapshot(HELD);
      expect(history).toEqual([]);
      expect(transaction.brokerid).toBe(FIXTURE.brokerid);
    }, 20000);
  }

  it('gives up on a unit of work that meets contention on every attempt, after a bounded number of attempts, as unavailable', async () => {
    const unitOfWork = context.running.app.get(UnitOfWork);
    let attempts = 0;
    const started = performance.now();
    const failure: unknown = await unitOfWork
      .write(() => {
        attempts++;
        return Promise.reject(
          Object.assign(new Error('Deadlock found when trying to get lock'), {
            code: 'ER_LOCK_DEADLOCK',
          }),
        );
      })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(DatabaseUnavailableError);
    expect((failure as DatabaseUnavailableError).status).toBe(503);
    expect(attempts).toBeGreaterThan(1);
    expect(attempts).toBeLessThanOrEqual(10);
    expect(performance.now() - started).toBeLessThan(5000);
  });
});
