import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { version } from '../package.json';
import { apiKeyEntry } from './support/auth-credentials';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { expectProblem } from './support/http-assertions';
import { jsonLines, ServiceProcess, TemporaryDirectories } from './support/processes';
import {
  describeOnEachDatabase,
  describeOnMariaDb,
  describeOnSqlite,
  RunningApp,
  type SuiteContext,
} from './support/test-app';
import {
  createTestDatabase,
  type DatabaseKind,
  onEachDatabaseAtOnce,
  type TestDatabase,
  testDatabaseKinds,
} from './support/test-database';
import { type DeliveredEvent, until, WebhookReceiver } from './support/webhook-receiver';

/**
 * Webhooks (WEBHOOKS=true) as partners receive them: real receivers on loopback ports, every
 * delivery verified with the standardwebhooks package as a partner verifies it; every acknowledged
 * UpdateAgents delivered once per webhook-id to each subscriber, in commit order per transaction; a
 * failing subscriber holding up nobody and getting everything once it answers; pause, resume,
 * rotation, disabling and the address checks; the subscriptions' API and its refusals.
 */

const BASE = '/api/Webhook';
const UPDATE = '/api/Transaction/UpdateAgents';
const AGENTS_CHANGED = 'property-sales.transaction.agents-changed';
/** Loopback receivers over http://; retries at once, then 10 ms, 600 ms, 3.6 s… apart. */
const WEBHOOKS_ON = {
  WEBHOOKS: 'true',
  WEBHOOKS_ALLOW_HTTP: 'true',
  WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOKS_RETRY_BASE_MS: '2',
  WEBHOOKS_TIMEOUT_MS: '2000',
  EVENTS_POLL_MS: '50',
};
const TRANSACTIONS = [1, 2, 3];

interface Subscription {
  readonly id: string;
  readonly secret: string;
  readonly status: string;
  readonly [member: string]: unknown;
}

async function subscribe(
  context: SuiteContext,
  body: Record<string, unknown>,
): Promise<Subscription> {
  const response = await context.http.post(`${BASE}/CreateWebhook`).send(body).expect(201);
  return response.body as Subscription;
}

/**
 * The agents-changed events of the outbox, in position order (the order the broker gets them) once
 * every one has its position.
 */
async function agentsChangedIds(context: SuiteContext): Promise<string[]> {
  for (;;) {
    const rows = await context.running.app
      .get(DataSource)
      .query<{ event_id: string; position: string | null }[]>(
        'SELECT event_id, position FROM event_outbox WHERE routing_key = ? ORDER BY position',
        ['transaction.agents-changed'],
      );
    if (rows.every(({ position }) => position !== null))
      return rows.map(({ event_id }) => event_id);
    await sleep(25);
  }
}

/** UpdateAgents `rounds` times on each transaction, each with a new broker id; the ids in order. */
async function changeAgents(context: SuiteContext, rounds: number, from = 100): Promise<void> {
  for (let round = 0; round < rounds; round++)
    for (const transaction of TRANSACTIONS)
      await context.http
        .post(UPDATE)
        .send({ transaction_id: transaction, financetype: 'Cash', brokerid: from + round })
        .expect(204);
}

/** The broker ids each transaction's acknowledged AgentsChanged carried, in delivery order. */
function brokersByTransaction(events: readonly DeliveredEvent[]): Record<string, unknown[]> {
  const byTransaction: Record<string, unknown[]> = {};
  for (const event of events.filter(({ type }) => type === AGENTS_CHANGED))
    (byTransaction[event.subject!] ??= []).push(event.data.brokerid);
  return byTransaction;
}

const metricsOf = async (context: SuiteContext) =>
  (await context.http.get('/metrics').expect(200)).text;

/**
 * The subscription as GetWebhook reads it once `written` holds: what its deliveries did is written a
 * few records at a time, just after the subscriber's answer.
 */
async function readOnceWritten(
  context: SuiteContext,
  id: string,
  written: (subscription: Subscription) => boolean,
): Promise<Subscription> {
  let read: Subscription | undefined;
  await until(async () => {
    read = (await context.http.get(`${BASE}/GetWebhook/${id}`).expect(200)).body as Subscription;
    return written(read);
  }, `the record of subscription ${id}`);
  return read!;
}

describeOnEachDatabase(
  'webhooks',
  (context) => {
    const receivers: WebhookReceiver[] = [];
    const receiver = async () => {
      const started = await WebhookReceiver.start();
      receivers.push(started);
      return started;
    };

    beforeAll(async () => {
      await context.running.seed({
        requirements: CATALOGUE,
        transactions: TRANSACTIONS.map((id) => transactionRecord(id)),
      });
    });
    afterAll(async () => {
      await Promise.all(receivers.map((started) => started.close()));
    });

    it('delivers every acknowledged UpdateAgents once per webhook-id to each subscriber, signed, in commit order per transaction', async () => {
      const all = await receiver();
      const agents = await receiver();
      const everything = await subscribe(context, { url: all.url, description: 'every event' });
      const selective = await subscribe(context, { url: agents.url, types: [AGENTS_CHANGED] });
      expect(everything.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      const before = new Set(await agentsChangedIds(context));
      await changeAgents(context, 4);
      const committed = (await agentsChangedIds(context)).filter((id) => !before.has(id));
      expect(committed).toHaveLength(4 * TRANSACTIONS.length);
      const has = (events: readonly DeliveredEvent[]) => {
        const ids = new Set(events.map(({ id }) => id));
        return committed.every((id) => ids.has(id));
      };
      await until(() => has(all.verified(everything.secret)), 'every event at the first receiver');
      await until(() => has(agents.verified(selective.secret)), 'the AgentsChanged at the second');

      for (const [events, deliveries] of [
        [all.verified(everything.secret), all.acknowledged],
        [agents.verified(selective.secret), agents.acknowledged],
      ] as const) {
        const ids = events.map(({ id }) => id);
        // Once per webhook-id, which is the CloudEvents id.
        expect(new Set(ids).size).toBe(ids.length);
        expect(deliveries.map(({ headers }) => headers['webhook-id'])).toEqual(ids);
        // In commit order per transaction: each broker id after the one before.
        expect(brokersByTransaction(events)).toEqual({
          1: [100, 101, 102, 103],
          2: [100, 101, 102, 103],
          3: [100, 101, 102, 103],
        });
        for (const { headers } of deliveries) {
          expect(headers['content-type']).toBe('application/cloudevents+json; charset=utf-8');
          expect(headers['user-agent']).toBe(`property-sales-webhooks/${version}`);
          expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
        }
      }
      // The selective one gets its type alone; the other gets the reacting module's events too.
      expect(agents.verified(selective.secret).every(({ type }) => type === AGENTS_CHANGED)).toBe(
        true,
      );
      expect(all.verified(everything.secret).some(({ type }) => type !== AGENTS_CHANGED)).toBe(
        true,
      );
      // A signature made with another secret does not verify.
      const [first] = agents.acknowledged;
      expect(() =>
        new Webhook(everything.secret).verify(first.body, first.headers as Record<string, string>),
      ).toThrow();
      // Its read says how far it came, once the deliveries' records are written (a few at a time),
      // and never shows the secret.
      const read = await readOnceWritten(
        context,
        selective.id,
        ({ last_delivered_event_id }) => last_delivered_event_id === committed.at(-1),
      );
      expect(read).toEqual({
        id: selective.id,
        // Made without authentication: the operator's.
        owner: null,
        url: agents.url,
        types: [AGENTS_CHANGED],
        description: null,
        status: 'active',
        disabled_reason: null,
        created_at: selective.created_at,
        updated_at: selective.updated_at,
        last_delivered_event_id: committed.at(-1),
        failing_since: null,
      });
      const metrics = await metricsOf(context);
      expect(metrics).toMatch(/^webhook_deliveries_total\{result="delivered"\} \d+$/m);
      expect(metrics).toContain(`webhook_pending_events{subscription="${selective.id}"} 0`);
      await context.http.delete(`${BASE}/DeleteWebhook/${everything.id}`).expect(204);
      await context.http.delete(`${BASE}/DeleteWebhook/${selective.id}`).expect(204);
    });

    it('holds up nobody with a subscriber answering 500 for a while, which gets everything afterwards', async () => {
      const failing = await receiver();
      const healthy = await receiver();
      let failingStill = true;
      failing.answer = () => (failingStill ? 500 : 204);
      const bad = await subscribe(context, { url: failing.url, types: [AGENTS_CHANGED] });
      const good = await subscribe(context, { url: healthy.url, types: [AGENTS_CHANGED] });
      const before = new Set(await agentsChangedIds(context));
      await changeAgents(context, 2, 200);
      const committed = (await agentsChangedIds(context)).filter((id) => !before.has(id));
      // The healthy one has everything while the other still fails.
      await until(
        () => healthy.verified(good.secret).length === committed.length,
        'the healthy receiver',
      );
      const failingRead = await readOnceWritten(
        context,
        bad.id,
        ({ failing_since }) => failing_since !== null,
      );
      expect(failingRead).toMatchObject({
        status: 'active',
        failing_since: expect.any(String),
      });
      expect(failing.deliveries.some(({ status }) => status === 500)).toBe(true);
      // Answering from now on, at its next attempt, the failing one is sent again every event it
      // was sent first, until acknowledged.
      failingStill = false;
      await until(
        () => failing.verified(bad.secret).length === committed.length,
        'the failing receiver, once it answers',
      );
      const events = failing.verified(bad.secret);
      expect(events.map(({ id }) => id)).toEqual(committed);
      expect(brokersByTransaction(events)).toEqual({ 1: [200, 201], 2: [200, 201], 3: [200, 201] });
      const retried = failing.deliveries.filter(({ status }) => status === 500);
      expect(new Set(retried.map(({ headers }) => headers['webhook-id']))).toEqual(
        new Set([committed[0]]),
      );
      const recovered = await readOnceWritten(
        context,
        bad.id,
        ({ failing_since }) => failing_since === null,
      );
      expect(recovered).toMatchObject({ status: 'active', failing_since: null });
      expect(await metricsOf(context)).toMatch(
        /^webhook_deliveries_total\{result="failed"\} \d+$/m,
      );
      await context.http.delete(`${BASE}/DeleteWebhook/${bad.id}`).expect(204);
      await context.http.delete(`${BASE}/DeleteWebhook/${good.id}`).expect(204);
    });

    it('follows no redirect: a 3xx is a failed delivery, retried at the same URL', async () => {
      const elsewhere = await receiver();
      const redirecting = await receiver();
      redirecting.answer = () => 307;
      redirecting.headers = { location: elsewhere.url };
      const subscription = await subscribe(context, {
        url: redirecting.url,
        types: [AGENTS_CHANGED],
      });
      await changeAgents(context, 1, 250);
      await until(() => redirecting.deliveries.length >= 2, 'a delivery and its retry');
      expect(elsewhere.deliveries).toEqual([]);
      const read = await context.http.get(`${BASE}/GetWebhook/${subscription.id}`).expect(200);
      expect(read.body).toMatchObject({ failing_since: expect.any(String) as unknown });
      await context.http.delete(`${BASE}/DeleteWebhook/${subscription.id}`).expect(204);
    });

    it('counts a subscriber silent past WEBHOOKS_TIMEOUT_MS as a time-out and a closed port as refused, retrying both', async () => {
      const counts = async () => {
        const text = await metricsOf(context);
        const count = (result: string) =>
          Number(
            new RegExp(`^webhook_deliveries_total\\{result="${result}"\\} (\\d+)$`, 'm').exec(
              text,
            )?.[1] ?? 0,
          );
        return { timeout: count('timeout'), refused: count('refused') };
      };
      const before = await counts();
      const silent = await receiver();
      let answered = 0;
      silent.answer = () => (answered++ === 0 ? 'hang' : 204);
      const closed = await WebhookReceiver.start();
      const closedUrl = closed.url;
      await closed.close();
      const slow = await subscribe(context, { url: silent.url, types: [AGENTS_CHANGED] });
      const nowhere = await subscribe(context, { url: closedUrl, types: [AGENTS_CHANGED] });
      await changeAgents(context, 1, 280);
      await until(async () => {
        const now = await counts();
        return now.timeout > before.timeout && now.refused > before.refused + 1;
      }, 'a time-out and refused connections');
      // The silent one's first delivery is sent again once it timed out, and taken.
      await until(
        () => silent.verified(slow.secret).length === 3,
        'the deliveries after the time-out',
      );
      expect(new Set(silent.deliveries.map(({ headers }) => headers['webhook-id'])).size).toBe(3);
      await context.http.delete(`${BASE}/DeleteWebhook/${slow.id}`).expect(204);
      await context.http.delete(`${BASE}/DeleteWebhook/${nowhere.id}`).expect(204);
    });

    it('delivers nothing while paused, and what was missed once resumed', async () => {
      const target = await receiver();
      const subscription = await subscribe(context, { url: target.url, types: [AGENTS_CHANGED] });
      const paused = await context.http.post(`${BASE}/PauseWebhook/${subscription.id}`).expect(200);
      expect(paused.body).toMatchObject({ status: 'paused' });
      await changeAgents(context, 1, 300);
      await sleep(500);
      expect(target.deliveries).toEqual([]);
      expect(await metricsOf(context)).toContain(
        `webhook_pending_events{subscription="${subscription.id}"} 3`,
      );
      const resumed = await context.http
        .post(`${BASE}/ResumeWebhook/${subscription.id}`)
        .expect(200);
      expect(resumed.body).toMatchObject({ status: 'active' });
      await until(() => target.verified(subscription.secret).length === 3, 'the missed events');
      expect(brokersByTransaction(target.verified(subscription.secret))).toEqual({
        1: [300],
        2: [300],
        3: [300],
      });
      await context.http.delete(`${BASE}/DeleteWebhook/${subscription.id}`).expect(204);
    });

    it('signs with both secrets during the grace period after a rotation', async () => {
      const target = await receiver();
      const subscription = await subscribe(context, { url: target.url, types: [AGENTS_CHANGED] });
      const rotated = (
        await context.http.post(`${BASE}/RotateWebhookSecret/${subscription.id}`).expect(200)
      ).body as Subscription;
      expect(rotated.secret).toMatch(/^whsec_/);
      expect(rotated.secret).not.toBe(subscription.secret);
      await changeAgents(context, 1, 400);
      await until(() => target.acknowledged.length === 3, 'three deliveries');
      for (const { headers } of target.acknowledged)
        expect(String(headers['webhook-signature']).split(' ')).toHaveLength(2);
      // Verified with either secret, as the package reads several signatures.
      expect(target.verified(subscription.secret)).toEqual(target.verified(rotated.secret));
      await context.http.delete(`${BASE}/DeleteWebhook/${subscription.id}`).expect(204);
    });

    it('manages subscriptions: reads, lists, updates, deletes, and answers 404 and 400 in the error format', async () => {
      const target = await receiver();
      const created = await context.http
        .post(`${BASE}/CreateWebhook`)
        .send({ url: target.url, description: 'CRM' })
        .expect(201);
      const subscription = created.body as Subscription;
      expect(created.headers.location).toBe(`/api/Webhook/GetWebhook/${subscription.id}`);
      expect(subscription).toMatchObject({ types: [], description: 'CRM', status: 'active' });
      const listed = await context.http.get(`${BASE}/ListWebhooks`).expect(200);
      expect(listed.body).toContainEqual(
        expect.not.objectContaining({ secret: expect.anything() }) as unknown,
      );
      expect((listed.body as Subscription[]).map(({ id }) => id)).toContain(subscription.id);
      const updated = await context.http
        .post(`${BASE}/UpdateWebhook/${subscription.id}`)
        .send({ types: [AGENTS_CHANGED], description: null })
        .expect(200);
      expect(updated.body).toMatchObject({
        url: target.url,
        types: [AGENTS_CHANGED],
        description: null,
      });
      expect(updated.body).not.toHaveProperty('secret');
      // XML and form posts as every route takes them.
      await context.http
        .post(`${BASE}/UpdateWebhook/${subscription.id}`)
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .send(`description=from+a+form&types=${AGENTS_CHANGED}`)
        .expect(200)
        .expect(({ body }) =>
          expect(body).toMatchObject({ description: 'from a form', types: [AGENTS_CHANGED] }),
        );
      await context.http
        .post(`${BASE}/UpdateWebhook/${subscription.id}`)
        .set('Content-Type', 'application/xml')
        .send('<UpdateWebhookDto><description>from XML</description></UpdateWebhookDto>')
        .expect(200)
        .expect(({ body }) => expect(body).toMatchObject({ description: 'from XML' }));

      const unknown = randomUUID();
      for (const [method, path] of [
        ['get', `GetWebhook/${unknown}`],
        ['get', 'GetWebhook/not-an-id'],
        ['post', `UpdateWebhook/${unknown}`],
        ['post', `RotateWebhookSecret/${unknown}`],
        ['post', `PauseWebhook/${unknown}`],
        ['post', `ResumeWebhook/${unknown}`],
        ['delete', `DeleteWebhook/${unknown}`],
      ] as const)
        expect(
          expectProblem(
            await context.http[method](`${BASE}/${path}`).send({ description: 'x' }),
            404,
          ).type,
        ).toBe('urn:property-sales:problem:webhook_not_found');

      for (const body of [
        {},
        { url: 42 },
        { url: target.url, types: ['property-sales.no.such-event'] },
        { url: target.url, types: 'x'.repeat(300) },
        { url: 'ftp://example.com/hooks' },
        { url: 'not a url' },
      ]) {
        const refused = await context.http.post(`${BASE}/CreateWebhook`).send(body);
        expectProblem(refused, 400);
      }
      // An update that names nothing to change, even of no subscription, is refused first.
      for (const path of [subscription.id, unknown])
        expectProblem(
          await context.http.post(`${BASE}/UpdateWebhook/${path}`).send({ secret: 'whsec_x' }),
          400,
        );
      const count = (await context.http.get(`${BASE}/ListWebhooks`).expect(200)).body as unknown[];
      await context.http.delete(`${BASE}/DeleteWebhook/${subscription.id}`).expect(204);
      await context.http.get(`${BASE}/GetWebhook/${subscription.id}`).expect(404);
      const after = (await context.http.get(`${BASE}/ListWebhooks`).expect(200)).body as unknown[];
      expect(after).toHaveLength(count.length - 1);
    });

    it('signs with the new secret alone once WEBHOOKS_SECRET_GRACE_MS has passed', async () => {
      await context.restart({ WEBHOOKS_SECRET_GRACE_MS: '0' });
      const target = await receiver();
      const subscription = await subscribe(context, { url: target.url, types: [AGENTS_CHANGED] });
      const rotated = (
        await context.http.post(`${BASE}/RotateWebhookSecret/${subscription.id}`).expect(200)
      ).body as Subscription;
      await changeAgents(context, 1, 450);
      await until(() => target.acknowledged.length === 3, 'three deliveries');
      for (const { headers } of target.acknowledged)
        expect(String(headers['webhook-signature']).split(' ')).toHaveLength(1);
      expect(target.verified(rotated.secret)).toHaveLength(3);
      expect(() => target.verified(subscription.secret)).toThrow();
      await context.http.delete(`${BASE}/DeleteWebhook/${subscription.id}`).expect(204);
    });

    it("keeps an active subscription's undelivered events from the purge, past EVENTS_RETENTION_MS", async () => {
      // Every event past its consumers is purged at once, each second; retries at once, then 5 ms,
      // 300 ms and 1.8 s apart.
      await context.restart({ EVENTS_RETENTION_MS: '0', WEBHOOKS_RETRY_BASE_MS: '1' });
      const target = await receiver();
      // Failing for 1.2 s from its first attempt, past a purge: the attempt 1.8 s after the fourth
      // succeeds.
      let firstAttempt: number | undefined;
      target.answer = () => {
        firstAttempt ??= Date.now();
        return Date.now() < firstAttempt + 1200 ? 503 : 204;
      };
      const subscription = await subscribe(context, { url: target.url, types: [AGENTS_CHANGED] });
      const before = new Set(await agentsChangedIds(context));
      await changeAgents(context, 1, 800);
      const committed = (await agentsChangedIds(context)).filter((id) => !before.has(id));
      await until(
        () => target.verified(subscription.secret).length === committed.length,
        'the events, once the subscriber answers',
      );
      expect(target.verified(subscription.secret).map(({ id }) => id)).toEqual(committed);
      // Once delivered, they are purged as every other consumer's are.
      await until(
        async () => (await agentsChangedIds(context)).every((id) => !committed.includes(id)),
        'the purge of the delivered events',
      );
      await context.http.delete(`${BASE}/DeleteWebhook/${subscription.id}`).expect(204);
    });

    it('holds the events of a subscription that always fails, resumed before it is disabled, no longer than WEBHOOKS_DISABLE_AFTER_MS past EVENTS_RETENTION_MS', async () => {
      // Every event past its holders is purged at once, each second; failing 2 s disables.
      await context.restart({ EVENTS_RETENTION_MS: '0', WEBHOOKS_DISABLE_AFTER_MS: '2000' });
      const target = await receiver();
      target.answer = () => 503;
      const subscription = await subscribe(context, { url: target.url, types: [AGENTS_CHANGED] });
      const before = new Set(await agentsChangedIds(context));
      await changeAgents(context, 1, 900);
      const committedAt = Date.now();
      const committed = (await agentsChangedIds(context)).filter((id) => !before.has(id));
      const resume = () =>
        context.http.post(`${BASE}/ResumeWebhook/${subscription.id}`).expect(200);
      // Within the bound, the events wait for it.
      await sleep(1000);
      await resume();
      expect(await agentsChangedIds(context)).toEqual(expect.arrayContaining(committed));
      // Resumed every second, it is never disabled, and fails all along; its events go all the same.
      let purgedAt = 0;
      await until(async () => {
        await resume();
        if ((await agentsChangedIds(context)).some((id) => committed.includes(id))) {
          await sleep(1000);
          return false;
        }
        purgedAt = Date.now();
        return true;
      }, 'the purge of the events past the bound');
      expect(purgedAt - committedAt).toBeGreaterThanOrEqual(2000);
      const read = await context.http.get(`${BASE}/GetWebhook/${subscription.id}`).expect(200);
      expect(read.body).toMatchObject({ status: 'active' });
      expect(target.verified(subscription.secret)).toEqual([]);
      // Answering again, it takes what came after.
      target.answer = () => 204;
      await changeAgents(context, 1, 950);
      await until(
        () => target.verified(subscription.secret).length === TRANSACTIONS.length,
        'the events committed after',
      );
      await context.http.delete(`${BASE}/DeleteWebhook/${subscription.id}`).expect(204);
    });

    it('disables a subscription failing WEBHOOKS_DISABLE_AFTER_MS, says so, and resumes it from its checkpoint', async () => {
      await context.restart({ WEBHOOKS_DISABLE_AFTER_MS: '1000' });
      const target = await receiver();
      target.answer = () => 503;
      const subscription = await subscribe(context, { url: target.url, types: [AGENTS_CHANGED] });
      await changeAgents(context, 1, 500);
      await until(() => target.deliveries.length > 0, 'a first attempt');
      let read: Subscription | undefined;
      await until(async () => {
        read = (await context.http.get(`${BASE}/GetWebhook/${subscription.id}`).expect(200))
          .body as Subscription;
        return read.status === 'disabled';
      }, 'the subscription disabled');
      expect(read).toMatchObject({
        status: 'disabled',
        disabled_reason: expect.stringMatching(/failed: answered 503/) as unknown,
      });
      expect(String(read!.disabled_reason).length).toBeLessThanOrEqual(500);
      expect(await metricsOf(context)).toMatch(/^webhook_subscriptions_disabled 1$/m);
      const attempts = target.deliveries.length;
      await sleep(300);
      expect(target.deliveries).toHaveLength(attempts);
      target.answer = () => 204;
      await context.http.post(`${BASE}/ResumeWebhook/${subscription.id}`).expect(200);
      await until(
        () => target.verified(subscription.secret).length === 3,
        'the resumed deliveries',
      );
      const resumed = await readOnceWritten(
        context,
        subscription.id,
        ({ failing_since }) => failing_since === null,
      );
      expect(resumed).toMatchObject({
        status: 'active',
        failing_since: null,
        disabled_reason: null,
      });
      expect(await metricsOf(context)).toMatch(/^webhook_subscriptions_disabled 0$/m);
      await context.http.delete(`${BASE}/DeleteWebhook/${subscription.id}`).expect(204);
    });

    it('refuses at every delivery a target that became private, without connecting', async () => {
      const target = await receiver();
      const subscription = await subscribe(context, { url: target.url, types: [AGENTS_CHANGED] });
      await context.restart({ WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'false' });
      await changeAgents(context, 1, 600);
      await until(
        async () =>
          /^webhook_deliveries_total\{result="refused"\} [1-9]/m.test(await metricsOf(context)),
        'a refused delivery',
      );
      expect(target.deliveries).toEqual([]);
      await context.restart();
      await until(
        () => target.verified(subscription.secret).length === 3,
        'the deliveries once allowed',
      );
      await context.http.delete(`${BASE}/DeleteWebhook/${subscription.id}`).expect(204);
    });

    it('delivers each event to 200 subscribers at once, answering other callers meanwhile, and names only the subscriptions furthest behind in its backlog gauges', async () => {
      await context.restart({ WEBHOOKS_METRICS_SUBSCRIPTIONS: '3' });
      const many = await receiver();
      const stuck = await receiver();
      stuck.answer = () => 503;
      const failing = await subscribe(context, { url: stuck.url, types: [AGENTS_CHANGED] });
      const ids: string[] = [];
      for (let batch = 0; batch < 10; batch++)
        ids.push(
          ...(
            await Promise.all(
              Array.from({ length: 20 }, () =>
                subscribe(context, { url: many.url, types: [AGENTS_CHANGED] }),
              ),
            )
          ).map(({ id }) => id),
        );
      const before = new Set(await agentsChangedIds(context));
      await changeAgents(context, 1, 700);
      const committed = (await agentsChangedIds(context)).filter((id) => !before.has(id));
      // Other callers are answered while the deliveries go out.
      for (let read = 0; read < 5; read++)
        await context.http.get('/api/Requirement/GetRequirements').expect(200);
      const deliveredTo = (id: string) =>
        many.acknowledged.filter(({ headers }) => headers['webhook-id'] === id).length;
      await until(
        () => committed.every((id) => deliveredTo(id) === ids.length),
        'each event at every one of the 200 subscribers',
      );
      // Once each: no event twice to a subscriber.
      expect(many.acknowledged).toHaveLength(committed.length * ids.length);
      await until(() => stuck.deliveries.length > 0, 'a failed delivery to the stuck subscriber');
      // The checkpoints move once the acknowledgments are written, a few at a time.
      let metrics = '';
      await until(async () => {
        metrics = await metricsOf(context);
        return /^webhook_subscriptions_behind 1$/m.test(metrics);
      }, 'every subscriber but the stuck one caught up');
      const named = (gauge: string) =>
        metrics.split('\n').filter((line) => line.startsWith(`${gauge}{`));
      expect(named('webhook_pending_events')).toHaveLength(3);
      expect(named('webhook_oldest_undelivered_age_seconds')).toHaveLength(3);
      // Furthest behind first: the stuck one is named, with its three events.
      expect(metrics).toContain(`webhook_pending_events{subscription="${failing.id}"} 3`);
      for (const id of [failing.id, ...ids])
        await context.http.delete(`${BASE}/DeleteWebhook/${id}`).expect(204);
      await context.restart();
    });
  },
  WEBHOOKS_ON,
);

/** A key granted webhooks:manage, and one granted every other scope but not it. */
const MANAGER = 'webhook-manager-5c2e81f09a7d4b36';
const READER = 'webhook-reader-91d0c4a7e35b28f6';

describeOnSqlite(
  'webhooks as production configures them (https:// only, no private networks)',
  (context) => {
    it('refuses http:// and every URL whose host is or resolves to a private address, storing nothing', async () => {
      for (const url of [
        'http://hooks.example.com/in',
        'https://127.0.0.1/in',
        'https://127.1.2.3:8443/in',
        'https://localhost/in',
        'https://[::1]/in',
        'https://10.0.0.7/in',
        'https://172.20.1.1/in',
        'https://192.168.0.10/in',
        'https://169.254.169.254/latest/meta-data/',
        'https://100.64.0.1/in',
        'https://[fc00::1]/in',
        'https://[fe80::1]/in',
        'https://[::ffff:10.0.0.1]/in',
        'https://[::127.0.0.1]/in',
        'https://[64:ff9b::a00:1]/in',
        'https://[2002:a00:1::1]/in',
        'https://[fec0::1]/in',
        'https://0.0.0.0/in',
      ]) {
        const refused = await context.http
          .post(`${BASE}/CreateWebhook`)
          .set('X-Api-Key', MANAGER)
          .send({ url });
        const body = expectProblem(refused, 400);
        expect({ url, state: body.ModelState }).toEqual({
          url,
          state: { 'createWebhookDto.url': [expect.any(String)] },
        });
      }
      // What an internal name resolves to is not told to whoever registers it.
      const named = await context.http
        .post(`${BASE}/CreateWebhook`)
        .set('X-Api-Key', MANAGER)
        .send({ url: 'https://localhost/in' });
      expect(JSON.stringify(named.body)).not.toMatch(/127\.0\.0\.1|::1/);
      const listed = await context.http
        .get(`${BASE}/ListWebhooks`)
        .set('X-Api-Key', MANAGER)
        .expect(200);
      expect(listed.body).toEqual([]);
    });

    it('answers 403 without webhooks:manage, on every route', async () => {
      const id = randomUUID();
      for (const [method, path] of [
        ['post', 'CreateWebhook'],
        ['get', `GetWebhook/${id}`],
        ['get', 'ListWebhooks'],
        ['post', `UpdateWebhook/${id}`],
        ['post', `RotateWebhookSecret/${id}`],
        ['post', `PauseWebhook/${id}`],
        ['post', `ResumeWebhook/${id}`],
        ['delete', `DeleteWebhook/${id}`],
      ] as const) {
        const refused = await context.http[method](`${BASE}/${path}`)
          .set('X-Api-Key', READER)
          .send({ url: 'https://hooks.example.com/in' });
        expect({ path, status: refused.status }).toEqual({ path, status: 403 });
        expect(refused.headers['www-authenticate']).toContain('scope="webhooks:manage"');
      }
    });
  },
  {
    WEBHOOKS: 'true',
    AUTH_MODE: 'apikey',
    AUTH_API_KEYS: [
      apiKeyEntry('manager', MANAGER, ['webhooks:manage']),
      apiKeyEntry('reader', READER, ['transactions:read', 'transactions:write', 'events:read']),
    ].join(','),
  },
);

describeOnSqlite('webhooks off (WEBHOOKS unset)', (context) => {
  it('answers 404 on every route, saying so, and delivers nothing', async () => {
    for (const [method, path] of [
      ['post', 'CreateWebhook'],
      ['get', 'ListWebhooks'],
      ['get', `GetWebhook/${randomUUID()}`],
      ['delete', `DeleteWebhook/${randomUUID()}`],
    ] as const) {
      const body = expectProblem(
        await context.http[method](`${BASE}/${path}`).send({ url: 'https://hooks.example.com/' }),
        404,
      );
      expect(body.type).toBe('urn:property-sales:problem:webhooks_off');
    }
    expect(await metricsOf(context)).not.toContain('webhook_');
  });
});

describe('webhooks in a spawned service (SIGKILL, logs), on each database at once', () => {
  const directories = new TemporaryDirectories('webhooks');
  const databases = new Map<DatabaseKind, TestDatabase>();
  const services: ServiceProcess[] = [];

  beforeAll(async () => {
    await Promise.all(
      testDatabaseKinds().map(async (kind) => {
        const database = await createTestDatabase(kind);
        databases.set(kind, database);
        // Migrated and seeded in this process; the spawned services run on what it left.
        const seeding = await RunningApp.start(database.url);
        await seeding.seed({ requirements: CATALOGUE, transactions: [transactionRecord(1)] });
        await seeding.close();
      }),
    );
  });
  // Each test's services alone deliver its subscriptions.
  afterEach(async () => {
    await Promise.all(services.splice(0).map((service) => service.stop()));
  });
  afterAll(async () => {
    await Promise.all([...databases.values()].map((database) => database.drop()));
    await directories.removeAll();
  });

  /** The built service on the database of `kind`, serving. */
  const spawn = async (kind: DatabaseKind, env: Record<string, string> = {}) => {
    const service = await ServiceProcess.start({
      cwd: await directories.make(),
      env: {
        ...WEBHOOKS_ON,
        DATABASE_URL: databases.get(kind)!.url,
        DEMO_DATA: 'false',
        MIGRATIONS_RUN: 'true',
        AUTH_MODE: 'none',
        LOG_LEVEL: 'warn',
        ...env,
      },
    });
    services.push(service);
    await service.ready();
    return service;
  };

  /** Runs `check` with a receiver of its own, closed after. */
  const withReceiver = async (check: (target: WebhookReceiver) => Promise<void>) => {
    const target = await WebhookReceiver.start();
    try {
      await check(target);
    } finally {
      await target.close();
    }
  };

  it('delivers after the restart the event whose delivery the kill cut, under the same webhook-id', () =>
    onEachDatabaseAtOnce((kind) =>
      withReceiver(async (target) => {
        // Deliveries wait 1 s for an answer: the killed instance's lease lasts 7 s (twice that, and
        // 5 s).
        const env = { WEBHOOKS_TIMEOUT_MS: '1000' };
        const first = await spawn(kind, env);
        const created = await request(first.baseUrl)
          .post(`${BASE}/CreateWebhook`)
          .send({ url: target.url, types: [AGENTS_CHANGED] })
          .expect(201);
        const subscription = created.body as Subscription;
        // The first delivery is held unanswered: the service is killed while it waits.
        target.answer = () => 'hang';
        await request(first.baseUrl)
          .post(UPDATE)
          .send({ transaction_id: 1, financetype: 'Cash', brokerid: 77 })
          .expect(204);
        await until(() => target.deliveries.length === 1, 'the delivery in flight');
        const cut = target.deliveries[0].headers['webhook-id'];
        first.child.kill('SIGKILL');
        expect(await first.exit()).toMatchObject({ signal: 'SIGKILL' });
        target.answer = () => 204;

        const second = await spawn(kind, env);
        // Once the killed instance's lease ran out.
        await until(
          () => target.acknowledged.length === 1,
          'the delivery after the restart',
          30_000,
        );
        const [event] = target.verified(subscription.secret);
        expect(event).toMatchObject({ id: cut, type: AGENTS_CHANGED, subject: '1' });
        expect(event.data).toMatchObject({ brokerid: 77 });
        await sleep(300);
        expect(target.acknowledged).toHaveLength(1);
        // Its receiver goes with the test.
        await request(second.baseUrl)
          .delete(`${BASE}/DeleteWebhook/${subscription.id}`)
          .expect(204);
      }),
    ));

  it('logs one line when a subscription begins to fail and one when it is disabled, quoting a bounded excerpt of the answer', () =>
    onEachDatabaseAtOnce((kind) =>
      withReceiver(async (failing) => {
        const service = await spawn(kind, { WEBHOOKS_DISABLE_AFTER_MS: '1500' });
        failing.answer = () => 503;
        const subscription = (
          await request(service.baseUrl)
            .post(`${BASE}/CreateWebhook`)
            .send({ url: failing.url, types: [AGENTS_CHANGED] })
            .expect(201)
        ).body as Subscription;
        await request(service.baseUrl)
          .post(UPDATE)
          .send({ transaction_id: 1, financetype: 'Cash', brokerid: 78 })
          .expect(204);
        await until(
          async () =>
            (
              await request(service.baseUrl)
                .get(`${BASE}/GetWebhook/${subscription.id}`)
                .expect(200)
            ).body.status === 'disabled',
          'the subscription disabled',
        );
        expect(failing.deliveries.length).toBeGreaterThan(2);
        const linesOf = () =>
          jsonLines<{ msg?: string }>(service.stdout)
            .map(({ msg }) => msg ?? '')
            .filter((msg) => msg.includes(subscription.id));
        // Written as they come; read once the second is there, and a moment after for a third.
        await until(() => linesOf().length >= 2, 'the log lines');
        await sleep(300);
        const lines = linesOf();
        expect(lines).toHaveLength(2);
        expect(lines[0]).toMatch(/fails \(failed: answered 503: "x+"\)/);
        expect(lines[1]).toMatch(/is disabled: .*answered 503/);
        // The receiver answered 10,000 bytes each time; at most 256 of them are read and quoted.
        for (const line of lines) expect(line.length).toBeLessThan(1000);
        expect(await request(service.baseUrl).get('/metrics').expect(200)).toHaveProperty(
          'text',
          expect.stringMatching(/^webhook_subscriptions_disabled 1$/m),
        );
      }),
    ));
});

describeOnMariaDb('webhooks from two instances on one MariaDB', () => {
  let database: TestDatabase;
  const instances: RunningApp[] = [];
  let target: WebhookReceiver;

  beforeAll(async () => {
    database = await createTestDatabase('mariadb');
    for (let n = 0; n < 2; n++)
      instances.push(
        await RunningApp.start(database.url, {
          ...WEBHOOKS_ON,
          AUTH_MODE: 'none',
        }),
      );
    await instances[0].seed({
      requirements: CATALOGUE,
      transactions: TRANSACTIONS.map((id) => transactionRecord(id)),
    });
    target = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.close()));
    await target.close();
    await database.drop();
  });

  it('deliver each event once, in order, whichever instance committed it', async () => {
    const [a, b] = instances;
    const subscription = (
      await a.http
        .post(`${BASE}/CreateWebhook`)
        .send({ url: target.url, types: [AGENTS_CHANGED] })
        .expect(201)
    ).body as Subscription;
    const rounds = 6;
    for (let round = 0; round < rounds; round++)
      for (const transaction of TRANSACTIONS)
        await (round % 2 === 0 ? a : b).http
          .post(UPDATE)
          .send({ transaction_id: transaction, financetype: 'Cash', brokerid: 700 + round })
          .expect(204);
    await until(
      () => target.verified(subscription.secret).length >= rounds * TRANSACTIONS.length,
      'every event',
    );
    await sleep(500);
    const events = target.verified(subscription.secret);
    const ids = events.map(({ id }) => id);
    expect(new Set(ids).size).toBe(rounds * TRANSACTIONS.length);
    expect(ids).toHaveLength(rounds * TRANSACTIONS.length);
    const brokers = [...Array(rounds).keys()].map((round) => 700 + round);
    expect(brokersByTransaction(events)).toEqual({ 1: brokers, 2: brokers, 3: brokers });
    // Each instance's read says the same, once the deliveries' records are written.
    for (const instance of instances)
      await until(
        async () =>
          (
            (await instance.http.get(`${BASE}/GetWebhook/${subscription.id}`).expect(200))
              .body as Subscription
          ).last_delivered_event_id === ids.at(-1),
        "the subscription's last delivered event",
      );
  });
});
