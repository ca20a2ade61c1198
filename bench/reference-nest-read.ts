import { Controller, Get, Module, NotFoundException, Param } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type NestExpressApplication } from '@nestjs/platform-express';
import { type Pool } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import { APP_ENTITIES } from '../src/app.entities';
import { loadAppConfig } from '../src/config/app-config';
import { dataSourceOptions } from '../src/database/data-source-options';
import { withServerDialect } from '../src/database/server-dialect';
import { TransactionReadStatements } from '../src/transaction/transaction-read.statements';

/**
 * The framework's ceiling for GetTransaction: a bare NestJS-on-Express app whose one route runs
 * GetTransaction's own two SELECTs with the driver alone, as the service sends them (mysql2, both in
 * one query, or better-sqlite3 on the embedded database), and sends its rows as JSON, the transaction
 * with its items, values as the driver gives them. Arguments: port, the service's DATABASE_URL.
 */
const [port, databaseUrl] = process.argv.slice(2);

type Row = Record<string, unknown>;

/** What the route uses of the drivers' connections: better-sqlite3's, or mysql2's pool. */
interface Connections {
  databaseConnection?: { prepare(sql: string): { all(...parameters: unknown[]): unknown[] } };
  pool?: { promise(): Pick<Pool, 'query'> };
}

/**
 * Opens the database as the service opens it (its options, so on MySQL its pool) and returns a
 * function running GetTransaction's two statements, as the service builds them, for one id with the
 * driver alone, as the service sends them: better-sqlite3's prepared statements, or both in one query
 * on mysql2's pool. Their rows: the transaction's, then its checklist's.
 */
async function transactionQueries(): Promise<(id: number) => Promise<[Row[], Row[]]>> {
  const config = loadAppConfig({ DATABASE_URL: databaseUrl }, { serving: false });
  const dataSource = new DataSource(
    await withServerDialect(dataSourceOptions(config.database, APP_ENTITIES)),
  );
  await dataSource.initialize();
  const { sql } = new TransactionReadStatements(dataSource);
  const { databaseConnection, pool } = dataSource.driver as unknown as Connections;
  if (databaseConnection) {
    const transaction = databaseConnection.prepare(sql.transaction);
    const checklist = databaseConnection.prepare(sql.checklist);
    return (id) => Promise.resolve([transaction.all(id) as Row[], checklist.all(id) as Row[]]);
  }
  const queries = pool!.promise();
  const both = `${sql.transaction}; ${sql.checklist}`;
  return async (id) => (await queries.query(both, [id, id]))[0] as unknown as [Row[], Row[]];
}

/** The members of `row` whose result name starts with `table.`, under their own names. */
function membersOf(row: Row, table: string): Row {
  const prefix = `${table}.`;
  const members: Row = {};
  for (const key in row) if (key.startsWith(prefix)) members[key.slice(prefix.length)] = row[key];
  return members;
}

async function main(): Promise<void> {
  const query = await transactionQueries();

  @Controller()
  class ReadController {
    @Get('transaction/:id')
    async read(@Param('id') id: string): Promise<Row> {
      const [[row], checklist] = await query(Number(id));
      if (!row) throw new NotFoundException();
      return {
        ...membersOf(row, 'transaction'),
        requirements: checklist.map((item) => ({
          ...membersOf(item, 'item'),
          ...membersOf(item, 'requirement'),
        })),
      };
    }
  }

  @Module({ controllers: [ReadController] })
  class ReadModule {}

  const app = await NestFactory.create<NestExpressApplication>(ReadModule, { logger: false });
  app.set('etag', false);
  await app.listen(Number(port), '127.0.0.1');
  process.send?.('ready');
}

void main();
