import { type ModuleMetadata } from '@nestjs/common';
import { FEATURE_MODULES } from '../src/app.module';
import { DataImportModule } from '../src/data-import';
import { TEST_LEDGER_SPLITS_CHANGED } from './support/test-ledger/test-ledger.events';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { asJson, Scenario } from './support/scenario';
import { TestLedgerModule } from './support/test-ledger/test-ledger.module';
import { RunningApp } from './support/test-app';

type Feature = NonNullable<ModuleMetadata['imports']>[number];

/** The module's routes, as the application it is mounted in serves them. */
async function routesOf(running: RunningApp): Promise<string[]> {
  const document = (await running.http.get('/swagger-json').expect(200)).body as {
    paths: Record<string, Record<string, unknown>>;
  };
  return Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.keys(operations).map((method) => `${method} ${path}`),
  );
}

/**
 * Each feature module mounted alone on the shared modules, with what it imports and nothing else, as
 * Spring Modulith's @ApplicationModuleTest bootstraps one: it starts, serves its own routes and no
 * other module's, and a module that reacts to another's events has the publisher through its
 * imports. A module that needs another's tables, providers or events without importing it fails
 * here, not in production on the day the other one moves.
 */
describe('each feature module, mounted alone', () => {
  const all: { name: string; feature: Feature }[] = [
    ...FEATURE_MODULES.map((feature) => ({ name: feature.name, feature: feature as Feature })),
    { name: 'TestLedgerModule (the reacting test module)', feature: TestLedgerModule },
  ];
  let complete: string[];

  beforeAll(async () => {
    const running = await RunningApp.start('sqlite::memory:', {}, [], { reactor: false });
    try {
      complete = await routesOf(running);
    } finally {
      await running.close();
    }
  });

  it.each(all)(
    '$name starts with what it imports, and serves its own routes alone',
    async ({ feature }) => {
      const running = await RunningApp.start('sqlite::memory:', {}, [], {
        reactor: false,
        features: [feature],
      });
      try {
        const routes = await routesOf(running);
        // Its routes are some of the service's, and fewer unless it imports every other module.
        for (const route of routes) expect(complete).toContain(route);
        expect(routes.length).toBeLessThan(complete.length);
        // Every route it serves answers, none with a server error.
        for (const route of routes.filter((entry) => entry.startsWith('GET ')))
          expect(
            (await running.http.get(route.slice(4).replace(/\{[^}]+\}/g, '1'))).status,
          ).toBeLessThan(500);
        expect((await running.http.get('/health/ready')).status).toBe(200);
      } finally {
        await running.close();
      }
    },
  );

  it('reacts, mounted alone, to the events of the module it imports', async () => {
    // The import (to seed a transaction) and the reacting module, which brings the transaction module.
    const running = await RunningApp.start('sqlite::memory:', {}, [], {
      features: [DataImportModule],
    });
    try {
      await running.seed({ requirements: CATALOGUE, transactions: [transactionRecord(7)] });
      const routes = await routesOf(running);
      expect(routes).not.toContain('get /api/Requirement/GetRequirements');
      const event = await new Scenario(running.app)
        .stimulate(() =>
          running.http
            .post('/api/Transaction/UpdateAgents')
            .send({ transaction_id: 7, financetype: 'Cash', managerid: 5 })
            .expect(204),
        )
        .andWaitForEventOfType(TEST_LEDGER_SPLITS_CHANGED)
        .toArrive();
      expect(asJson(event.data)).toMatchObject({
        transaction_id: 7,
        splits: expect.arrayContaining([
          expect.objectContaining({ role: 'managerid', agent_id: 5 }),
        ]),
      });
    } finally {
      await running.close();
    }
  });
});
