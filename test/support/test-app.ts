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
import {
  createTestDatabase,
  type DatabaseKind,
  type TestDatabase,
  testDatabaseKinds,
} from './test-database';

export type Environment = Record<string, string>;

/** The service listening on a loopback port, on one test database. */
export class RunningApp {
  private constructor(
    readonly app: INestApplication,
    readonly config: AppConfig,
    readonly baseUrl: string,
  ) {}

  /** `modules`: mounted beside the service's own, as a suite mounts a module of its own. */
  static async start(
    databaseUrl: string,
    env: Environment = {},
    modules?: ModuleMetadata['imports'],
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
    const app = await createApp(config, { logger: false, modules });
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
  ) {}

  get http() {
    return this.running.http;
  }

  async restart(env: Environment = {}): Promise<void> {
    await this.running.close();
    this.running = await RunningApp.start(this.database.url, { ...this.env, ...env });
  }
}

function describeOn(
  kinds: readonly DatabaseKind[],
  title: string,
  body: (context: SuiteContext) => void,
  env: Environment,
): void {
  for (const kind of kinds) {
    describe(`${title} [${kind}]`, () => {
      const context = new SuiteContext(kind, env);
      beforeAll(async () => {
        context.database = await createTestDatabase(kind);
        context.running = await RunningApp.start(context.database.url, env);
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
 * tests, and both are removed after.
 */
export function describeOnEachDatabase(
  title: string,
  body: (context: SuiteContext) => void,
  env: Environment = {},
): void {
  describeOn(testDatabaseKinds(), title, body, env);
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
): void {
  describeOn(['sqlite'], title, body, env);
}

/**
 * A describe for what exists on MariaDB alone (read replicas, a server's outage): skipped, and
 * reported as skipped, when TEST_DATABASES leaves MariaDB out; CI never does.
 */
export const describeOnMariaDb = testDatabaseKinds().includes('mariadb') ? describe : describe.skip;
