import { DataSource } from 'typeorm';
import { loadAppConfig } from '../src/config/app-config';
import { dataSourceOptions } from '../src/database/data-source-options';
import { createTestDatabase, type TestDatabase, testDatabaseKinds } from './support/test-database';

describe.each(testDatabaseKinds())('schema on %s', (kind) => {
  let database: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    const config = loadAppConfig({ DATABASE_URL: database.url }, { serving: false });
    dataSource = new DataSource({ ...dataSourceOptions(config.database), migrationsRun: false });
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
