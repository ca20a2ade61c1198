import { DataSource, type MigrationInterface } from 'typeorm';
import { loadAppConfig } from '../src/config/app-config';
import { APP_ENTITIES } from '../src/app.entities';
import { dataSourceOptions } from '../src/database/data-source-options';
import { withServerDialect } from '../src/database/server-dialect';
import { WideTextColumns1795411875242 as MysqlWideTextColumns } from '../src/database/migrations/mysql/1795411875242-WideTextColumns';
import { AgentHistoryVersions1795875575502 as MysqlAgentHistoryVersions } from '../src/database/migrations/mysql/1795875575502-AgentHistoryVersions';
import { WideTextColumns1795411873512 as SqliteWideTextColumns } from '../src/database/migrations/sqlite/1795411873512-WideTextColumns';
import { AgentHistoryVersions1795875530975 as SqliteAgentHistoryVersions } from '../src/database/migrations/sqlite/1795875530975-AgentHistoryVersions';
import { REQUIREMENT_ENTITIES } from '../src/requirement/entities';
import { RequirementAcquisitionEntity } from '../src/requirement/entities/requirement-acquisition.entity';
import { RequirementTypeEntity } from '../src/requirement/entities/requirement-type.entity';
import { TransactionDto } from '../src/transaction/dto/transaction.dto';
import { TRANSACTION_ENTITIES } from '../src/transaction/entities';
import { AgentAssignmentEntity } from '../src/transaction/entities/agent-assignment.entity';
import { TransactionRequirementEntity } from '../src/transaction/entities/transaction-requirement.entity';
import { TransactionEntity } from '../src/transaction/entities/transaction.entity';
import { wireModelOf, pickWireScalars } from '../src/wire';
import { textOfLength, transactionRecord } from './support/fixtures';
import {
  createTestDatabase,
  type DatabaseKind,
  type TestDatabase,
  testDatabaseKinds,
} from './support/test-database';
import { RunningApp } from './support/test-app';
import { AGENT_NAME_FIELDS } from './support/update-agents-cases';

describe.each(testDatabaseKinds())('schema on %s', (kind) => {
  let database: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    const config = loadAppConfig({ DATABASE_URL: database.url }, { serving: false });
    dataSource = new DataSource(
      await withServerDialect({
        ...dataSourceOptions(config.database, APP_ENTITIES),
        migrationsRun: false,
      }),
    );
    await dataSource.initialize();
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it('is built by the migrations alone, and they match the entities exactly', async () => {
    expect(await dataSource.showMigrations()).toBe(true);
    await dataSource.runMigrations();
    expect(await dataSource.showMigrations()).toBe(false);
    const drift = await dataSource.driver.createSchemaBuilder().log();
    expect(drift.upQueries.map((query) => query.query)).toEqual([]);
  });

  it('reverts every migration back to an empty schema', async () => {
    for (let step = 0; step < dataSource.migrations.length; step++)
      await dataSource.undoLastMigration();
    const queryRunner = dataSource.createQueryRunner();
    try {
      for (const entity of dataSource.entityMetadatas) {
        expect(await queryRunner.hasTable(entity.tableName)).toBe(false);
      }
    } finally {
      await queryRunner.release();
    }
  });
});

/** The widening of text columns to 4000 characters, on each database; later migrations follow it. */
const WIDENING: Record<DatabaseKind, new () => MigrationInterface> = {
  sqlite: SqliteWideTextColumns,
  mariadb: MysqlWideTextColumns,
};

/** Text as long as the previous columns held. */
const longest255 = (seed: string) => textOfLength(seed, 255);

type Row = Record<string, unknown>;

describe.each(testDatabaseKinds())('widening text columns on %s', (kind) => {
  let database: TestDatabase;
  let dataSource: DataSource;
  let seeded: Record<string, Row[]>;
  /** The widening and the migrations after it, which the tests apply and revert. */
  let widenings: string[];

  /**
   * Every row of the tables the widening is about (the modules' tables it found; later migrations add
   * others), in key order; the history's JSON parsed, as MySQL reformats JSON.
   */
  async function snapshot(): Promise<Record<string, Row[]>> {
    const tables: Record<string, Row[]> = {};
    for (const entity of [...REQUIREMENT_ENTITIES, ...TRANSACTION_ENTITIES].map((type) =>
      dataSource.getMetadata(type),
    )) {
      const keys = entity.primaryColumns.map((column) => column.databaseName).join(', ');
      const rows: Row[] = await dataSource.query(
        `SELECT * FROM ${entity.tableName} ORDER BY ${keys}`,
      );
      tables[entity.tableName] = rows.map((row) =>
        typeof row.changes === 'string' ? { ...row, changes: JSON.parse(row.changes) } : row,
      );
    }
    return tables;
  }

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    const config = loadAppConfig({ DATABASE_URL: database.url }, { serving: false });
    const options = await withServerDialect(dataSourceOptions(config.database, APP_ENTITIES));
    const migrations = options.migrations as Array<new () => MigrationInterface>;
    widenings = migrations.slice(migrations.indexOf(WIDENING[kind])).map(({ name }) => name);
    // The schema before the widening, holding data at the previous columns' full length.
    const previous = new DataSource({
      ...options,
      migrationsRun: false,
      migrations: migrations.slice(0, migrations.indexOf(WIDENING[kind])),
    });
    await previous.initialize();
    try {
      await previous.runMigrations();
      await previous.getRepository(RequirementTypeEntity).insert({
        requirement_type_id: 1,
        description: longest255('type'),
        stamp: new Date('2026-01-15T01:00:00.000Z'),
      });
      await previous.getRepository(RequirementAcquisitionEntity).insert({
        requirement_id: 11,
        requirement_type_id: 1,
        required: longest255('required'),
        requirement_description: longest255('description'),
        stamp: null,
        submitted: true,
      });
      const transaction = pickWireScalars(TransactionDto, transactionRecord(7));
      for (const member of wireModelOf(TransactionDto).members) {
        if (member.kind === 'string') (transaction as Row)[member.name] = longest255(member.name);
      }
      await previous.getRepository(TransactionEntity).insert({
        ...transaction,
        transaction_id: 7,
        row_version: 1,
        reservationdate: new Date('2026-01-11T06:00:00.000Z'),
        date_added: null,
        stamp: new Date('2026-02-20T08:45:00.123Z'),
      });
      await previous
        .getRepository(TransactionRequirementEntity)
        .insert({ transaction_id: 7, requirement_id: 11, submitted: false, stamp: null });
      // The history's columns as they were: row_version came later.
      await previous
        .createQueryBuilder()
        .insert()
        .into(AgentAssignmentEntity, ['transaction_id', 'stamp', 'changed_by', 'changes'])
        .values(
          [1, 2].map((step) => ({
            transaction_id: 7,
            stamp: new Date(`2026-03-0${step}T00:00:00.000Z`),
            changed_by: 'gateway',
            changes: [
              { field: 'brokerid' as const, before: step, after: step + 1 },
              { field: 'brokername' as const, before: longest255('before'), after: null },
            ],
          })),
        )
        .execute();
    } finally {
      await previous.destroy();
    }
    dataSource = new DataSource({ ...options, migrationsRun: false });
    await dataSource.initialize();
    seeded = await snapshot();
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  const drift = async () =>
    (await dataSource.driver.createSchemaBuilder().log()).upQueries.map((query) => query.query);

  /** Tables with only the columns they had when seeded: later migrations add columns of their own. */
  const asSeeded = (tables: Record<string, Row[]>) =>
    Object.fromEntries(
      Object.entries(tables).map(([table, rows]) => {
        const [first] = seeded[table] ?? [];
        if (!first) return [table, rows];
        const columns = Object.keys(first);
        return [
          table,
          rows.map((row) => Object.fromEntries(columns.map((column) => [column, row[column]]))),
        ];
      }),
    );

  it('keeps every row as it was, and leaves the schema the entities describe', async () => {
    expect(seeded.sales_transaction).toHaveLength(1);
    const applied = await dataSource.runMigrations();
    expect(applied.map((migration) => migration.name)).toEqual(widenings);
    expect(asSeeded(await snapshot())).toEqual(seeded);
    expect(await drift()).toEqual([]);
  });

  it('reverts keeping every row, and the other tables keep their foreign keys', async () => {
    for (let step = 0; step < widenings.length; step++) await dataSource.undoLastMigration();
    expect(asSeeded(await snapshot())).toEqual(seeded);
    // Foreign keys of tables the revert did not rebuild still name the rebuilt ones: applying the
    // widening again leaves no difference from the entities.
    await dataSource.runMigrations();
    expect(asSeeded(await snapshot())).toEqual(seeded);
    expect(await drift()).toEqual([]);
  });

  it('then holds 4000 characters in every text column, and its keys still cascade', async () => {
    const full = (seed: string) => textOfLength(seed, 4000);
    for (const entity of [RequirementTypeEntity, RequirementAcquisitionEntity, TransactionEntity]) {
      const metadata = dataSource.getMetadata(entity);
      const textColumns = metadata.columns.filter((column) => column.type === 'text');
      expect(textColumns.length).toBeGreaterThan(0);
      const values = Object.fromEntries(
        textColumns.map((column) => [column.propertyName, full(column.propertyName)]),
      );
      const repository = dataSource.getRepository(entity);
      const [row] = await repository.find();
      await repository.update(metadata.getEntityIdMap(row)!, values);
      expect(await repository.findOneByOrFail(metadata.getEntityIdMap(row)!)).toMatchObject(values);
    }
    // The history holds a change of all seven names at their longest (about 170 kB of JSON), and
    // goes on numbering after the rows it kept.
    const history = dataSource.getRepository(AgentAssignmentEntity);
    const appended = await history.save({
      transaction_id: 7,
      stamp: new Date(),
      // A caller id of any length: a token's subject has no limit but the request header's.
      changed_by: textOfLength('caller', 5000),
      changes: AGENT_NAME_FIELDS.map((field) => ({
        field,
        before: full(`before ${field}`),
        after: full(`after ${field}`),
      })),
    });
    expect(appended.assignment_id).toBe(3);
    expect(await history.findOneByOrFail({ assignment_id: 3 })).toMatchObject({
      changed_by: appended.changed_by,
      changes: appended.changes,
    });

    await dataSource.getRepository(TransactionEntity).delete({ transaction_id: 7 });
    expect(await dataSource.getRepository(TransactionRequirementEntity).count()).toBe(0);
    expect(await history.count()).toBe(0);
    await dataSource.getRepository(RequirementTypeEntity).delete({ requirement_type_id: 1 });
    expect(await dataSource.getRepository(RequirementAcquisitionEntity).count()).toBe(0);
  });
});

/** The history's row_version, added on each database to entries written before it. */
const HISTORY_VERSIONS: Record<DatabaseKind, new () => MigrationInterface> = {
  sqlite: SqliteAgentHistoryVersions,
  mariadb: MysqlAgentHistoryVersions,
};

describe.each(testDatabaseKinds())('history written before its row_version, on %s', (kind) => {
  let database: TestDatabase;
  let running: RunningApp | undefined;

  /**
   * Transactions as the previous release left them: 1 never changed; 2 changed twice by agents only
   * (version 3); 3 changed twice by agents and once otherwise (an import that changed no agent:
   * version 4); 4 changed once (version 2). Their entries interleave, as calls on several do.
   */
  const VERSIONS: Record<number, number> = { 1: 1, 2: 3, 3: 4, 4: 2 };
  const ENTRIES = [2, 4, 3, 2, 3];

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    const config = loadAppConfig({ DATABASE_URL: database.url }, { serving: false });
    const options = await withServerDialect(dataSourceOptions(config.database, APP_ENTITIES));
    const migrations = options.migrations as Array<new () => MigrationInterface>;
    const previous = new DataSource({
      ...options,
      migrationsRun: false,
      migrations: migrations.slice(0, migrations.indexOf(HISTORY_VERSIONS[kind])),
    });
    await previous.initialize();
    try {
      await previous.runMigrations();
      for (const [id, version] of Object.entries(VERSIONS))
        await previous.query(
          'INSERT INTO sales_transaction (transaction_id, row_version, financetype, brokerid) VALUES (?, ?, ?, ?)',
          [Number(id), version, 'Cash', 11],
        );
      for (const [index, id] of ENTRIES.entries())
        await previous.query(
          'INSERT INTO agent_assignment (transaction_id, stamp, changed_by, changes) VALUES (?, ?, NULL, ?)',
          [
            id,
            `2026-03-0${index + 1} 00:00:00.000`,
            JSON.stringify([{ field: 'brokername', before: `Name ${index}`, after: null }]),
          ],
        );
    } finally {
      await previous.destroy();
    }
    // The new release starts on it and migrates (MIGRATIONS_RUN=true, as a deployment does).
    running = await RunningApp.start(database.url);
  });

  afterAll(async () => {
    await running?.close();
    await database?.drop();
  });

  const versionsOf = async (id: number) =>
    (
      (await running!.http.get(`/api/Transaction/GetAgentHistory/${id}`).expect(200)).body as Row[]
    ).map((entry) => entry.row_version);

  it('numbers the entries of a transaction only its agent changes ever changed, and leaves the rest null', async () => {
    expect(await versionsOf(1)).toEqual([]);
    expect(await versionsOf(2)).toEqual([2, 3]);
    // Which of its entries came before its other change cannot be known: none is guessed.
    expect(await versionsOf(3)).toEqual([null, null]);
    expect(await versionsOf(4)).toEqual([2]);
  });

  it('records the version of every change made after it', async () => {
    for (const id of [2, 3])
      await running!.http
        .post('/api/Transaction/UpdateAgents')
        .send({ transaction_id: id, financetype: 'Cash', brokerid: 12 })
        .expect(204);
    expect(await versionsOf(2)).toEqual([2, 3, 4]);
    expect(await versionsOf(3)).toEqual([null, null, 5]);
  });
});
