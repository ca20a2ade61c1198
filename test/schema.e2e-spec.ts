import { DataSource, type MigrationInterface } from 'typeorm';
import { loadAppConfig } from '../src/config/app-config';
import { APP_ENTITIES } from '../src/app.entities';
import { dataSourceOptions } from '../src/database/data-source-options';
import { withServerDialect } from '../src/database/server-dialect';
import { WideTextColumns1795411875242 as MysqlWideTextColumns } from '../src/database/migrations/mysql/1795411875242-WideTextColumns';
import { WideTextColumns1795411873512 as SqliteWideTextColumns } from '../src/database/migrations/sqlite/1795411873512-WideTextColumns';
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
        reservationdate: new Date('2026-01-11T06:00:00.000Z'),
        date_added: null,
        stamp: new Date('2026-02-20T08:45:00.123Z'),
      });
      await previous
        .getRepository(TransactionRequirementEntity)
        .insert({ transaction_id: 7, requirement_id: 11, submitted: false, stamp: null });
      await previous.getRepository(AgentAssignmentEntity).insert(
        [1, 2].map((step) => ({
          transaction_id: 7,
          stamp: new Date(`2026-03-0${step}T00:00:00.000Z`),
          changed_by: 'gateway',
          changes: [
            { field: 'brokerid' as const, before: step, after: step + 1 },
            { field: 'brokername' as const, before: longest255('before'), after: null },
          ],
        })),
      );
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

  it('keeps every row as it was, and leaves the schema the entities describe', async () => {
    expect(seeded.sales_transaction).toHaveLength(1);
    const applied = await dataSource.runMigrations();
    expect(applied.map((migration) => migration.name)).toEqual(widenings);
    expect(await snapshot()).toEqual(seeded);
    expect(await drift()).toEqual([]);
  });

  it('reverts keeping every row, and the other tables keep their foreign keys', async () => {
    for (let step = 0; step < widenings.length; step++) await dataSource.undoLastMigration();
    expect(await snapshot()).toEqual(seeded);
    // Foreign keys of tables the revert did not rebuild still name the rebuilt ones: applying the
    // widening again leaves no difference from the entities.
    await dataSource.runMigrations();
    expect(await snapshot()).toEqual(seeded);
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
