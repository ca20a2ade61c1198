import { Controller, Get, Module, NotFoundException, Param } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type NestExpressApplication } from '@nestjs/platform-express';
import { type Pool } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import { APP_ENTITIES } from '../src/app.entities';
import { loadAppConfig } from '../src/config/app-config';
import { dataSourceOptions } from '../src/database/data-source-options';
import { TransactionReadStatement } from '../src/transaction/transaction-read.statement';

/**
 * The framework's ceiling for GetTransaction: a bare NestJS-on-Express app whose one route runs
 * GetTransaction's own SELECT with the driver alone (mysql2, or better-sqlite3 on the embedded
 * database) and sends its rows as JSON, the transaction with its items, values as the driver gives
 * them. Arguments: port, the service's DATABASE_URL.
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
 * function running GetTransaction's statement, as the service builds it, for one id with the driver
 * alone: better-sqlite3's prepared statement, or a query on mysql2's pool.
 */
async function transactionQuery(): Promise<(id: number) => Promise<Row[]>> {
  const config = loadAppConfig({ DATABASE_URL: databaseUrl }, { serving: false });
  const dataSource = new DataSource(dataSourceOptions(config.database, APP_ENTITIES));
  await dataSource.initialize();
  const { sql } = new TransactionReadStatement(dataSource);
  const { databaseConnection, pool } = dataSource.driver as unknown as Connections;
  if (databaseConnection) {
    const statement = databaseConnection.prepare(sql);
    return (id) => Promise.resolve(statement.all(id) as Row[]);
  }
  const queries = pool!.promise();
  return async (id) => (await queries.query(sql, [id]))[0] as Row[];
}

/** The members of `row` whose result name starts with `table.`, under their own names. */
function membersOf(row: Row, table: string): Row {
  const prefix = `${table}.`;
  const members: Row = {};
  for (const key in row) if (key.startsWith(prefix)) members[key.slice(prefix.length)] = row[key];
  return members;
}

async function main(): Promise<void> {
  const run = await transactionQuery();

  @Controller()
  class ReadController {
    @Get('transaction/:id')
    async read(@Param('id') id: string): Promise<Row> {
      const rows = await run(Number(id));
      if (rows.length === 0) throw new NotFoundException();
      return {
        ...membersOf(rows[0], 'transaction'),
        requirements: rows.map((row) => ({
          ...membersOf(row, 'item'),
          ...membersOf(row, 'requirement'),
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
