import { Controller, Get, Module, NotFoundException, Param } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type NestExpressApplication } from '@nestjs/platform-express';
import { createPool } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import { REQUIREMENT_ENTITIES } from '../src/requirement/entities';
import { TRANSACTION_ENTITIES } from '../src/transaction/entities';
import { TransactionReadStatement } from '../src/transaction/transaction-read.statement';

/**
 * The framework's ceiling for GetTransaction: a bare NestJS-on-Express app whose one route runs
 * GetTransaction's own SELECT with the driver alone (mysql2, or better-sqlite3 on the embedded
 * database) and sends its rows as JSON, the transaction with its items, values as the driver gives
 * them. Arguments: port, database
 * (a MySQL URL or `sqlite:` and a path), connections.
 */
const [port, database, connections] = process.argv.slice(2);
const sqlitePath = database.startsWith('sqlite:') ? database.slice('sqlite:'.length) : undefined;

type Row = Record<string, unknown>;

/** What the route uses of better-sqlite3's connection. */
interface SqliteConnection {
  prepare(sql: string): { all(...parameters: unknown[]): unknown[] };
}

/**
 * The statement as the service builds it from the entities, and a function running it for one id with
 * the driver alone: better-sqlite3's prepared statement, or a mysql2 pool.
 */
async function transactionQuery(): Promise<(id: number) => Promise<Row[]>> {
  const entities = [...TRANSACTION_ENTITIES, ...REQUIREMENT_ENTITIES];
  const dataSource = new DataSource(
    sqlitePath
      ? { type: 'better-sqlite3', database: sqlitePath, entities }
      : { type: 'mysql', url: database, entities },
  );
  await dataSource.initialize();
  const { sql } = new TransactionReadStatement(dataSource);
  if (sqlitePath) {
    const { databaseConnection } = dataSource.driver as unknown as {
      databaseConnection: SqliteConnection;
    };
    const statement = databaseConnection.prepare(sql);
    return (id) => Promise.resolve(statement.all(id) as Row[]);
  }
  await dataSource.destroy();
  const pool = createPool({ uri: database, connectionLimit: Number(connections), timezone: 'Z' });
  return async (id) => (await pool.query(sql, [id]))[0] as Row[];
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
