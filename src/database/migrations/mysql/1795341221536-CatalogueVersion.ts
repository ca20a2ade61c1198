import { MigrationInterface, QueryRunner } from 'typeorm';

export class CatalogueVersion1795341221536 implements MigrationInterface {
  name = 'CatalogueVersion1795341221536';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE \`catalogue_version\` (\`id\` int NOT NULL, \`version\` int NOT NULL, PRIMARY KEY (\`id\`)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`,
    );
    await queryRunner.query(
      `INSERT INTO \`catalogue_version\` (\`id\`, \`version\`) VALUES (1, 1)`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE \`catalogue_version\``);
  }
}
