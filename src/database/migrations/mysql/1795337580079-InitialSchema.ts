import { MigrationInterface, QueryRunner } from 'typeorm';

export class InitialSchema1795337580079 implements MigrationInterface {
  name = 'InitialSchema1795337580079';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE \`requirement_type\` (\`requirement_type_id\` int NOT NULL, \`description\` varchar(255) NULL, \`stamp\` datetime(3) NULL, PRIMARY KEY (\`requirement_type_id\`)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`,
    );
    await queryRunner.query(
      `CREATE TABLE \`requirement_acquisition\` (\`requirement_id\` int NOT NULL, \`requirement_type_id\` int NOT NULL, \`required\` varchar(255) NULL, \`requirement_description\` varchar(255) NULL, \`stamp\` datetime(3) NULL, \`submitted\` tinyint NULL, INDEX \`IDX_requirement_acquisition_type\` (\`requirement_type_id\`, \`requirement_id\`), PRIMARY KEY (\`requirement_id\`)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`,
    );
    await queryRunner.query(
      `CREATE TABLE \`transaction_requirement\` (\`transaction_id\` int NOT NULL, \`requirement_id\` int NOT NULL, \`submitted\` tinyint NULL, \`stamp\` datetime(3) NULL, PRIMARY KEY (\`transaction_id\`, \`requirement_id\`)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`,
    );
    await queryRunner.query(
      `CREATE TABLE \`sales_transaction\` (\`transaction_id\` int NOT NULL, \`row_version\` int NOT NULL, \`property_id\` int NULL, \`reservation_id\` int NULL, \`unit_id\` varchar(255) NULL, \`developer_id\` int NULL, \`developer\` varchar(255) NULL, \`subdivision\` varchar(255) NULL, \`block\` varchar(255) NULL, \`lot\` varchar(255) NULL, \`client_id\` int NULL, \`coborrower_id\` int NULL, \`brokerid\` int NULL, \`directorid\` int NULL, \`directorid_recruit\` int NULL, \`managerid\` int NULL, \`managerid_recruit\` int NULL, \`salesagentid\` int NULL, \`salesagentid_recruit\` int NULL, \`requirement_type_id\` int NULL, \`submitted_requirements\` text NULL, \`financetype\` varchar(255) NOT NULL, \`interestrate\` decimal(15,4) NULL, \`loanterm\` int NULL, \`sellingprice\` decimal(15,4) NULL, \`downpayment\` decimal(15,4) NULL, \`dp_payableinmonths\` int NULL, \`reservation\` decimal(15,4) NULL, \`discount\` decimal(15,4) NULL, \`miscellaneous\` decimal(15,4) NULL, \`TotalPayments\` decimal(15,4) NULL, \`clientname\` varchar(255) NULL, \`coborrowername\` varchar(255) NULL, \`brokername\` varchar(255) NULL, \`directorname\` varchar(255) NULL, \`directorname_recruit\` varchar(255) NULL, \`managername\` varchar(255) NULL, \`managername_recruit\` varchar(255) NULL, \`salesagentname\` varchar(255) NULL, \`salesagentname_recruit\` varchar(255) NULL, \`requirementtypename\` varchar(255) NULL, \`requirements_complete\` tinyint NULL, \`reservation_paid\` tinyint NULL, \`reservationdate\` datetime(3) NULL, \`status\` varchar(255) NULL, \`locked\` tinyint NULL, \`preparedby_userid\` varchar(255) NULL, \`date_added\` datetime(3) NULL, \`stamp\` datetime(3) NULL, PRIMARY KEY (\`transaction_id\`)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`,
    );
    await queryRunner.query(
      `CREATE TABLE \`agent_assignment\` (\`assignment_id\` int NOT NULL AUTO_INCREMENT, \`transaction_id\` int NOT NULL, \`stamp\` datetime(3) NOT NULL, \`changed_by\` varchar(255) NULL, \`changes\` text NOT NULL, INDEX \`IDX_agent_assignment_transaction\` (\`transaction_id\`, \`assignment_id\`), PRIMARY KEY (\`assignment_id\`)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`,
    );
    await queryRunner.query(
      `ALTER TABLE \`requirement_acquisition\` ADD CONSTRAINT \`FK_6e12a9be5a2acf6a55020f5e0e7\` FOREIGN KEY (\`requirement_type_id\`) REFERENCES \`requirement_type\`(\`requirement_type_id\`) ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE \`transaction_requirement\` ADD CONSTRAINT \`FK_2aae8c8df5f5f296677b098db76\` FOREIGN KEY (\`transaction_id\`) REFERENCES \`sales_transaction\`(\`transaction_id\`) ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE \`transaction_requirement\` ADD CONSTRAINT \`FK_421168c73d54990d97b7a261028\` FOREIGN KEY (\`requirement_id\`) REFERENCES \`requirement_acquisition\`(\`requirement_id\`) ON DELETE RESTRICT ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE \`agent_assignment\` ADD CONSTRAINT \`FK_6ba393a69357976c5639af622c5\` FOREIGN KEY (\`transaction_id\`) REFERENCES \`sales_transaction\`(\`transaction_id\`) ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE \`agent_assignment\` DROP FOREIGN KEY \`FK_6ba393a69357976c5639af622c5\``,
    );
    await queryRunner.query(
      `ALTER TABLE \`transaction_requirement\` DROP FOREIGN KEY \`FK_421168c73d54990d97b7a261028\``,
    );
    await queryRunner.query(
      `ALTER TABLE \`transaction_requirement\` DROP FOREIGN KEY \`FK_2aae8c8df5f5f296677b098db76\``,
    );
    await queryRunner.query(
      `ALTER TABLE \`requirement_acquisition\` DROP FOREIGN KEY \`FK_6e12a9be5a2acf6a55020f5e0e7\``,
    );
    await queryRunner.query(
      `DROP INDEX \`IDX_agent_assignment_transaction\` ON \`agent_assignment\``,
    );
    await queryRunner.query(`DROP TABLE \`agent_assignment\``);
    await queryRunner.query(`DROP TABLE \`sales_transaction\``);
    await queryRunner.query(`DROP TABLE \`transaction_requirement\``);
    await queryRunner.query(
      `DROP INDEX \`IDX_requirement_acquisition_type\` ON \`requirement_acquisition\``,
    );
    await queryRunner.query(`DROP TABLE \`requirement_acquisition\``);
    await queryRunner.query(`DROP TABLE \`requirement_type\``);
  }
}
