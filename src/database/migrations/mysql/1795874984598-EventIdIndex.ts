import { MigrationInterface, QueryRunner } from 'typeorm';

/** The outbox's events by their CloudEvents id: where the event feed finds a reader's last event. */
export class EventIdIndex1795874984598 implements MigrationInterface {
  name = 'EventIdIndex1795874984598';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX \`IDX_event_outbox_event_id\` ON \`event_outbox\` (\`event_id\`)`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX \`IDX_event_outbox_event_id\` ON \`event_outbox\``);
  }
}
