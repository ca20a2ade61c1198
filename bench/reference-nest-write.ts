import { Body, Controller, HttpCode, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type NestExpressApplication } from '@nestjs/platform-express';
import { createPool } from 'mysql2/promise';
import { updateAgentsByHand } from './reference-mysql';

/**
 * The framework's ceiling for UpdateAgents: a bare NestJS-on-Express app whose one route parses the
 * JSON body and runs UpdateAgents' SQL by hand with mysql2. Arguments: port, MySQL URL, connections.
 */
const [port, url, connections] = process.argv.slice(2);
const pool = createPool({ uri: url, connectionLimit: Number(connections), timezone: 'Z' });

interface AgentBody {
  readonly transaction_id: number;
  readonly brokerid: number;
  readonly brokername: string;
}

@Controller()
class UpdateController {
  @Post('update')
  @HttpCode(204)
  async update(@Body() body: AgentBody): Promise<void> {
    const connection = await pool.getConnection();
    try {
      await updateAgentsByHand(connection, body.transaction_id, body.brokerid, body.brokername);
    } finally {
      connection.release();
    }
  }
}

@Module({ controllers: [UpdateController] })
class UpdateModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create<NestExpressApplication>(UpdateModule, { logger: false });
  await app.listen(Number(port), '127.0.0.1');
  process.send?.('ready');
}

void main();
