import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import request from 'supertest';
import { apiKeyEntry } from './support/auth-credentials';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { expectProblem } from './support/http-assertions';
import { jsonLines, ServiceProcess, TemporaryDirectories } from './support/processes';
import { describeOnEachDatabase, RunningApp } from './support/test-app';
import { createTestDatabase, type TestDatabase, testDatabaseKinds } from './support/test-database';
import { until, WebhookReceiver } from './support/webhook-receiver';

/**
 * Many partners on one service: each subscription belongs to the API key that made it; a partner
 * reaches its own alone (another's answers 404, as a missing one), so it can neither read, change,
 * rotate, pause, resume nor delete it, nor repoint it to receive its events; webhooks:admin reaches
 * every one. The caps on subscriptions, per owner and in all, refuse 409 and create nothing, however
 * many creates arrive at once. Every change is logged, one line each, never with a secret.
 */

const BASE = '/api/Webhook';
const AGENTS_CHANGED = 'property-sales.transaction.agents-changed';

/** Each caller's key, by the name AUTH_API_KEYS gives it: the owner of what it creates. */
const KEYS = {
  alpha: 'partner-alpha-3b9e1f7c0a2d4e68',
  beta: 'partner-beta-8d4a2c6e1f0b3975',
  operator: 'operator-5e7c9a1b3d2f0864',
  backoffice: 'backoffice-0f2e4d6c8b1a3957',
} as const;
type CallerName = keyof typeof KEYS;

const AUTH = {
  AUTH_MODE: 'apikey',
  AUTH_API_KEYS: [
    apiKeyEntry('alpha', KEYS.alpha, ['webhooks:manage']),
    apiKeyEntry('beta', KEYS.beta, ['webhooks:manage']),
    apiKeyEntry('operator', KEYS.operator, ['webhooks:manage', 'webhooks:admin']),
    apiKeyEntry('backoffice', KEYS.backoffice, ['transactions:write']),
  ].join(','),
};
/** Loopback receivers over http://, deliveries looked for every 50 ms. */
const WEBHOOKS_ON = {
  WEBHOOKS: 'true',
  WEBHOOKS_ALLOW_HTTP: 'true',
  WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOKS_RETRY_BASE_MS: '2',
  EVENTS_POLL_MS: '50',
};

interface Subscription {
  readonly id: string;
  readonly owner: string | null;
  readonly url: string;
  readonly secret: string;
  readonly status: string;
  readonly [member: string]: unknown;
}

/** Every route that names a subscription, with a body UpdateWebhook takes. */
const ROUTES_BY_ID = [
  ['get', 'GetWebhook'],
  ['post', 'UpdateWebhook'],
  ['post', 'RotateWebhookSecret'],
  ['post', 'PauseWebhook'],
  ['post', 'ResumeWebhook'],
  ['delete', 'DeleteWebhook'],
] as const;

/** A 404's body with the id it names and its request id left out: what tells one 404 from another. */
function problemShape(body: Record<string, unknown>, id: string): Record<string, unknown> {
  const { requestId, ...rest } = body;
  expect(requestId).toEqual(expect.any(String));
  return JSON.parse(JSON.stringify(rest).replaceAll(id, '<id>')) as Record<string, unknown>;
}

describeOnEachDatabase(
  'webhook ownership',
  (context) => {
    const receivers: WebhookReceiver[] = [];
    const receiver = async () => {
      const started = await WebhookReceiver.start();
      receivers.push(started);
      return started;
    };
    const as = (caller: CallerName) => ({
      get: (path: string) => context.http.get(`${BASE}/${path}`).set('X-Api-Key', KEYS[caller]),
      post: (path: string) => context.http.post(`${BASE}/${path}`).set('X-Api-Key', KEYS[caller]),
      delete: (path: string) =>
        context.http.delete(`${BASE}/${path}`).set('X-Api-Key', KEYS[caller]),
    });
    const create = async (caller: CallerName, body: Record<string, unknown>) =>
      (await as(caller).post('CreateWebhook').send(body).expect(201)).body as Subscription;
    const list = async (caller: CallerName) =>
      (await as(caller).get('ListWebhooks').expect(200)).body as Subscription[];
    /** Deletes every subscription, as the operator: each test starts with none. */
    const deleteAll = async () => {
      for (const { id } of await list('operator'))
        await as('operator').delete(`DeleteWebhook/${id}`).expect(204);
    };

    beforeAll(async () => {
      await context.running.seed({ requirements: CATALOGUE, transactions: [transactionRecord(1)] });
    });
    afterEach(deleteAll);
    afterAll(async () => {
      await Promise.all(receivers.map((started) => started.close()));
    });

    it("answers a partner 404 for another's subscription on every route, as for a missing one, and changes nothing", async () => {
      const mine = await receiver();
      const thief = await receiver();
      const alpha = await create('alpha', { url: mine.url, types: [AGENTS_CHANGED] });
      const beta = await create('beta', { url: thief.url, description: 'beta' });
      expect(alpha.owner).toBe('alpha');
      expect(beta.owner).toBe('beta');
      expect((await list('alpha')).map(({ id }) => id)).toEqual([alpha.id]);
      expect((await list('beta')).map(({ id }) => id)).toEqual([beta.id]);

      const missing = randomUUID();
      for (const [method, route] of ROUTES_BY_ID) {
        const send = (id: string) =>
          as('beta')[method](`${route}/${id}`).send({ url: thief.url, description: 'taken' });
        const refused = expectProblem(await send(alpha.id), 404);
        const absent = expectProblem(await send(missing), 404);
        expect({ route, body: problemShape(refused, alpha.id) }).toEqual({
          route,
          body: problemShape(absent, missing),
        });
        expect(refused.type).toBe('urn:property-sales:problem:webhook_not_found');
      }
      const kept = (await as('alpha').get(`GetWebhook/${alpha.id}`).expect(200))
        .body as Subscription;
      expect({ ...kept, secret: alpha.secret }).toEqual(alpha);

      // The event goes to the owner's receiver, signed with its secret, and to no other.
      await context.http
        .post('/api/Transaction/UpdateAgents')
        .set('X-Api-Key', KEYS.backoffice)
        .send({ transaction_id: 1, financetype: 'Cash', brokerid: 301 })
        .expect(204);
      await until(() => mine.verified(alpha.secret).length === 1, "the owner's delivery");
      const [event] = mine.verified(alpha.secret);
      expect(event).toMatchObject({ type: AGENTS_CHANGED, data: { brokerid: 301 } });
      await until(
        () => thief.acknowledged.some(({ headers }) => headers['webhook-id'] === event.id),
        "beta's own subscription's delivery of it",
      );
      // Beta's receiver has the event once, for beta's subscription: signed with beta's secret alone.
      const atThief = thief.acknowledged.filter(
        ({ headers }) => headers['webhook-id'] === event.id,
      );
      expect(atThief).toHaveLength(1);
      expect(thief.verified(beta.secret).map(({ id }) => id)).toContain(event.id);
      expect(() => thief.verified(alpha.secret)).toThrow();
      // Its row says so once the deliveries' records are written, a few at a time.
      await until(
        async () =>
          ((await as('alpha').get(`GetWebhook/${alpha.id}`).expect(200)).body as Subscription)
            .last_delivered_event_id === event.id,
        "the owner's subscription's last delivered event",
      );
      expect((await as('alpha').get(`GetWebhook/${alpha.id}`).expect(200)).body).toMatchObject({
        url: mine.url,
      });
    });

    it('lets webhooks:admin list, read and manage every subscription, whoever owns it', async () => {
      const target = await receiver();
      const alpha = await create('alpha', { url: target.url, types: [AGENTS_CHANGED] });
      const beta = await create('beta', { url: target.url });
      const listed = await list('operator');
      expect(listed.map(({ id, owner }) => ({ id, owner }))).toEqual([
        { id: alpha.id, owner: 'alpha' },
        { id: beta.id, owner: 'beta' },
      ]);
      const admin = as('operator');
      expect((await admin.get(`GetWebhook/${beta.id}`).expect(200)).body).toMatchObject({
        owner: 'beta',
      });
      const updated = await admin
        .post(`UpdateWebhook/${beta.id}`)
        .send({ description: 'checked by the operator' })
        .expect(200);
      // The owner stays whoever changes it.
      expect(updated.body).toMatchObject({ owner: 'beta', description: 'checked by the operator' });
      expect((await admin.post(`PauseWebhook/${alpha.id}`).expect(200)).body).toMatchObject({
        status: 'paused',
        owner: 'alpha',
      });
      expect((await admin.post(`ResumeWebhook/${alpha.id}`).expect(200)).body).toMatchObject({
        status: 'active',
      });
      const rotated = (await admin.post(`RotateWebhookSecret/${alpha.id}`).expect(200))
        .body as Subscription;
      expect(rotated.secret).not.toBe(alpha.secret);
      await admin.delete(`DeleteWebhook/${beta.id}`).expect(204);
      await as('beta').get(`GetWebhook/${beta.id}`).expect(404);
      expect(await list('beta')).toEqual([]);
      // The operator's own are the operator's: a partner does not see them.
      const own = await create('operator', { url: target.url });
      expect(own.owner).toBe('operator');
      await as('alpha').get(`GetWebhook/${own.id}`).expect(404);
      expect((await list('alpha')).map(({ id }) => id)).toEqual([alpha.id]);
    });

    it('refuses 409 past WEBHOOKS_MAX_PER_OWNER and WEBHOOKS_MAX_SUBSCRIPTIONS, creating nothing', async () => {
      await context.restart({ WEBHOOKS_MAX_PER_OWNER: '2', WEBHOOKS_MAX_SUBSCRIPTIONS: '3' });
      const target = await receiver();
      const body = { url: target.url };
      await create('alpha', body);
      await create('alpha', body);
      const owner = expectProblem(await as('alpha').post('CreateWebhook').send(body), 409);
      expect(owner).toMatchObject({
        type: 'urn:property-sales:problem:webhook_limit_reached',
        Message: expect.stringContaining('WEBHOOKS_MAX_PER_OWNER') as unknown,
      });
      // Another owner still may, up to the service's cap.
      await create('beta', body);
      for (const caller of ['beta', 'operator'] as const) {
        const service = expectProblem(await as(caller).post('CreateWebhook').send(body), 409);
        expect(service).toMatchObject({
          type: 'urn:property-sales:problem:webhook_limit_reached',
          Message: expect.stringContaining('WEBHOOKS_MAX_SUBSCRIPTIONS') as unknown,
        });
      }
      expect((await list('operator')).map(({ owner }) => owner)).toEqual([
        'alpha',
        'alpha',
        'beta',
      ]);
      // A deletion makes room again.
      const [first] = await list('alpha');
      await as('alpha').delete(`DeleteWebhook/${first.id}`).expect(204);
      await create('alpha', body);
    });

    it('passes neither cap with creates sent at once', async () => {
      await context.restart({ WEBHOOKS_MAX_PER_OWNER: '3', WEBHOOKS_MAX_SUBSCRIPTIONS: '5' });
      const target = await receiver();
      const burst = (caller: CallerName, count: number) =>
        Array.from({ length: count }, () =>
          as(caller).post('CreateWebhook').send({ url: target.url }),
        );
      const statuses = async (requests: ReturnType<typeof burst>) =>
        (await Promise.all(requests)).map(({ status }) => status).sort();
      // Eight of one owner at once: three are made.
      expect(await statuses(burst('alpha', 8))).toEqual([201, 201, 201, 409, 409, 409, 409, 409]);
      // Then four of each of two owners at once, two places left in all: two are made.
      const both = await statuses([...burst('beta', 4), ...burst('operator', 4)]);
      expect(both.filter((status) => status === 201)).toHaveLength(2);
      expect(both.filter((status) => status === 409)).toHaveLength(6);
      const owners = (await list('operator')).map(({ owner }) => owner);
      expect(owners).toHaveLength(5);
      expect(owners.filter((owner) => owner === 'alpha')).toHaveLength(3);
    });
  },
  { ...WEBHOOKS_ON, ...AUTH },
);

describeOnEachDatabase(
  'webhooks without authentication (AUTH_MODE=none)',
  (context) => {
    it("makes every caller the operator: what it creates is the operator's, and only the service's cap counts it", async () => {
      await context.restart({ WEBHOOKS_MAX_PER_OWNER: '1', WEBHOOKS_MAX_SUBSCRIPTIONS: '2' });
      const body = { url: 'http://127.0.0.1:9/hooks' };
      const made = [];
      for (let n = 0; n < 2; n++)
        made.push(
          (await context.http.post(`${BASE}/CreateWebhook`).send(body).expect(201))
            .body as Subscription,
        );
      expect(made.map(({ owner }) => owner)).toEqual([null, null]);
      expectProblem(await context.http.post(`${BASE}/CreateWebhook`).send(body), 409);
      expect((await context.http.get(`${BASE}/ListWebhooks`).expect(200)).body).toHaveLength(2);
    });
  },
  { ...WEBHOOKS_ON, AUTH_MODE: 'none' },
);

interface AuditLine {
  readonly msg?: string;
  readonly audit?: string;
  readonly actor?: string | null;
  readonly owner?: string | null;
  readonly subscription?: string;
  readonly changes?: Record<string, unknown>;
}

for (const kind of testDatabaseKinds())
  describe(`webhook audit lines in a spawned service [${kind}]`, () => {
    const directories = new TemporaryDirectories('webhook-audit');
    let database: TestDatabase;
    let service: ServiceProcess;

    beforeAll(async () => {
      database = await createTestDatabase(kind);
      // Migrated in this process; the spawned service runs on what it left.
      await (await RunningApp.start(database.url)).close();
      service = await ServiceProcess.start({
        cwd: await directories.make(),
        env: {
          ...WEBHOOKS_ON,
          ...AUTH,
          DATABASE_URL: database.url,
          DEMO_DATA: 'false',
          MIGRATIONS_RUN: 'true',
          LOG_LEVEL: 'info',
        },
      });
      await service.ready();
    });
    afterAll(async () => {
      await service?.stop();
      await database?.drop();
      await directories.removeAll();
    });

    it('logs one line per change: the actor, the owner, the subscription and what changed, never a secret', async () => {
      const call = (caller: CallerName, method: 'post' | 'delete', path: string) =>
        request(service.baseUrl)[method](`${BASE}/${path}`).set('X-Api-Key', KEYS[caller]);
      // A partner's URL may carry a token of its own: the lines leave out its query.
      const url = 'http://127.0.0.1:9/hooks?token=partner-url-token';
      const made = (await call('alpha', 'post', 'CreateWebhook').send({ url }).expect(201))
        .body as Subscription;
      const { id } = made;
      await call('alpha', 'post', `UpdateWebhook/${id}`)
        .send({ url: 'http://127.0.0.1:9/moved', types: [AGENTS_CHANGED] })
        .expect(200);
      const rotated = (await call('alpha', 'post', `RotateWebhookSecret/${id}`).expect(200))
        .body as Subscription;
      await call('alpha', 'post', `PauseWebhook/${id}`).expect(200);
      await call('operator', 'post', `ResumeWebhook/${id}`).expect(200);
      // Refused changes change nothing, and log no audit line.
      await call('beta', 'post', `PauseWebhook/${id}`).expect(404);
      await call('operator', 'delete', `DeleteWebhook/${id}`).expect(204);

      const lines = () =>
        jsonLines<AuditLine>(service.stdout).filter(({ audit }) => audit !== undefined);
      await until(() => lines().length >= 6, 'the audit lines');
      await sleep(200);
      expect(
        lines().map(({ audit, actor, owner, subscription }) => [audit, actor, owner, subscription]),
      ).toEqual([
        ['webhook.created', 'alpha', 'alpha', id],
        ['webhook.updated', 'alpha', 'alpha', id],
        ['webhook.secret-rotated', 'alpha', 'alpha', id],
        ['webhook.paused', 'alpha', 'alpha', id],
        ['webhook.resumed', 'operator', 'alpha', id],
        ['webhook.deleted', 'operator', 'alpha', id],
      ]);
      expect(lines().map(({ changes }) => changes)).toEqual([
        {
          url: { to: 'http://127.0.0.1:9/hooks' },
          types: { to: [] },
          description: { to: null },
          status: { to: 'active' },
        },
        {
          url: { from: 'http://127.0.0.1:9/hooks', to: 'http://127.0.0.1:9/moved' },
          types: { from: [], to: [AGENTS_CHANGED] },
        },
        { secret: 'rotated' },
        { status: { from: 'active', to: 'paused' } },
        { status: { from: 'paused', to: 'active' } },
        {},
      ]);
      expect(lines()[0].msg).toBe(`Webhook ${id}: created by alpha.`);
      for (const secret of [made.secret, rotated.secret, 'partner-url-token'])
        expect(service.stdout).not.toContain(secret);
    });
  });
