import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { APP_ENTITIES } from '../src/app.entities';
import { loadAppConfig } from '../src/config/app-config';
import { dataSourceOptions } from '../src/database/data-source-options';
import { withServerDialect } from '../src/database/server-dialect';
import { MYSQL_MIGRATIONS } from '../src/database/migrations/mysql';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { expectNoLeak, expectProblem } from './support/http-assertions';
import { runNode, SERVICE_MAIN, ServiceProcess } from './support/processes';
import { RunningApp } from './support/test-app';
import { createTestDatabase, type TestDatabase, testDatabaseKinds } from './support/test-database';

/** The one line a refused start writes, by what is wrong. */
const PENDING = /The database schema is behind this release: \d+ of \d+ migrations are pending/;
const DRIFT = /The database schema differs from what this release expects/;

const databases: TestDatabase[] = [];
const services: ServiceProcess[] = [];
let directory: string;

/** A fresh database with the first `count` migrations applied (all of them by default). */
async function databaseWith(count = MYSQL_MIGRATIONS.length): Promise<TestDatabase> {
  const database = await createTestDatabase('mariadb');
  databases.push(database);
  const config = loadAppConfig({ DATABASE_URL: database.url }, { serving: false });
  const dataSource = new DataSource(
    await withServerDialect({
      ...dataSourceOptions(config.database, APP_ENTITIES),
      migrations: MYSQL_MIGRATIONS.slice(0, count),
      migrationsRun: false,
    }),
  );
  await dataSource.initialize();
  try {
    await dataSource.runMigrations();
  } finally {
    await dataSource.destroy();
  }
  return database;
}

/** Runs a statement as an operator would by hand, on the side of the service. */
async function alter(database: TestDatabase, sql: string): Promise<void> {
  const config = loadAppConfig({ DATABASE_URL: database.url }, { serving: false });
  const dataSource = new DataSource(
    await withServerDialect({ ...dataSourceOptions(config.database), migrationsRun: false }),
  );
  await dataSource.initialize();
  try {
    await dataSource.query(sql);
  } finally {
    await dataSource.destroy();
  }
}

/** Starts the built service and waits until it exits: a refused start. */
const refusedStart = (env: Record<string, string>) =>
  runNode(SERVICE_MAIN, [], {
    cwd: directory,
    env: { AUTH_MODE: 'none', ...env },
    timeoutMs: 30000,
  });

async function startService(env: Record<string, string>): Promise<ServiceProcess> {
  const service = await ServiceProcess.start({
    cwd: directory,
    env: { AUTH_MODE: 'none', ...env },
  });
  services.push(service);
  await service.ready();
  return service;
}

const describeOnMariaDb = testDatabaseKinds().includes('mariadb') ? describe : describe.skip;

describeOnMariaDb('schema checks at start on MariaDB', () => {
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'property-sales-schema-checks-'));
  });

  afterEach(async () => {
    await Promise.allSettled(services.splice(0).map((service) => service.stop()));
  });

  afterAll(async () => {
    await Promise.all(databases.splice(0).map((database) => database.drop()));
    await rm(directory, { recursive: true, force: true });
  });

  it('refuses to start on a half-migrated database, naming the pending migration in one line', async () => {
    const database = await databaseWith(MYSQL_MIGRATIONS.length - 1);
    const result = await refusedStart({ DATABASE_URL: database.url });
    expect(result.code).toBe(1);
    const lines = result.stderr.split('\n').filter((line) => PENDING.test(line));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`1 of ${MYSQL_MIGRATIONS.length} migrations are pending`);
    expect(lines[0]).toContain(MYSQL_MIGRATIONS.at(-1)!.name);
    expect(lines[0]).toContain('MIGRATIONS_RUN=true');
  });

  it('refuses to start when a column was dropped after migrating, and MIGRATIONS_RUN does not hide it', async () => {
    const database = await databaseWith();
    await alter(database, 'ALTER TABLE sales_transaction DROP COLUMN brokername');
    for (const env of [{}, { MIGRATIONS_RUN: 'true' }] as Record<string, string>[]) {
      const result = await refusedStart({ DATABASE_URL: database.url, ...env });
      expect(result.code).toBe(1);
      const lines = result.stderr.split('\n').filter((line) => DRIFT.test(line));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('`sales_transaction`');
      expect(lines[0]).toContain('`brokername`');
    }
  });

  it('refuses to start when a table is missing after migrating', async () => {
    const database = await databaseWith();
    await alter(database, 'DROP TABLE agent_assignment');
    const result = await refusedStart({ DATABASE_URL: database.url });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(DRIFT);
    expect(result.stderr).toContain('`agent_assignment`');
  });

  it('applies the pending migrations with MIGRATIONS_RUN=true, then starts and serves', async () => {
    const database = await databaseWith(1);
    const service = await startService({ DATABASE_URL: database.url, MIGRATIONS_RUN: 'true' });
    await request(service.baseUrl).get('/api/Requirement/GetRequirements').expect(200, '[]');
    await request(service.baseUrl).get('/health/ready').expect(200);
  });

  it.each([
    ['mariadb://', (url: string) => url],
    ['mysql://', (url: string) => url.replace(/^mariadb:/, 'mysql:')],
  ])('starts on a database the migrations built, with a %s URL', async (_scheme, asUrl) => {
    const database = await databaseWith();
    const service = await startService({ DATABASE_URL: asUrl(database.url) });
    await request(service.baseUrl).get('/api/Requirement/GetRequirements').expect(200, '[]');
    const ready = await request(service.baseUrl).get('/health/ready').expect(200);
    expect(ready.body).toEqual(
      expect.objectContaining({ info: expect.objectContaining({ schema: { status: 'up' } }) }),
    );
    expect(service.stdout).not.toMatch(/schema/i);
  });
});

describeOnMariaDb('the schema changed under a running service on MariaDB', () => {
  const TRANSACTION = 1001;
  let database: TestDatabase;
  let running: RunningApp;

  beforeEach(async () => {
    database = await createTestDatabase('mariadb');
    // Every probe checks the schema again.
    running = await RunningApp.start(database.url, { SCHEMA_CHECK_INTERVAL_MS: '0' });
    await running.seed({ requirements: CATALOGUE, transactions: [transactionRecord(TRANSACTION)] });
    await running.http.get('/health/ready').expect(200);
  });

  afterEach(async () => {
    await running?.close();
    await database?.drop();
  });

  /** Not ready, with a reason that names no table, column or statement. */
  async function expectSchemaNotReady() {
    const ready = await running.http.get('/health/ready');
    const body = expectProblem(ready, 503, { modelState: false });
    expect(body.type).toMatch(/not_ready$/);
    expect(body.detail).toBe(
      'The database schema is not the one this release expects; the service is not ready.',
    );
    expect(ready.text).not.toMatch(/sales_transaction|brokername|requirement_type|ALTER|DROP/);
  }

  /** A 500, never "the database does not answer" (503): the server answered. */
  function expectNotUnavailable(response: { status: number; text: string }) {
    expect(response.status).toBe(500);
    expect(response.text).not.toMatch(/database|retry/i);
    expectNoLeak(response.text);
  }

  it('fails readiness when a column is dropped, and requests are 500s, not "unavailable"', async () => {
    await alter(database, 'ALTER TABLE sales_transaction DROP COLUMN brokername');
    await expectSchemaNotReady();
    expectNotUnavailable(await running.http.get(`/api/Transaction/GetTransaction/${TRANSACTION}`));
  });

  it('fails readiness when a table is dropped, and requests are 500s, not "unavailable"', async () => {
    await alter(database, 'DROP TABLE agent_assignment');
    await expectSchemaNotReady();
    expectNotUnavailable(await running.http.get(`/api/Transaction/GetAgentHistory/${TRANSACTION}`));
  });

  it('reuses a check within SCHEMA_CHECK_INTERVAL_MS, then checks again', async () => {
    await running.close();
    running = await RunningApp.start(database.url, { SCHEMA_CHECK_INTERVAL_MS: '3000' });
    await running.http.get('/health/ready').expect(200);
    await alter(database, 'ALTER TABLE sales_transaction DROP COLUMN brokername');
    // The check of a moment ago still stands: probes do not each read the database's catalogue.
    await running.http.get('/health/ready').expect(200);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await expectSchemaNotReady();
  });

  it('is ready again once the schema is restored', async () => {
    await alter(database, 'ALTER TABLE sales_transaction DROP COLUMN brokername');
    await expectSchemaNotReady();
    await alter(database, 'ALTER TABLE sales_transaction ADD brokername text NULL');
    await running.http.get('/health/ready').expect(200);
  });
});
