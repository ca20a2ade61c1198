import { type INestApplication, type ModuleMetadata } from '@nestjs/common';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { moduleMap, mermaidOf, modulePage } from '../scripts/module-map';
import { createApp } from '../src/app.factory';
import { loadAppConfig } from '../src/config/app-config';
import { DATA_IMPORTED } from '../src/data-import';
import { AGENTS_CHANGED } from '../src/transaction';
import {
  TEST_LEDGER_SPLITS_CHANGED,
  TEST_LEDGER_RECOMPUTED,
} from './support/test-ledger/test-ledger.events';
import { TestLedgerModule } from './support/test-ledger/test-ledger.module';
import {
  EventHandlersModule,
  NOTIFICATION_SENT,
  TallyModule,
} from './support/event-handlers.module';
import { REPO_ROOT } from './support/processes';

const SOURCES = join(REPO_ROOT, 'src');

/** The application as `npm run modules` builds it, with `modules` mounted beside the service's. */
async function startApp(modules: ModuleMetadata['imports'] = []): Promise<INestApplication> {
  const config = loadAppConfig({
    DATABASE_URL: 'sqlite::memory:',
    DEMO_DATA: 'false',
    LOG_LEVEL: 'silent',
  });
  const app = await createApp(config, { logger: false, modules });
  await app.init();
  return app;
}

describe('the module map (npm run modules)', () => {
  it('is committed as docs/modules.md, current (run `npm run modules` after changing a module, its door or its events)', async () => {
    const app = await startApp();
    try {
      const page = await modulePage(moduleMap(app, REPO_ROOT, SOURCES), REPO_ROOT);
      expect(await readFile(join(REPO_ROOT, 'docs', 'modules.md'), 'utf8')).toBe(page);
    } finally {
      await app.close();
    }
  });

  it("shows each door's exports by kind, and which module imports which names of it", async () => {
    const app = await startApp();
    try {
      const map = moduleMap(app, REPO_ROOT, SOURCES);
      // The feature modules in name order; a module the team adds joins them without an edit here.
      const names = map.modules.map(({ name }) => name);
      expect(names).toEqual(expect.arrayContaining(['data-import', 'requirement', 'transaction']));
      expect(names).toEqual([...names].sort());
      const transaction = map.modules.find(({ name }) => name === 'transaction')!;
      expect(transaction.className).toBe('TransactionModule');
      expect(Object.fromEntries(transaction.door!)).toMatchObject({
        Module: ['TransactionModule'],
        Queries: ['TransactionQueries'],
        Events: ['AGENTS_CHANGED'],
        Records: expect.arrayContaining(['AgentsChangedDto', 'TransactionDto']) as unknown,
        Tables: expect.arrayContaining(['TRANSACTION_ENTITIES', 'TransactionEntity']) as unknown,
        Types: expect.arrayContaining(['AgentChain', 'TransactionAmounts']) as unknown,
      });
      expect(transaction.publishes).toEqual([AGENTS_CHANGED]);
      const dataImport = map.modules.find(({ name }) => name === 'data-import')!;
      expect(dataImport.publishes).toEqual([DATA_IMPORTED]);
      expect(dataImport.uses.get('transaction')).toEqual(
        expect.arrayContaining(['TRANSACTION_ENTITIES', 'TransactionDto']),
      );
      expect(mermaidOf(map)).toContain(
        'm_data_import -->|"AGENT_CHAIN_FIELDS<br/>AgentAssignmentEntity',
      );
      expect(mermaidOf(map)).toContain(
        'm_transaction -.->|publishes| e_transaction_agents_changed',
      );
    } finally {
      await app.close();
    }
  });

  it("shows a mounted module's handlers and batched reactions, each with how it runs, and what it publishes", async () => {
    const app = await startApp([TestLedgerModule, EventHandlersModule, TallyModule]);
    try {
      const map = moduleMap(app, REPO_ROOT, SOURCES);
      const ledger = map.modules.find(({ name }) => name === 'TestLedgerModule')!;
      expect(ledger.door).toBeUndefined();
      expect(ledger.publishes).toEqual([TEST_LEDGER_SPLITS_CHANGED, TEST_LEDGER_RECOMPUTED]);
      expect(ledger.handlers).toEqual([
        {
          name: 'TestLedger.agentsChanged',
          event: AGENTS_CHANGED,
          how: 'after commit, in batches',
        },
        { name: 'TestLedger.imported', event: DATA_IMPORTED, how: 'after commit' },
        {
          name: 'TestLedger.recompute',
          how: 'batched reaction, up to 500 keys a batch',
        },
      ]);
      const handlers = map.modules.find(({ name }) => name === 'EventHandlersModule')!;
      expect(handlers.publishes).toEqual([NOTIFICATION_SENT]);
      expect(handlers.handlers).toContainEqual({
        name: 'ChainGuard.agentsChanging',
        event: AGENTS_CHANGED,
        how: 'in the publishing transaction',
      });
      expect(handlers.handlers).toContainEqual({
        name: 'SlowRecount.recount',
        how: 'batched reaction, up to 400 keys a batch',
      });
      expect(map.modules.find(({ name }) => name === 'TallyModule')!.handlers).toEqual([
        {
          name: 'TransactionTally.backfill',
          how: 'batched reaction, up to 250 keys a batch, over every key once at its first start',
        },
      ]);
      const diagram = mermaidOf(map);
      expect(diagram).toContain(
        'e_transaction_agents_changed -.->|"TestLedger.agentsChanged<br/>after commit, in batches"| m_TestLedgerModule',
      );
      expect(diagram).toContain('m_TestLedgerModule -.->|publishes| e_test_ledger_splits_changed');
    } finally {
      await app.close();
    }
  });
});
