import { MigrationInterface, QueryRunner } from 'typeorm';

export class InitialSchema1795337578554 implements MigrationInterface {
  name = 'InitialSchema1795337578554';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "requirement_type" ("requirement_type_id" integer PRIMARY KEY NOT NULL, "description" varchar(255), "stamp" datetime(3))`,
    );
    await queryRunner.query(
      `CREATE TABLE "requirement_acquisition" ("requirement_id" integer PRIMARY KEY NOT NULL, "requirement_type_id" integer NOT NULL, "required" varchar(255), "requirement_description" varchar(255), "stamp" datetime(3), "submitted" boolean)`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_requirement_acquisition_type" ON "requirement_acquisition" ("requirement_type_id", "requirement_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "transaction_requirement" ("transaction_id" integer NOT NULL, "requirement_id" integer NOT NULL, "submitted" boolean, "stamp" datetime(3), PRIMARY KEY ("transaction_id", "requirement_id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "sales_transaction" ("transaction_id" integer PRIMARY KEY NOT NULL, "row_version" integer NOT NULL, "property_id" integer, "reservation_id" integer, "unit_id" varchar(255), "developer_id" integer, "developer" varchar(255), "subdivision" varchar(255), "block" varchar(255), "lot" varchar(255), "client_id" integer, "coborrower_id" integer, "brokerid" integer, "directorid" integer, "directorid_recruit" integer, "managerid" integer, "managerid_recruit" integer, "salesagentid" integer, "salesagentid_recruit" integer, "requirement_type_id" integer, "submitted_requirements" text, "financetype" varchar(255) NOT NULL, "interestrate" decimal(15,4), "loanterm" integer, "sellingprice" decimal(15,4), "downpayment" decimal(15,4), "dp_payableinmonths" integer, "reservation" decimal(15,4), "discount" decimal(15,4), "miscellaneous" decimal(15,4), "TotalPayments" decimal(15,4), "clientname" varchar(255), "coborrowername" varchar(255), "brokername" varchar(255), "directorname" varchar(255), "directorname_recruit" varchar(255), "managername" varchar(255), "managername_recruit" varchar(255), "salesagentname" varchar(255), "salesagentname_recruit" varchar(255), "requirementtypename" varchar(255), "requirements_complete" boolean, "reservation_paid" boolean, "reservationdate" datetime(3), "status" varchar(255), "locked" boolean, "preparedby_userid" varchar(255), "date_added" datetime(3), "stamp" datetime(3))`,
    );
    await queryRunner.query(
      `CREATE TABLE "agent_assignment" ("assignment_id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "transaction_id" integer NOT NULL, "stamp" datetime(3) NOT NULL, "changed_by" varchar(255), "changes" text NOT NULL)`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_agent_assignment_transaction" ON "agent_assignment" ("transaction_id", "assignment_id") `,
    );
    await queryRunner.query(`DROP INDEX "IDX_requirement_acquisition_type"`);
    await queryRunner.query(
      `CREATE TABLE "temporary_requirement_acquisition" ("requirement_id" integer PRIMARY KEY NOT NULL, "requirement_type_id" integer NOT NULL, "required" varchar(255), "requirement_description" varchar(255), "stamp" datetime(3), "submitted" boolean, CONSTRAINT "FK_6e12a9be5a2acf6a55020f5e0e7" FOREIGN KEY ("requirement_type_id") REFERENCES "requirement_type" ("requirement_type_id") ON DELETE CASCADE ON UPDATE NO ACTION)`,
    );
    await queryRunner.query(
      `INSERT INTO "temporary_requirement_acquisition"("requirement_id", "requirement_type_id", "required", "requirement_description", "stamp", "submitted") SELECT "requirement_id", "requirement_type_id", "required", "requirement_description", "stamp", "submitted" FROM "requirement_acquisition"`,
    );
    await queryRunner.query(`DROP TABLE "requirement_acquisition"`);
    await queryRunner.query(
      `ALTER TABLE "temporary_requirement_acquisition" RENAME TO "requirement_acquisition"`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_requirement_acquisition_type" ON "requirement_acquisition" ("requirement_type_id", "requirement_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "temporary_transaction_requirement" ("transaction_id" integer NOT NULL, "requirement_id" integer NOT NULL, "submitted" boolean, "stamp" datetime(3), CONSTRAINT "FK_2aae8c8df5f5f296677b098db76" FOREIGN KEY ("transaction_id") REFERENCES "sales_transaction" ("transaction_id") ON DELETE CASCADE ON UPDATE NO ACTION, CONSTRAINT "FK_421168c73d54990d97b7a261028" FOREIGN KEY ("requirement_id") REFERENCES "requirement_acquisition" ("requirement_id") ON DELETE RESTRICT ON UPDATE NO ACTION, PRIMARY KEY ("transaction_id", "requirement_id"))`,
    );
    await queryRunner.query(
      `INSERT INTO "temporary_transaction_requirement"("transaction_id", "requirement_id", "submitted", "stamp") SELECT "transaction_id", "requirement_id", "submitted", "stamp" FROM "transaction_requirement"`,
    );
    await queryRunner.query(`DROP TABLE "transaction_requirement"`);
    await queryRunner.query(
      `ALTER TABLE "temporary_transaction_requirement" RENAME TO "transaction_requirement"`,
    );
    await queryRunner.query(`DROP INDEX "IDX_agent_assignment_transaction"`);
    await queryRunner.query(
      `CREATE TABLE "temporary_agent_assignment" ("assignment_id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "transaction_id" integer NOT NULL, "stamp" datetime(3) NOT NULL, "changed_by" varchar(255), "changes" text NOT NULL, CONSTRAINT "FK_6ba393a69357976c5639af622c5" FOREIGN KEY ("transaction_id") REFERENCES "sales_transaction" ("transaction_id") ON DELETE CASCADE ON UPDATE NO ACTION)`,
    );
    await queryRunner.query(
      `INSERT INTO "temporary_agent_assignment"("assignment_id", "transaction_id", "stamp", "changed_by", "changes") SELECT "assignment_id", "transaction_id", "stamp", "changed_by", "changes" FROM "agent_assignment"`,
    );
    await queryRunner.query(`DROP TABLE "agent_assignment"`);
    await queryRunner.query(
      `ALTER TABLE "temporary_agent_assignment" RENAME TO "agent_assignment"`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_agent_assignment_transaction" ON "agent_assignment" ("transaction_id", "assignment_id") `,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "IDX_agent_assignment_transaction"`);
    await queryRunner.query(
      `ALTER TABLE "agent_assignment" RENAME TO "temporary_agent_assignment"`,
    );
    await queryRunner.query(
      `CREATE TABLE "agent_assignment" ("assignment_id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "transaction_id" integer NOT NULL, "stamp" datetime(3) NOT NULL, "changed_by" varchar(255), "changes" text NOT NULL)`,
    );
    await queryRunner.query(
      `INSERT INTO "agent_assignment"("assignment_id", "transaction_id", "stamp", "changed_by", "changes") SELECT "assignment_id", "transaction_id", "stamp", "changed_by", "changes" FROM "temporary_agent_assignment"`,
    );
    await queryRunner.query(`DROP TABLE "temporary_agent_assignment"`);
    await queryRunner.query(
      `CREATE INDEX "IDX_agent_assignment_transaction" ON "agent_assignment" ("transaction_id", "assignment_id") `,
    );
    await queryRunner.query(
      `ALTER TABLE "transaction_requirement" RENAME TO "temporary_transaction_requirement"`,
    );
    await queryRunner.query(
      `CREATE TABLE "transaction_requirement" ("transaction_id" integer NOT NULL, "requirement_id" integer NOT NULL, "submitted" boolean, "stamp" datetime(3), PRIMARY KEY ("transaction_id", "requirement_id"))`,
    );
    await queryRunner.query(
      `INSERT INTO "transaction_requirement"("transaction_id", "requirement_id", "submitted", "stamp") SELECT "transaction_id", "requirement_id", "submitted", "stamp" FROM "temporary_transaction_requirement"`,
    );
    await queryRunner.query(`DROP TABLE "temporary_transaction_requirement"`);
    await queryRunner.query(`DROP INDEX "IDX_requirement_acquisition_type"`);
    await queryRunner.query(
      `ALTER TABLE "requirement_acquisition" RENAME TO "temporary_requirement_acquisition"`,
    );
    await queryRunner.query(
      `CREATE TABLE "requirement_acquisition" ("requirement_id" integer PRIMARY KEY NOT NULL, "requirement_type_id" integer NOT NULL, "required" varchar(255), "requirement_description" varchar(255), "stamp" datetime(3), "submitted" boolean)`,
    );
    await queryRunner.query(
      `INSERT INTO "requirement_acquisition"("requirement_id", "requirement_type_id", "required", "requirement_description", "stamp", "submitted") SELECT "requirement_id", "requirement_type_id", "required", "requirement_description", "stamp", "submitted" FROM "temporary_requirement_acquisition"`,
    );
    await queryRunner.query(`DROP TABLE "temporary_requirement_acquisition"`);
    await queryRunner.query(
      `CREATE INDEX "IDX_requirement_acquisition_type" ON "requirement_acquisition" ("requirement_type_id", "requirement_id") `,
    );
    await queryRunner.query(`DROP INDEX "IDX_agent_assignment_transaction"`);
    await queryRunner.query(`DROP TABLE "agent_assignment"`);
    await queryRunner.query(`DROP TABLE "sales_transaction"`);
    await queryRunner.query(`DROP TABLE "transaction_requirement"`);
    await queryRunner.query(`DROP INDEX "IDX_requirement_acquisition_type"`);
    await queryRunner.query(`DROP TABLE "requirement_acquisition"`);
    await queryRunner.query(`DROP TABLE "requirement_type"`);
  }
}
