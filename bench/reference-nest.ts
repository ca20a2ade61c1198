import { Controller, Get, Header, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type NestExpressApplication } from '@nestjs/platform-express';
import { readFileSync } from 'node:fs';

/**
 * The framework's ceiling: a bare NestJS-on-Express app sending the GetRequirements bytes from one
 * route. Arguments: port, JSON file, XML file.
 */
const [port, jsonFile, xmlFile] = process.argv.slice(2);
const json = readFileSync(jsonFile, 'utf8');
const xml = readFileSync(xmlFile, 'utf8');

@Controller()
class BytesController {
  @Get('json')
  @Header('Content-Type', 'application/json; charset=utf-8')
  json(): string {
    return json;
  }

  @Get('xml')
  @Header('Content-Type', 'application/xml; charset=utf-8')
  xml(): string {
    return xml;
  }
}

@Module({ controllers: [BytesController] })
class BytesModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create<NestExpressApplication>(BytesModule, { logger: false });
  app.set('etag', false);
  await app.listen(Number(port), '127.0.0.1');
  process.send?.('ready');
}

void main();
