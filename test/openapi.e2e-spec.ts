import SwaggerParser from '@apidevtools/swagger-parser';
import { type INestApplication } from '@nestjs/common';
import { type OpenAPIObject } from '@nestjs/swagger';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { version } from '../package.json';
import { createApp } from '../src/app.factory';
import { loadAppConfig } from '../src/config/app-config';
import { createOpenApiDocument, OPENAPI_PATHS } from '../src/openapi/openapi-document';
import { RouteMethods } from '../src/wire';
import { RunningApp } from './support/test-app';

const ROOT = join(__dirname, '..');
const REQUEST_TYPES = [
  'application/json',
  'application/x-www-form-urlencoded',
  'application/xml',
  'text/json',
  'text/xml',
];
const RESPONSE_TYPES = ['application/json', 'application/xml', 'text/json', 'text/xml'];

// The document is read as plain JSON here: any member may be looked at.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

describe('the OpenAPI document', () => {
  let app: INestApplication;
  let document: OpenAPIObject;

  beforeAll(async () => {
    const config = loadAppConfig({
      DATABASE_URL: 'sqlite::memory:',
      DEMO_DATA: 'false',
      LOG_LEVEL: 'silent',
    });
    app = await createApp(config, { logger: false });
    await app.init();
    document = createOpenApiDocument(app, config, version);
  });

  afterAll(() => app?.close());

  it('is committed as openapi.json, current (run `npm run openapi` after changing a route or DTO)', async () => {
    const committed = JSON.parse(await readFile(join(ROOT, 'openapi.json'), 'utf8')) as unknown;
    expect(committed).toEqual(document);
  });

  it('is valid OpenAPI 3 for a real validator', async () => {
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined();
    expect(document.openapi).toMatch(/^3\./);
  });

  it('lists every route with all its request and response media types and its error statuses', () => {
    const update = document.paths['/api/Transaction/UpdateAgents'].post as Json;
    expect(Object.keys(update.requestBody.content).sort()).toEqual(REQUEST_TYPES);
    expect(Object.keys(update.responses).sort()).toEqual([
      '204',
      '400',
      '401',
      '404',
      '409',
      '412',
      '413',
      '415',
      '429',
      '500',
      '503',
      '504',
    ]);
    // Every error of every operation: JSON in the legacy type a .NET client reads (or text/json), as
    // problem details when asked for, all one body; the legacy Error in XML.
    const problem = { $ref: '#/components/schemas/ProblemDetails' };
    const legacyError = { $ref: '#/components/schemas/LegacyError' };
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item as Json)) {
        for (const [status, response] of Object.entries((operation as Json).responses as Json)) {
          if (Number(status) < 400 || path.startsWith('/health/')) continue;
          const schemaByType = Object.fromEntries(
            Object.entries((response as Json).content as Json).map(([type, media]) => [
              type,
              (media as Json).schema as unknown,
            ]),
          );
          expect({ operation: `${method} ${path} ${status}`, schemaByType }).toEqual({
            operation: `${method} ${path} ${status}`,
            schemaByType: {
              'application/json': problem,
              'text/json': problem,
              'application/problem+json': problem,
              'application/xml': legacyError,
              'text/xml': legacyError,
            },
          });
        }
      }
    }
    expect((document.components!.schemas as Json).ProblemDetails.description).toMatch(
      /application\/json by default/,
    );
    for (const path of [
      '/api/Requirement/GetRequirements',
      '/api/Transaction/GetTransaction/{transaction_id}',
      '/api/Transaction/GetAgentHistory/{transaction_id}',
    ]) {
      const operation = document.paths[path].get as Json;
      expect(Object.keys(operation.responses['200'].content).sort()).toEqual(RESPONSE_TYPES);
      expect(operation.responses['304']).toBeDefined();
      expect(operation.responses['503']).toBeDefined();
    }
    const requirements = (document.paths['/api/Requirement/GetRequirements'].get as Json).responses[
      '200'
    ].content;
    expect(requirements['application/xml'].schema).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/Requirement' },
      xml: { name: 'ArrayOfRequirement', wrapped: true },
    });
    expect(requirements['application/xml'].example).toMatch(/^<ArrayOfRequirement xmlns:i=/);
    // Every route the application serves, with its methods, but those serving this document.
    const served = app
      .get(RouteMethods)
      .routes()
      .filter(
        ({ path }) => !OPENAPI_PATHS.some((own) => path === own || path.startsWith(`${own}/`)),
      )
      .map(({ path, methods }) => `${methods.sort().join()} ${path.replace(/:(\w+)/g, '{$1}')}`);
    const documented = Object.entries(document.paths).map(
      ([path, item]) =>
        `${Object.keys(item)
          .map((method) => method.toUpperCase())
          .sort()
          .join()} ${path}`,
    );
    expect(documented.sort()).toEqual(served.sort());
  });

  it('states the seed: exact names, int32, decimals, date-times, nullable members, required financetype, ranges, XML', () => {
    const schemas = document.components!.schemas as Json;
    const transaction = schemas.Transaction;
    expect(Object.keys(transaction.properties)[0]).toBe('transaction_id');
    expect(Object.keys(transaction.properties)).toContain('TotalPayments');
    expect(transaction.required).toEqual(['financetype']);
    expect(schemas.UpdateAgentsTransaction.required).toEqual(['transaction_id', 'financetype']);
    expect(transaction.properties.property_id).toEqual({
      type: 'integer',
      format: 'int32',
      minimum: 1,
      maximum: 100000,
      nullable: true,
    });
    // [Range(1, 100000000)] after rounding half to even: 0.5 is out (it rounds to 0), 100000000.5 in.
    expect(transaction.properties.sellingprice).toEqual({
      type: 'number',
      format: 'decimal',
      minimum: 0.5,
      exclusiveMinimum: true,
      maximum: 100000000.5,
      exclusiveMaximum: false,
      nullable: true,
    });
    // Any .NET decimal, at any precision.
    expect(transaction.properties.discount).toEqual({
      type: 'number',
      format: 'decimal',
      nullable: true,
    });
    expect(transaction.properties.reservationdate).toEqual({
      type: 'string',
      format: 'date-time',
      nullable: true,
    });
    // Only the text UpdateAgents stores is bounded, by its column; other text, as the legacy's, is not.
    expect(transaction.properties.brokername).toMatchObject({ type: 'string', maxLength: 4000 });
    expect(transaction.properties.financetype).toEqual({ type: 'string', nullable: false });
    expect(transaction.properties.requirements).toMatchObject({
      type: 'array',
      items: { $ref: '#/components/schemas/RequirementAcquisition' },
      xml: { name: 'requirements', wrapped: true },
    });
    expect(transaction.xml).toEqual({
      name: 'Transaction',
      namespace: 'http://schemas.datacontract.org/2004/07/PropertySales.Models',
    });
    expect(schemas.LegacyError.xml).toEqual({ name: 'Error' });
  });

  it('is served at /swagger-json, with the UI at /swagger, outside the API prefix', async () => {
    const running = await RunningApp.start('sqlite::memory:');
    try {
      const served = await running.http.get('/swagger-json').expect(200);
      expect(served.body).toEqual(document);
      const ui = await running.http.get('/swagger').expect(200);
      expect(ui.headers['content-type']).toMatch(/^text\/html/);
      expect(ui.text).toContain('swagger-ui');
    } finally {
      await running.close();
    }
  });
});
