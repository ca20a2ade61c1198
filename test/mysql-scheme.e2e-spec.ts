import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { IMPORT_MAIN, REPO_ROOT, runNode, ServiceProcess } from './support/processes';
import { createTestDatabase, type TestDatabase, describeOnMariaDb } from './support/test-database';

const DEMO = join(REPO_ROOT, 'dist', 'src', 'data-import', 'demo');
const TYPEORM_CLI = require.resolve('typeorm/cli.js');
const ORMCONFIG = join(REPO_ROOT, 'dist', 'ormconfig.js');

/**
 * Operators call MariaDB "MySQL" and write its URL either way: whichever scheme DATABASE_URL uses, the
 * migrations, the import (whose locking reads are written in the server's own SQL: MySQL 8's
 * `FOR SHARE` is a syntax error on MariaDB), the service and its schema check work alike.
 */
describeOnMariaDb.each(['mysql', 'mariadb'])('a MariaDB server named %s://', (scheme) => {
  let database: TestDatabase;
  let url: string;
  let directory: string;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    database = await createTestDatabase('mariadb');
    url = database.url.replace(/^\w+:/, `${scheme}:`);
    directory = await mkdtemp(join(tmpdir(), 'property-sales-scheme-'));
  });

  afterAll(async () => {
    await service?.stop();
    await database?.drop();
    await rm(directory, { recursive: true, force: true });
  });

  const importDemo = () =>
    runNode(
      IMPORT_MAIN,
      [
        '--requirements',
        join(DEMO, 'requirements.json'),
        '--transactions',
        join(DEMO, 'transactions.json'),
      ],
      { env: { DATABASE_URL: url } },
    );

  it('runs the migrations through the TypeORM CLI', async () => {
    const result = await runNode(TYPEORM_CLI, ['migration:run', '-d', ORMCONFIG], {
      env: { DATABASE_URL: url },
    });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    expect(result.stdout).toContain('has been executed successfully');
  });

  it('imports, and imports again over the stored data', async () => {
    const first = await importDemo();
    expect({ code: first.code, stderr: first.stderr }).toMatchObject({ code: 0 });
    expect(first.stdout).toMatch(/transactions: 6 created, 0 updated/);
    const again = await importDemo();
    expect({ code: again.code, stderr: again.stderr }).toMatchObject({ code: 0 });
    expect(again.stdout).toMatch(/transactions: 0 created, 6 updated/);
  });

  it('serves: ready (the schema matches), UpdateAgents applied and read back', async () => {
    service = await ServiceProcess.start({
      cwd: directory,
      env: { DATABASE_URL: url, AUTH_MODE: 'none', DEMO_DATA: 'false' },
    });
    await service.ready();
    const http = request(service.baseUrl);
    await http.get('/health/ready').expect(200);
    await http
      .post('/api/Transaction/UpdateAgents')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ transaction_id: 1001, financetype: 'Cash', brokerid: 77 }))
      .expect(204);
    const read = await http.get('/api/Transaction/GetTransaction/1001').expect(200);
    expect(read.body).toMatchObject({ transaction_id: 1001, brokerid: 77 });
  });
});
