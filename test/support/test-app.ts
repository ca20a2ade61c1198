import { type INestApplication, type ModuleMetadata } from '@nestjs/common';
import { type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import request from 'supertest';
import { createApp } from '../../src/app.factory';
import { type AppConfig, loadAppConfig } from '../../src/config/app-config';
import { validateRecords } from '../../src/data-import/import-records';
import { ImportService } from '../../src/data-import/import.service';
import { RequirementDto } from '../../src/requirement/dto/requirement.dto';
import { TransactionDto } from '../../src/transaction/dto/transaction.dto';
import { JsonCodec } from '../../src/wire';
import { TestLedgerModule } from './test-ledger/test-ledger.module';
import { ScenarioModule } from './scenario';
import {
  createTestDatabase,
  type DatabaseKind,
  type TestDatabase,
  testDatabaseKinds,
} from './test-database';

export type Environment = Record<string, string>;

export interface StartOptions {
  /**
   * The feature modules mounted: all unless told. A module test mounts its module alone (with what it
   * imports), as Spring Modulith's @ApplicationModuleTest does.
   */
  readonly features?: ModuleMetadata['imports'];
  /**
   * Whether the reacting test module (TestLedgerModule) is mounted: it is in every suite, so that
   * each proves the service with a module that reacts to events and publishes its own. Off only where
   * a suite's subject is a service with nothing registered.
   */
  readonly reactor?: boolean;
  /**
   * Whether Scenario can observe every event (ScenarioModule: the outbox stores every kind, as with a
   * broker). Off only where a suite's subject is which events the outbox stores.
   */
  readonly scenario?: boolean;
}

/** The service listening on a loopback port, on one test database. */
export class RunningApp {
  private constructor(
    readonly app: INestApplication,
    readonly config: AppConfig,
    readonly baseUrl: string,
  ) {}

  /**
   * `modules`: mounted beside the service's own, the reacting test module and Scenario's, as a suite
   * mounts a module of its own.
   */
  static async start(
    databaseUrl: string,
    env: Environment = {},
    modules: ModuleMetadata['imports'] = [],
    { reactor = true, scenario = true, features }: StartOptions = {},
  ): Promise<RunningApp> {
    const config = loadAppConfig({
      DATABASE_URL: databaseUrl,
      DEMO_DATA: 'false',
      MIGRATIONS_RUN: 'true',
      LOG_LEVEL: 'silent',
      // The MariaDB runs say it explicitly, as production must.
      AUTH_MODE: 'none',
      ...env,
    });
    const app = await createApp(config, {
      logger: false,
      modules: [
        ...(reactor ? [TestLedgerModule] : []),
        ...(scenario ? [ScenarioModule] : []),
        ...modules,
      ],
      features,
    });
    // On a port of its own, unless the suite named one (an address the configuration must know).
    await app.listen(env.PORT === undefined ? 0 : config.port, '127.0.0.1');
    const { port } = (app.getHttpServer() as Server).address() as AddressInfo;
    return new RunningApp(app, config, `http://127.0.0.1:${port}`);
  }

  /** A supertest agent on the real listening server. */
  get http() {
    return request(this.baseUrl);
  }

  /** Loads records in the service's JSON shape through the import path and its validation. */
  seed(data: SeedData): Promise<void> {
    return seedApp(this.app, data);
  }

  close(): Promise<void> {
    return this.app.close();
  }
}

/**
 * Resolves once every consumer of the service's outbox has taken every committed event (the reacting
 * module's handlers included) and no batched reaction runs: what a suite that counts or times a
 * request's work waits for first. `service`: one in this process (RunningApp) or a spawned one
 * (ServiceProcess), its /metrics on its own port.
 */
export async function relayIdle(
  service: { readonly baseUrl: string },
  timeoutMs = 10_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const metrics = (await request(service.baseUrl).get('/metrics').expect(200)).text;
    const busy = [
      ...metrics.matchAll(/^(?:events_pending|event_reactions_running)\{[^}]*\} (\d+)$/gm),
    ].filter(([, value]) => value !== '0');
    if (busy.length === 0) return;
    if (Date.now() > until) throw new Error(`The relay is not idle: ${busy.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export interface SeedData {
  readonly requirements?: readonly object[];
  readonly transactions?: readonly object[];
}

/** Loads records into an application's database through the import path and its validation. */
export async function seedApp(app: INestApplication, data: SeedData): Promise<void> {
  const codec = new JsonCodec();
  const importer = app.get(ImportService);
  await importer.run({
    requirements: data.requirements && {
      source: 'fixture',
      records: validateRecords(
        codec,
        JSON.stringify(data.requirements),
        RequirementDto,
        'fixture',
        'requirement_type_id',
      ),
    },
    transactions: data.transactions && {
      source: 'fixture',
      records: validateRecords(
        codec,
        JSON.stringify(data.transactions),
        TransactionDto,
        'fixture',
        'transaction_id',
      ),
    },
  });
}

/** What a suite sees of its database and service; `restart` starts a new service on the same data. */
export class SuiteContext {
  database!: TestDatabase;
  running!: RunningApp;

  constructor(
    readonly kind: DatabaseKind,
    private readonly env: Environment,
    private readonly modules: ModuleMetadata['imports'] = [],
    private readonly features?: ModuleMetadata['imports'],
  ) {}

  /** Starts the suite's service on its database. */
  async start(env: Environment = {}): Promise<void> {
    this.running = await RunningApp.start(
      this.database.url,
      { ...this.env, ...env },
      this.modules,
      { features: this.features },
    );
  }

  get http() {
    return this.running.http;
  }

  /** Stops the service, runs `meanwhile` (on a stopped service's data), and starts a new one. */
  async restart(env: Environment = {}, meanwhile?: () => Promise<void>): Promise<void> {
    await this.running.close();
    await meanwhile?.();
    await this.start(env);
  }
}

function describeOn(
  kinds: readonly DatabaseKind[],
  title: string,
  body: (context: SuiteContext) => void,
  env: Environment,
  modules: ModuleMetadata['imports'],
  features: ModuleMetadata['imports'] | undefined,
): void {
  for (const kind of kinds) {
    describe(`${title} [${kind}]`, () => {
      const context = new SuiteContext(kind, env, modules, features);
      beforeAll(async () => {
        context.database = await createTestDatabase(kind);
        await context.start();
      });
      afterAll(async () => {
        await context.running?.close();
        await context.database?.drop();
      });
      body(context);
    });
  }
}

/**
 * Declares a suite once per test database: each gets a fresh database and a running service before its
 * tests, and both are removed after. `modules` are mounted beside the service's own; `features`, when
 * given, are the feature modules mounted (all unless told): a suite that counts what every module
 * publishes mounts those it reasons about, so that a module added to the service leaves it true.
 */
export function describeOnEachDatabase(
  title: string,
  body: (context: SuiteContext) => void,
  env: Environment = {},
  modules: ModuleMetadata['imports'] = [],
  features?: ModuleMetadata['imports'],
): void {
  describeOn(testDatabaseKinds(), title, body, env, modules, features);
}

/**
 * Declares a suite on the embedded SQLite alone, as describeOnEachDatabase does: for what no database
 * can answer differently (routing, negotiation, authentication, limits, bodies refused before they are
 * read into a record). Whatever stores, reads or locks data runs on each database.
 */
export function describeOnSqlite(
  title: string,
  body: (context: SuiteContext) => void,
  env: Environment = {},
  modules: ModuleMetadata['imports'] = [],
  features?: ModuleMetadata['imports'],
): void {
  describeOn(['sqlite'], title, body, env, modules, features);
}

export { describeOnMariaDb } from './test-database';
