import { MigrationInterface, QueryRunner } from 'typeorm';

/** The outbox of integration events, and each consumer's checkpoint. */
export class EventOutbox1795712384891 implements MigrationInterface {
  name = 'EventOutbox1795712384891';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "event_checkpoint" ("consumer" varchar(255) PRIMARY KEY NOT NULL, "position" bigint NOT NULL)`,
    );
    await queryRunner.query(
      `CREATE TABLE "event_outbox" ("sequence" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "position" bigint, "event_id" varchar(36) NOT NULL, "routing_key" varchar(255) NOT NULL, "time" datetime(3) NOT NULL, "body" json NOT NULL)`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_event_outbox_position" ON "event_outbox" ("position") `,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "IDX_event_outbox_position"`);
    await queryRunner.query(`DROP TABLE "event_outbox"`);
    await queryRunner.query(`DROP TABLE "event_checkpoint"`);
  }
}
