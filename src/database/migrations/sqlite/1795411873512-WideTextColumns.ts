import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every stored text member holds 4000 characters: TEXT columns, and the agent history as JSON. Each
 * table is rebuilt as TypeORM generates it for SQLite (its migrations run with foreign keys off): rows
 * copied, foreign keys and indices restated.
 */
export class WideTextColumns1795411873512 implements MigrationInterface {
  name = 'WideTextColumns1795411873512';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "temporary_requirement_type" ("requirement_type_id" integer PRIMARY KEY NOT NULL, "description" text, "stamp" datetime(3))`,
    );
    await queryRunner.query(
      `INSERT INTO "temporary_requirement_type"("requirement_type_id", "description", "stamp") SELECT "requirement_type_id", "description", "stamp" FROM "requirement_type"`,
    );
    await queryRunner.query(`DROP TABLE "requirement_type"`);
    await queryRunner.query(
      `ALTER TABLE "temporary_requirement_type" RENAME TO "requirement_type"`,
    );
    await queryRunner.query(`DROP INDEX "IDX_requirement_acquisition_type"`);
    await queryRunner.query(
      `CREATE TABLE "temporary_requirement_acquisition" ("requirement_id" integer PRIMARY KEY NOT NULL, "requirement_type_id" integer NOT NULL, "required" text, "requirement_description" text, "stamp" datetime(3), "submitted" boolean, CONSTRAINT "FK_6e12a9be5a2acf6a55020f5e0e7" FOREIGN KEY ("requirement_type_id") REFERENCES "requirement_type" ("requirement_type_id") ON DELETE CASCADE ON UPDATE NO ACTION)`,
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
      `CREATE TABLE "temporary_sales_transaction" ("transaction_id" integer PRIMARY KEY NOT NULL, "row_version" integer NOT NULL, "property_id" integer, "reservation_id" integer, "unit_id" text, "developer_id" integer, "developer" text, "subdivision" text, "block" text, "lot" text, "client_id" integer, "coborrower_id" integer, "brokerid" integer, "directorid" integer, "directorid_recruit" integer, "managerid" integer, "managerid_recruit" integer, "salesagentid" integer, "salesagentid_recruit" integer, "requirement_type_id" integer, "submitted_requirements" text, "financetype" text NOT NULL, "interestrate" decimal(15,4), "loanterm" integer, "sellingprice" decimal(15,4), "downpayment" decimal(15,4), "dp_payableinmonths" integer, "reservation" decimal(15,4), "discount" decimal(15,4), "miscellaneous" decimal(15,4), "TotalPayments" decimal(15,4), "clientname" text, "coborrowername" text, "brokername" text, "directorname" text, "directorname_recruit" text, "managername" text, "managername_recruit" text, "salesagentname" text, "salesagentname_recruit" text, "requirementtypename" text, "requirements_complete" boolean, "reservation_paid" boolean, "reservationdate" datetime(3), "status" text, "locked" boolean, "preparedby_userid" text, "date_added" datetime(3), "stamp" datetime(3))`,
    );
    await queryRunner.query(
      `INSERT INTO "temporary_sales_transaction"("transaction_id", "row_version", "property_id", "reservation_id", "unit_id", "developer_id", "developer", "subdivision", "block", "lot", "client_id", "coborrower_id", "brokerid", "directorid", "directorid_recruit", "managerid", "managerid_recruit", "salesagentid", "salesagentid_recruit", "requirement_type_id", "submitted_requirements", "financetype", "interestrate", "loanterm", "sellingprice", "downpayment", "dp_payableinmonths", "reservation", "discount", "miscellaneous", "TotalPayments", "clientname", "coborrowername", "brokername", "directorname", "directorname_recruit", "managername", "managername_recruit", "salesagentname", "salesagentname_recruit", "requirementtypename", "requirements_complete", "reservation_paid", "reservationdate", "status", "locked", "preparedby_userid", "date_added", "stamp") SELECT "transaction_id", "row_version", "property_id", "reservation_id", "unit_id", "developer_id", "developer", "subdivision", "block", "lot", "client_id", "coborrower_id", "brokerid", "directorid", "directorid_recruit", "managerid", "managerid_recruit", "salesagentid", "salesagentid_recruit", "requirement_type_id", "submitted_requirements", "financetype", "interestrate", "loanterm", "sellingprice", "downpayment", "dp_payableinmonths", "reservation", "discount", "miscellaneous", "TotalPayments", "clientname", "coborrowername", "brokername", "directorname", "directorname_recruit", "managername", "managername_recruit", "salesagentname", "salesagentname_recruit", "requirementtypename", "requirements_complete", "reservation_paid", "reservationdate", "status", "locked", "preparedby_userid", "date_added", "stamp" FROM "sales_transaction"`,
    );
    await queryRunner.query(`DROP TABLE "sales_transaction"`);
    await queryRunner.query(
      `ALTER TABLE "temporary_sales_transaction" RENAME TO "sales_transaction"`,
    );
    await queryRunner.query(`DROP INDEX "IDX_agent_assignment_transaction"`);
    await queryRunner.query(
      `CREATE TABLE "temporary_agent_assignment" ("assignment_id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "transaction_id" integer NOT NULL, "stamp" datetime(3) NOT NULL, "changed_by" varchar(255), "changes" json NOT NULL, CONSTRAINT "FK_6ba393a69357976c5639af622c5" FOREIGN KEY ("transaction_id") REFERENCES "sales_transaction" ("transaction_id") ON DELETE CASCADE ON UPDATE NO ACTION)`,
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

  /**
   * TypeORM reverts inside a transaction opened before it turns foreign keys off, which SQLite then
   * ignores: dropping a rebuilt table would delete, or be refused for, the rows that refer to it. Those
   * rows are set aside first and put back last. Rebuilt as the up does, not renamed first, which would
   * point the other tables' foreign keys at the renamed copy.
   */
  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TEMPORARY TABLE "kept_transaction_requirement" AS SELECT * FROM "transaction_requirement"`,
    );
    await queryRunner.query(
      `CREATE TEMPORARY TABLE "kept_agent_assignment" AS SELECT * FROM "agent_assignment"`,
    );
    await queryRunner.query(
      `CREATE TEMPORARY TABLE "kept_requirement_acquisition" AS SELECT * FROM "requirement_acquisition"`,
    );
    await queryRunner.query(`DELETE FROM "transaction_requirement"`);
    await queryRunner.query(`DELETE FROM "agent_assignment"`);
    await queryRunner.query(`DELETE FROM "requirement_acquisition"`);
    await queryRunner.query(`DROP INDEX "IDX_agent_assignment_transaction"`);
    await queryRunner.query(
      `CREATE TABLE "temporary_agent_assignment" ("assignment_id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "transaction_id" integer NOT NULL, "stamp" datetime(3) NOT NULL, "changed_by" varchar(255), "changes" text NOT NULL, CONSTRAINT "FK_6ba393a69357976c5639af622c5" FOREIGN KEY ("transaction_id") REFERENCES "sales_transaction" ("transaction_id") ON DELETE CASCADE ON UPDATE NO ACTION)`,
    );
    await queryRunner.query(`DROP TABLE "agent_assignment"`);
    await queryRunner.query(
      `ALTER TABLE "temporary_agent_assignment" RENAME TO "agent_assignment"`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_agent_assignment_transaction" ON "agent_assignment" ("transaction_id", "assignment_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "temporary_sales_transaction" ("transaction_id" integer PRIMARY KEY NOT NULL, "row_version" integer NOT NULL, "property_id" integer, "reservation_id" integer, "unit_id" varchar(255), "developer_id" integer, "developer" varchar(255), "subdivision" varchar(255), "block" varchar(255), "lot" varchar(255), "client_id" integer, "coborrower_id" integer, "brokerid" integer, "directorid" integer, "directorid_recruit" integer, "managerid" integer, "managerid_recruit" integer, "salesagentid" integer, "salesagentid_recruit" integer, "requirement_type_id" integer, "submitted_requirements" text, "financetype" varchar(255) NOT NULL, "interestrate" decimal(15,4), "loanterm" integer, "sellingprice" decimal(15,4), "downpayment" decimal(15,4), "dp_payableinmonths" integer, "reservation" decimal(15,4), "discount" decimal(15,4), "miscellaneous" decimal(15,4), "TotalPayments" decimal(15,4), "clientname" varchar(255), "coborrowername" varchar(255), "brokername" varchar(255), "directorname" varchar(255), "directorname_recruit" varchar(255), "managername" varchar(255), "managername_recruit" varchar(255), "salesagentname" varchar(255), "salesagentname_recruit" varchar(255), "requirementtypename" varchar(255), "requirements_complete" boolean, "reservation_paid" boolean, "reservationdate" datetime(3), "status" varchar(255), "locked" boolean, "preparedby_userid" varchar(255), "date_added" datetime(3), "stamp" datetime(3))`,
    );
    await queryRunner.query(
      `INSERT INTO "temporary_sales_transaction"("transaction_id", "row_version", "property_id", "reservation_id", "unit_id", "developer_id", "developer", "subdivision", "block", "lot", "client_id", "coborrower_id", "brokerid", "directorid", "directorid_recruit", "managerid", "managerid_recruit", "salesagentid", "salesagentid_recruit", "requirement_type_id", "submitted_requirements", "financetype", "interestrate", "loanterm", "sellingprice", "downpayment", "dp_payableinmonths", "reservation", "discount", "miscellaneous", "TotalPayments", "clientname", "coborrowername", "brokername", "directorname", "directorname_recruit", "managername", "managername_recruit", "salesagentname", "salesagentname_recruit", "requirementtypename", "requirements_complete", "reservation_paid", "reservationdate", "status", "locked", "preparedby_userid", "date_added", "stamp") SELECT "transaction_id", "row_version", "property_id", "reservation_id", "unit_id", "developer_id", "developer", "subdivision", "block", "lot", "client_id", "coborrower_id", "brokerid", "directorid", "directorid_recruit", "managerid", "managerid_recruit", "salesagentid", "salesagentid_recruit", "requirement_type_id", "submitted_requirements", "financetype", "interestrate", "loanterm", "sellingprice", "downpayment", "dp_payableinmonths", "reservation", "discount", "miscellaneous", "TotalPayments", "clientname", "coborrowername", "brokername", "directorname", "directorname_recruit", "managername", "managername_recruit", "salesagentname", "salesagentname_recruit", "requirementtypename", "requirements_complete", "reservation_paid", "reservationdate", "status", "locked", "preparedby_userid", "date_added", "stamp" FROM "sales_transaction"`,
    );
    await queryRunner.query(`DROP TABLE "sales_transaction"`);
    await queryRunner.query(
      `ALTER TABLE "temporary_sales_transaction" RENAME TO "sales_transaction"`,
    );
    await queryRunner.query(`DROP INDEX "IDX_requirement_acquisition_type"`);
    await queryRunner.query(
      `CREATE TABLE "temporary_requirement_acquisition" ("requirement_id" integer PRIMARY KEY NOT NULL, "requirement_type_id" integer NOT NULL, "required" varchar(255), "requirement_description" varchar(255), "stamp" datetime(3), "submitted" boolean, CONSTRAINT "FK_6e12a9be5a2acf6a55020f5e0e7" FOREIGN KEY ("requirement_type_id") REFERENCES "requirement_type" ("requirement_type_id") ON DELETE CASCADE ON UPDATE NO ACTION)`,
    );
    await queryRunner.query(`DROP TABLE "requirement_acquisition"`);
    await queryRunner.query(
      `ALTER TABLE "temporary_requirement_acquisition" RENAME TO "requirement_acquisition"`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_requirement_acquisition_type" ON "requirement_acquisition" ("requirement_type_id", "requirement_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "temporary_requirement_type" ("requirement_type_id" integer PRIMARY KEY NOT NULL, "description" varchar(255), "stamp" datetime(3))`,
    );
    await queryRunner.query(
      `INSERT INTO "temporary_requirement_type"("requirement_type_id", "description", "stamp") SELECT "requirement_type_id", "description", "stamp" FROM "requirement_type"`,
    );
    await queryRunner.query(`DROP TABLE "requirement_type"`);
    await queryRunner.query(
      `ALTER TABLE "temporary_requirement_type" RENAME TO "requirement_type"`,
    );
    await queryRunner.query(
      `INSERT INTO "requirement_acquisition"("requirement_id", "requirement_type_id", "required", "requirement_description", "stamp", "submitted") SELECT "requirement_id", "requirement_type_id", "required", "requirement_description", "stamp", "submitted" FROM "kept_requirement_acquisition"`,
    );
    await queryRunner.query(
      `INSERT INTO "agent_assignment"("assignment_id", "transaction_id", "stamp", "changed_by", "changes") SELECT "assignment_id", "transaction_id", "stamp", "changed_by", "changes" FROM "kept_agent_assignment"`,
    );
    await queryRunner.query(
      `INSERT INTO "transaction_requirement"("transaction_id", "requirement_id", "submitted", "stamp") SELECT "transaction_id", "requirement_id", "submitted", "stamp" FROM "kept_transaction_requirement"`,
    );
    await queryRunner.query(`DROP TABLE "kept_transaction_requirement"`);
    await queryRunner.query(`DROP TABLE "kept_agent_assignment"`);
    await queryRunner.query(`DROP TABLE "kept_requirement_acquisition"`);
  }
}
