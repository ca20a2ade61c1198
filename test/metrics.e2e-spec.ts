import request from 'supertest';
import { version } from '../package.json';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { type ServiceProcess, startOnNewSqlite, TemporaryDirectories } from './support/processes';
import { describeOnEachDatabase } from './support/test-app';
import { getTransactionPath, UPDATE_AGENTS } from './support/update-agents-cases';

const TRANSACTION = 6161;
const COMMIT = '3f2a9c1e';
const GET_TRANSACTION_ROUTE = '/api/Transaction/GetTransaction/:transaction_id';

/** The value of one series of the Prometheus text, or undefined when it is not there. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describeOnEachDatabase(
  'Prometheus metrics at /metrics',
  (context) => {
    beforeAll(async () => {
      await context.running.seed({
        requirements: CATALOGUE,
        transactions: [transactionRecord(TRANSACTION)],
      });
    });

    const scrape = async () => {
      const response = await context.http.get('/metrics').expect(200);
      expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
      return response.text;
    };

    it('counts and times requests by method, route template and status', async () => {
      const ok = `http_requests_total{method="GET",route="${GET_TRANSACTION_ROUTE}",status="200"}`;
      const missing = `http_requests_total{method="GET",route="${GET_TRANSACTION_ROUTE}",status="404"}`;
      const refused = `http_requests_total{method="POST",route="/api/Transaction/UpdateAgents",status="400"}`;
      const before = await scrape();
      await context.http.get(getTransactionPath(TRANSACTION)).expect(200);
      await context.http.get(getTransactionPath(TRANSACTION)).expect(200);
      await context.http.get(getTransactionPath(TRANSACTION + 1)).expect(404);
      await context.http
        .post(UPDATE_AGENTS)
        .set('Content-Type', 'application/json')
        .send('{"transaction_id": 1}')
        .expect(400);
      await context.http.get(`/no/such/path/${TRANSACTION}`).expect(404);
      const after = await scrape();
      const added = (series: string) =>
        (sample(after, series) ?? 0) - (sample(before, series) ?? 0);
      expect(added(ok)).toBe(2);
      expect(added(missing)).toBe(1);
      expect(added(refused)).toBe(1);
      // A path no route serves is one series, whatever the path: no series per invented URL.
      expect(added('http_requests_total{method="GET",route="other",status="404"}')).toBe(1);
      expect(after).not.toContain(`/no/such/path/${TRANSACTION}`);
      expect(
        added(
          `http_request_duration_seconds_count{method="GET",route="${GET_TRANSACTION_ROUTE}",status="200"}`,
        ),
      ).toBe(2);
      expect(
        sample(
          after,
          `http_request_duration_seconds_bucket{le="10",method="GET",route="${GET_TRANSACTION_ROUTE}",status="200"}`,
        ),
      ).toBe(sample(after, ok));
    });

    it('counts GetRequirements served from the cache and encoded again', async () => {
      const hits = 'representation_cache_lookups_total{body="requirements",result="hit"}';
      const misses = 'representation_cache_lookups_total{body="requirements",result="miss"}';
      const before = await scrape();
      await context.http.get('/api/Requirement/GetRequirements').expect(200);
      await context.http.get('/api/Requirement/GetRequirements').expect(200);
      const after = await scrape();
      const added = (series: string) =>
        (sample(after, series) ?? 0) - (sample(before, series) ?? 0);
      // The first read may encode the catalogue (a miss); the second is served from the cache.
      expect(added(hits) + added(misses)).toBe(2);
      expect(added(hits)).toBeGreaterThanOrEqual(1);
    });

    it('reports the database connections by state, and the process', async () => {
      const text = await scrape();
      const inUse = sample(text, 'database_connections{state="in_use"}');
      const idle = sample(text, 'database_connections{state="idle"}');
      expect(inUse).toBeGreaterThanOrEqual(0);
      expect(idle).toBeGreaterThanOrEqual(context.kind === 'sqlite' ? 0 : 1);
      expect(inUse! + idle!).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'database_connections{state="waiting"}')).toBe(0);
      expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
      expect(sample(text, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
    });

    it('names the running build: its version, source commit and Node.js release', async () => {
      const series = `property_sales_build_info{version="${version}",commit="${COMMIT}",node="${process.version}"}`;
      expect(sample(await scrape(), series)).toBe(1);
    });
  },
  { SERVICE_COMMIT: COMMIT },
);

/**
 * A stall, as an operator's dashboard sees it: the built service in a process of its own, held still
 * (SIGSTOP) for 300 ms as one costly request would hold its event loop, shows it in the next scrape.
 */
describe('an event-loop stall in /metrics', () => {
  const directories = new TemporaryDirectories('metrics-stall');
  let service: ServiceProcess;
  beforeAll(async () => {
    service = await startOnNewSqlite(await directories.make(), { LOG_LEVEL: 'warn' });
  });
  afterAll(async () => {
    await service?.stop();
    await directories.removeAll();
  });

  const lagMax = async () =>
    sample(
      (await request(service.baseUrl).get('/metrics').expect(200)).text,
      'event_loop_stall_max_seconds',
    );

  it('shows in event_loop_stall_max_seconds of the scrape after it, and not in the next', async () => {
    await lagMax();
    service.child.kill('SIGSTOP');
    await new Promise((resolve) => setTimeout(resolve, 300));
    service.child.kill('SIGCONT');
    expect(await lagMax()).toBeGreaterThanOrEqual(0.25);
    // Each scrape reports the period since the one before, which had no stall.
    expect(await lagMax()).toBeLessThan(0.25);
  });
});
