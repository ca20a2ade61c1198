import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import request from 'supertest';
import { runNode, SERVICE_MAIN, ServiceProcess } from './support/processes';
import { createTestDatabase, type TestDatabase, testDatabaseKinds } from './support/test-database';

type Json = Record<string, unknown>;

const SQLITE_FILE = join('data', 'property-sales.sqlite');

/** Working directories and service processes of one file, all removed and stopped after. */
const directories: string[] = [];
const services: ServiceProcess[] = [];

async function workingDirectory(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'property-sales-first-run-'));
  directories.push(directory);
  return directory;
}

async function startService(cwd: string, env: Record<string, string> = {}) {
  const service = await ServiceProcess.start({ cwd, env });
  services.push(service);
  await service.ready();
  return service;
}

afterEach(async () => {
  // Every test stops what it started; this catches the ones that failed before doing so.
  await Promise.allSettled(services.splice(0).map((service) => service.stop()));
});

afterAll(async () => {
  await Promise.all(
    directories.splice(0).map((directory) => rm(directory, { recursive: true, force: true })),
  );
});

const updateBrokerid = (service: ServiceProcess, transactionId: number, brokerid: number) =>
  request(service.baseUrl)
    .post('/api/Transaction/UpdateAgents')
    .set('Content-Type', 'application/json')
    .send(JSON.stringify({ transaction_id: transactionId, financetype: 'Cash', brokerid }));

const kinds = testDatabaseKinds();

if (kinds.includes('sqlite')) {
  describe('first run on the embedded SQLite database', () => {
    let directory: string;
    let firstCatalogue: string;

    it('creates data/property-sales.sqlite in the working directory, loads the demo data and serves it', async () => {
      directory = await workingDirectory();
      const service = await startService(directory);
      expect(existsSync(join(directory, SQLITE_FILE))).toBe(true);

      const catalogue = await request(service.baseUrl)
        .get('/api/Requirement/GetRequirements')
        .expect(200);
      firstCatalogue = catalogue.text;
      const types = catalogue.body as Json[];
      expect(types).toHaveLength(4);
      for (const type of types) expect((type.Acquisition as Json[]).length).toBeGreaterThan(0);

      const demo = await request(service.baseUrl)
        .get('/api/Transaction/GetTransaction/1001')
        .expect(200);
      expect(demo.body).toMatchObject({ transaction_id: 1001, locked: false, brokerid: 11 });
      expect((demo.body as Json).requirements).not.toEqual([]);

      // Some demo transactions are locked: their agents cannot change.
      for (const locked of [1003, 1005]) {
        const response = await updateBrokerid(service, locked, 99);
        expect(response.status).toBe(409);
        expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      }
      await updateBrokerid(service, 1001, 77).expect(204);

      const stopped = await service.stop();
      expect(stopped.code === 0 || stopped.signal === 'SIGTERM').toBe(true);
    });

    it('keeps the data on the next start and does not load the demo data again', async () => {
      const service = await startService(directory);
      const catalogue = await request(service.baseUrl)
        .get('/api/Requirement/GetRequirements')
        .expect(200);
      expect(catalogue.text).toBe(firstCatalogue);
      // Loading the demo data again would have put brokerid back to 11.
      const kept = await request(service.baseUrl)
        .get('/api/Transaction/GetTransaction/1001')
        .expect(200);
      expect(kept.body).toMatchObject({ brokerid: 77 });
      const history = await request(service.baseUrl)
        .get('/api/Transaction/GetAgentHistory/1001')
        .expect(200);
      expect(history.body).toHaveLength(1);
      await service.stop();
    });

    it('leaves an empty database empty with DEMO_DATA=false', async () => {
      const empty = await workingDirectory();
      const service = await startService(empty, { DEMO_DATA: 'false' });
      expect(existsSync(join(empty, SQLITE_FILE))).toBe(true);
      const catalogue = await request(service.baseUrl)
        .get('/api/Requirement/GetRequirements')
        .expect(200);
      expect(catalogue.text).toBe('[]');
      await request(service.baseUrl).get('/api/Transaction/GetTransaction/1001').expect(404);
      await service.stop();
    });
  });
}

if (kinds.includes('mariadb')) {
  describe('first run on MariaDB', () => {
    let database: TestDatabase;

    const tables = async (): Promise<string[]> => {
      const connection = await createConnection({
        uri: database.url.replace(/^mariadb:/, 'mysql:'),
      });
      try {
        const [rows] = await connection.query('SHOW TABLES');
        return (rows as Record<string, string>[]).map((row) => Object.values(row)[0]);
      } finally {
        await connection.end();
      }
    };

    beforeAll(async () => {
      database = await createTestDatabase('mariadb');
    });

    afterAll(async () => {
      await database?.drop();
    });

    it('refuses to start without MIGRATIONS_RUN, in one line, creating nothing', async () => {
      const directory = await workingDirectory();
      const result = await runNode(SERVICE_MAIN, [], {
        cwd: directory,
        env: { DATABASE_URL: database.url, AUTH_MODE: 'none' },
        timeoutMs: 30000,
      });
      expect(result.code).toBe(1);
      const lines = result.stderr
        .split('\n')
        .filter((line) => line.includes('The database schema is behind this release'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/(\d+) of \1 migrations are pending/);
      expect(lines[0]).toContain('MIGRATIONS_RUN=true');
      expect(await tables()).toEqual([]);
      expect(existsSync(join(directory, 'data'))).toBe(false);
    });

    it('creates the tables with MIGRATIONS_RUN=true and leaves the catalogue empty', async () => {
      const directory = await workingDirectory();
      const service = await startService(directory, {
        DATABASE_URL: database.url,
        AUTH_MODE: 'none',
        MIGRATIONS_RUN: 'true',
      });
      expect((await tables()).length).toBeGreaterThan(1);
      const catalogue = await request(service.baseUrl)
        .get('/api/Requirement/GetRequirements')
        .expect(200);
      expect(catalogue.text).toBe('[]');
      await request(service.baseUrl).get('/api/Transaction/GetTransaction/1001').expect(404);
      expect(existsSync(join(directory, 'data'))).toBe(false);
      await service.stop();
    });
  });
}

describe('a bad configuration', () => {
  it('stops the service before it does anything, naming every bad variable', async () => {
    const directory = await workingDirectory();
    const result = await runNode(SERVICE_MAIN, [], {
      cwd: directory,
      env: { PORT: 'abc', APP_TIMEZONE: 'Mars/Base' },
      timeoutMs: 15000,
    });
    expect(result.signal).toBeNull();
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('PORT');
    expect(result.stderr).toContain('abc');
    expect(result.stderr).toContain('APP_TIMEZONE');
    expect(existsSync(join(directory, 'data'))).toBe(false);
  });
});
