import { MigrationInterface, QueryRunner } from 'typeorm';

export class CatalogueVersion1795341219492 implements MigrationInterface {
  name = 'CatalogueVersion1795341219492';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "catalogue_version" ("id" integer PRIMARY KEY NOT NULL, "version" integer NOT NULL)`,
    );
    await queryRunner.query(`INSERT INTO "catalogue_version" ("id", "version") VALUES (1, 1)`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "catalogue_version"`);
  }
}
