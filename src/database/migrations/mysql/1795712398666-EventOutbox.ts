import { MigrationInterface, QueryRunner } from 'typeorm';

/** The outbox of integration events, and each consumer's checkpoint. */
export class EventOutbox1795712398666 implements MigrationInterface {
  name = 'EventOutbox1795712398666';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE \`event_checkpoint\` (\`consumer\` varchar(255) NOT NULL, \`position\` bigint NOT NULL, PRIMARY KEY (\`consumer\`)) ENGINE=InnoDB`,
    );
    await queryRunner.query(
      `CREATE TABLE \`event_outbox\` (\`sequence\` int NOT NULL AUTO_INCREMENT, \`position\` bigint NULL, \`event_id\` varchar(36) NOT NULL, \`routing_key\` varchar(255) NOT NULL, \`time\` datetime(3) NOT NULL, \`body\` json NOT NULL, INDEX \`IDX_event_outbox_position\` (\`position\`), PRIMARY KEY (\`sequence\`)) ENGINE=InnoDB`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX \`IDX_event_outbox_position\` ON \`event_outbox\``);
    await queryRunner.query(`DROP TABLE \`event_outbox\``);
    await queryRunner.query(`DROP TABLE \`event_checkpoint\``);
  }
}
