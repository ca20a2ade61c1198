import { Body, Controller, HttpCode, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type NestExpressApplication } from '@nestjs/platform-express';
import { type Pool } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import { APP_ENTITIES } from '../src/app.entities';
import { loadAppConfig } from '../src/config/app-config';
import { dataSourceOptions } from '../src/database/data-source-options';
import { withServerDialect } from '../src/database/server-dialect';
import { LOCKED_COLUMNS, updateAgentsByHand } from './reference-mysql';

/**
 * The framework's ceiling for UpdateAgents: a bare NestJS-on-Express app whose one route parses the
 * JSON body and runs UpdateAgents' SQL by hand with the driver alone (mysql2's pool, or
 * better-sqlite3's prepared statements on the embedded database). Arguments: port, the service's
 * DATABASE_URL.
 */
const [port, databaseUrl] = process.argv.slice(2);

interface AgentBody {
  readonly transaction_id: number;
  readonly brokerid: number;
  readonly brokername: string;
}

/** UpdateAgents' SQL by hand for one transaction: its new broker's id and name. */
type UpdateAgents = (transactionId: number, brokerid: number, brokername: string) => Promise<void>;

/** What the route uses of better-sqlite3's prepared statements. */
interface SqliteStatement {
  get(...parameters: unknown[]): unknown;
  run(...parameters: unknown[]): unknown;
}

/** What the route uses of better-sqlite3's connection. */
interface SqliteConnection {
  readonly inTransaction: boolean;
  prepare(sql: string): SqliteStatement;
}

/** What the route uses of the drivers' connections: better-sqlite3's, or mysql2's pool. */
interface Connections {
  databaseConnection?: SqliteConnection;
  pool?: { promise(): Pick<Pool, 'getConnection'> };
}

/**
 * Opens the database as the service opens it (its options, so on MySQL its pool) and returns
 * UpdateAgents' SQL by hand on it: `updateAgentsByHand` on a connection of mysql2's pool, or the same
 * statements, without FOR UPDATE, with better-sqlite3.
 */
async function updateAgentsQueries(): Promise<UpdateAgents> {
  const config = loadAppConfig({ DATABASE_URL: databaseUrl }, { serving: false });
  const dataSource = new DataSource(
    await withServerDialect(dataSourceOptions(config.database, APP_ENTITIES)),
  );
  await dataSource.initialize();
  const { databaseConnection, pool } = dataSource.driver as unknown as Connections;
  if (databaseConnection) return sqliteUpdateAgents(databaseConnection);
  const connections = pool!.promise();
  return async (transactionId, brokerid, brokername) => {
    const connection = await connections.getConnection();
    try {
      await updateAgentsByHand(connection, transactionId, brokerid, brokername);
    } finally {
      connection.release();
    }
  };
}

/**
 * UpdateAgents' SQL by hand with better-sqlite3, synchronously: BEGIN, read the row (SQLite has one
 * writer at a time, so no FOR UPDATE), write the broker and the stamp, append the history, COMMIT.
 * Rolls back (unless SQLite already did) and rethrows on failure. The stamp is stored as TypeORM
 * stores a datetime on SQLite.
 */
function sqliteUpdateAgents(database: SqliteConnection): UpdateAgents {
  const begin = database.prepare('BEGIN');
  const commit = database.prepare('COMMIT');
  const rollback = database.prepare('ROLLBACK');
  const lock = database.prepare(
    `SELECT ${LOCKED_COLUMNS.map((name) => `"${name}"`).join(', ')} FROM "sales_transaction" WHERE "transaction_id" = ?`,
  );
  const update = database.prepare(
    'UPDATE "sales_transaction" SET "brokerid" = ?, "brokername" = ?, "stamp" = ?, "row_version" = "row_version" + 1 WHERE "transaction_id" = ?',
  );
  const append = database.prepare(
    'INSERT INTO "agent_assignment" ("transaction_id", "stamp", "changed_by", "changes", "row_version") VALUES (?, ?, NULL, ?, ?)',
  );
  return (transactionId, brokerid, brokername) => {
    begin.run();
    try {
      const before = lock.get(transactionId) as Record<string, unknown> | undefined;
      const stamp = new Date().toISOString().replace('T', ' ').slice(0, 23);
      update.run(brokerid, brokername, stamp, transactionId);
      append.run(
        transactionId,
        stamp,
        JSON.stringify([{ field: 'brokerid', before: before?.brokerid ?? null, after: brokerid }]),
        Number(before?.row_version) + 1,
      );
      commit.run();
    } catch (error) {
      if (database.inTransaction) rollback.run();
      throw error;
    }
    return Promise.resolve();
  };
}

async function main(): Promise<void> {
  const updateAgents = await updateAgentsQueries();

  @Controller()
  class UpdateController {
    @Post('update')
    @HttpCode(204)
    async update(@Body() body: AgentBody): Promise<void> {
      await updateAgents(body.transaction_id, body.brokerid, body.brokername);
    }
  }

  @Module({ controllers: [UpdateController] })
  class UpdateModule {}

  const app = await NestFactory.create<NestExpressApplication>(UpdateModule, { logger: false });
  await app.listen(Number(port), '127.0.0.1');
  process.send?.('ready');
}

void main();
