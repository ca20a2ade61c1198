import SwaggerParser from '@apidevtools/swagger-parser';
import { type Response } from 'supertest';
import { type INestApplication } from '@nestjs/common';
import { type OpenAPIObject, type OperationObject } from '@nestjs/swagger';
import { generateKeyPairSync } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { version } from '../package.json';
import { createApp } from '../src/app.factory';
import { loadAppConfig } from '../src/config/app-config';
import { ASYNCAPI_PATH } from '../src/openapi/asyncapi-document';
import {
  createOpenApiDocument,
  OPENAPI_PATHS,
  requestBodyOf,
  serverDescription,
} from '../src/openapi/openapi-document';
import Ajv, { type ValidateFunction } from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import { AuthenticationError } from '../src/auth/authenticator';
import { RateLimitedError } from '../src/auth/rate-limit.guard';
import { declaredScopes } from '../src/auth/scopes';
import {
  CommitOutcomeUnknownError,
  DatabaseUnavailableError,
} from '../src/database/database-errors';
import {
  TransactionChangedError,
  TransactionLockedError,
  TransactionNotFoundError,
} from '../src/transaction/transaction.errors';
import {
  type BoundRecord,
  DATE_DESCRIPTION,
  DECIMAL_DESCRIPTION,
  declaredWireModels,
  FORM_MEDIA_TYPE,
  FormReader,
  JsonCodec,
  RouteMethods,
  toValidatedDto,
  type WireModel,
  XmlCodec,
} from '../src/wire';
import { apiKeyEntry } from './support/auth-credentials';
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
    expect(Object.keys(requestBodyOf(document, update as OperationObject)!.content).sort()).toEqual(
      REQUEST_TYPES,
    );
    expect(Object.keys(update.responses).sort()).toEqual([
      '204',
      '400',
      '401',
      '403',
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
    // Every route the application serves, with its methods, but those serving the API documents.
    const served = app
      .get(RouteMethods)
      .routes()
      .filter(
        ({ path }) =>
          path !== ASYNCAPI_PATH &&
          !OPENAPI_PATHS.some((own) => path === own || path.startsWith(`${own}/`)),
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

  it('lists JSON first in every body, names each request body with JSON as its x-contentType, and declares a bodiless success JSON', () => {
    const firstTypes = new Set<string>();
    let requests = 0;
    for (const [path, item] of Object.entries(document.paths))
      for (const [method, operation] of Object.entries(item as Json) as Array<[string, Json]>) {
        const name = `${method} ${path}`;
        if (operation.requestBody) {
          requests += 1;
          // A generator that takes one media type of a named body takes its first: JSON.
          expect({ name, body: operation.requestBody as unknown }).toEqual({
            name,
            body: { $ref: `#/components/requestBodies/${operation.operationId}` },
          });
          expect({ name, type: operation['x-contentType'] as unknown }).toEqual({
            name,
            type: 'application/json',
          });
          firstTypes.add(
            Object.keys(requestBodyOf(document, operation as OperationObject)!.content)[0],
          );
        }
        for (const [status, response] of Object.entries(operation.responses as Json)) {
          const content = (response as Json).content as Json | undefined;
          // Every success declares JSON; a 204's, with any value as its schema, has generators
          // parse the errors beside it.
          if (status.startsWith('2'))
            expect({ name, status, json: content?.['application/json'] !== undefined }).toEqual({
              name,
              status,
              json: true,
            });
          if (status === '204')
            expect({ name, content }).toEqual({
              name,
              content: { 'application/json': { schema: {} } },
            });
          if (content) firstTypes.add(Object.keys(content)[0]);
        }
      }
    expect(requests).toBeGreaterThanOrEqual(3);
    expect([...firstTypes]).toEqual(['application/json']);
  });

  it('states the seed: exact names, int32, decimals, date-times, nullable members, required financetype, ranges, XML', () => {
    const schemas = document.components!.schemas as Json;
    const transaction = schemas.Transaction;
    expect(Object.keys(transaction.properties)[0]).toBe('transaction_id');
    expect(Object.keys(transaction.properties)).toContain('TotalPayments');
    // A response writes every member, null or not; a request needs only the seed's [Required] ones.
    expect(transaction.required).toEqual(Object.keys(transaction.properties));
    expect(schemas.UpdateAgentsTransaction.required).toEqual(['transaction_id', 'financetype']);
    expect(schemas.RequirementAcquisition.required).toEqual(
      Object.keys(schemas.RequirementAcquisition.properties),
    );
    expect(schemas.RequirementAcquisitionInput.required).toBeUndefined();
    expect(schemas.UpdateAgentsTransaction.properties.requirements.items).toEqual({
      $ref: '#/components/schemas/RequirementAcquisitionInput',
    });
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
      description: DECIMAL_DESCRIPTION,
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
      description: DECIMAL_DESCRIPTION,
      nullable: true,
    });
    expect(transaction.properties.reservationdate).toEqual({
      type: 'string',
      format: 'date-time',
      description: DATE_DESCRIPTION,
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

  it('shows each error status with its own example, and declares every header', () => {
    const operations = Object.values(document.paths).flatMap(
      (item) => Object.values(item as Json) as Json[],
    );
    const update = document.paths['/api/Transaction/UpdateAgents'].post as Json;
    const example = (status: string) =>
      update.responses[status].content['application/json'].example as Json;
    // Each status shows the error its class raises, as a client receives it.
    for (const [status, error] of [
      ['401', AuthenticationError],
      ['404', TransactionNotFoundError],
      ['409', TransactionLockedError],
      ['412', TransactionChangedError],
      ['429', RateLimitedError],
      ['503', DatabaseUnavailableError],
      ['504', CommitOutcomeUnknownError],
    ] as const) {
      expect(example(status)).toMatchObject({
        status: Number(status),
        Message: error.example.message,
        type: `urn:property-sales:problem:${error.example.code}`,
      });
      expect(update.responses[status].content['application/xml'].example).toBe(
        `<Error><Message>${error.example.message}</Message></Error>`,
      );
    }
    expect(example('400').ModelState).toEqual({
      'transaction.loanterm': ['The field loanterm must be between 1 and 100.'],
    });
    const messages = ['413', '415', '500'].map((status) => example(status).Message as string);
    expect(new Set(messages).size).toBe(3);
    // The headers each answer writes.
    const headers = (status: string) => Object.keys(update.responses[status].headers ?? {}).sort();
    expect(headers('401')).toEqual(['WWW-Authenticate', 'X-Request-Id']);
    expect(headers('403')).toEqual(['WWW-Authenticate', 'X-Request-Id']);
    for (const status of ['429', '503', '504'])
      expect(headers(status)).toEqual(['Retry-After', 'X-Request-Id']);
    expect(update.parameters).toContainEqual(expect.objectContaining({ name: 'If-Match' }));
    for (const operation of operations) {
      expect(operation.parameters).toContainEqual({ $ref: '#/components/parameters/RequestId' });
      for (const response of Object.values(operation.responses as Json))
        expect((response as Json).headers['X-Request-Id']).toEqual({
          $ref: '#/components/headers/RequestId',
        });
      // Every representation read carries its ETag, and a conditional read is declared.
      if (!operation.responses['304']) continue;
      expect(Object.keys(operation.responses['200'].headers)).toContain('ETag');
      expect(Object.keys(operation.responses['304'].headers)).toContain('ETag');
      expect(operation.parameters).toContainEqual(
        expect.objectContaining({ name: 'If-None-Match', in: 'header' }),
      );
    }
    // Swagger UI's server drop-down reads `url - description`.
    expect(document.servers).toEqual([
      { url: '', description: serverDescription(loadAppConfig({})) },
    ]);
    expect(` - ${document.servers![0].description}`).toBe(
      ' - this service, at the root of the host this document was loaded from',
    );
    expect(new Set(document.tags!.map(({ name }) => name))).toEqual(
      new Set(operations.flatMap((operation) => operation.tags as string[])),
    );
  });

  it('writes every example as the service reads and writes it, each valid against its schema', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addFormat('int32', true).addFormat('decimal', true);
    // A media type's schema refers to the document's components, from the document's root.
    const validators = new Map<string, ValidateFunction>();
    const validatorOf = (schema: object) => {
      const key = JSON.stringify(schema);
      const validator =
        validators.get(key) ?? ajv.compile({ ...schema, components: document.components });
      validators.set(key, validator);
      return validator;
    };
    const json = new JsonCodec();
    const xml = new XmlCodec(loadAppConfig({}).xmlNamespace);
    const form = new FormReader();
    const dtoOf = (model: WireModel, bound: BoundRecord) =>
      toValidatedDto(model.type, bound, model.parameterName);
    /** A JSON body's records as the XML writer writes them. */
    // An answer's example read as an answer: its read-only members too.
    const asXml = (model: WireModel, body: unknown) =>
      xml.encode(
        model,
        Array.isArray(body)
          ? body.map((record) => dtoOf(model, json.decodeAnswer(JSON.stringify(record), model)))
          : dtoOf(model, json.decodeAnswer(JSON.stringify(body), model)),
      );
    /** The wire model a schema reference names: its own schema, or the `<Name>Input` of a request. */
    const modelOf = (ref: string | undefined) =>
      declaredWireModels().find(({ schemaName }) =>
        [schemaName, `${schemaName}Input`].some((name) => ref === `#/components/schemas/${name}`),
      );
    let checked = 0;
    for (const [path, item] of Object.entries(document.paths)) {
      for (const operation of Object.values(item as Json)) {
        const bodies = [
          ...(operation.requestBody
            ? [{ ...requestBodyOf(document, operation), request: true }]
            : []),
          ...Object.values(operation.responses as Json),
        ] as Json[];
        for (const { content, request } of bodies) {
          for (const [mediaType, media] of Object.entries((content ?? {}) as Json)) {
            const examplesOf = (shown: Json) =>
              shown.examples
                ? Object.values(shown.examples as Json).map(({ value }: Json) => value as unknown)
                : [shown.example as unknown];
            const examples = examplesOf(media);
            for (const [index, example] of examples.entries()) {
              const where = `${path} ${mediaType}`;
              if (example === undefined) continue;
              checked += 1;
              if (!mediaType.endsWith('xml')) {
                const validate = validatorOf(media.schema as object);
                const valid = validate(example);
                expect({ where, errors: valid ? null : validate.errors }).toEqual({
                  where,
                  errors: null,
                });
                continue;
              }
              // An XML example is the JSON one's record, written in XML, and the XML reader reads it.
              // A request example names only some members: it is read as the JSON one is.
              // Several errors of one status are shown as several examples, in the same order.
              const twin = examplesOf(content[mediaType.replace('xml', 'json')])[index];
              const schema = (media.schema.items ?? media.schema) as Json;
              const model = modelOf(schema.$ref as string);
              if (!model) {
                expect(example).toBe(
                  `<Error><Message>${(twin as Json).Message as string}</Message>` +
                    `${/<ModelState>.*<\/ModelState>/.exec(example as string)?.[0] ?? ''}</Error>`,
                );
                continue;
              }
              if (request)
                expect({ where, read: dtoOf(model, xml.decode(example as string, model)) }).toEqual(
                  {
                    where,
                    read: dtoOf(model, json.decode(JSON.stringify(twin), model)),
                  },
                );
              else expect({ where, example }).toEqual({ where, example: asXml(model, twin) });
              if (media.schema.items) xml.decodeList(example as string, model);
              else xml.decode(example as string, model);
            }
          }
          // A form example posts the JSON example's record.
          const formExample = (content as Json | undefined)?.[FORM_MEDIA_TYPE]?.example as Json;
          if (!formExample) continue;
          const jsonSchema = content['application/json'].schema as { $ref: string };
          const model = modelOf(jsonSchema.$ref)!;
          const posted = new URLSearchParams(
            Object.entries(formExample).map(([key, value]): [string, string] => [
              key,
              String(value),
            ]),
          ).toString();
          expect(dtoOf(model, form.decode(posted, model))).toEqual(
            dtoOf(model, json.decode(JSON.stringify(content['application/json'].example), model)),
          );
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('gives Swagger UI\'s "Try it out" only what the service accepts as it is', () => {
    const operations = Object.values(document.paths).flatMap(
      (item) => Object.values(item as Json) as Json[],
    );
    const schemas = document.components!.schemas as Json;
    // It sends every example: a header's (a stale If-Match answers 412) or every filter at once.
    for (const operation of operations)
      for (const parameter of operation.parameters as Json[])
        if (parameter.in === 'header' || (parameter.in === 'query' && parameter.name !== 'limit'))
          expect({
            parameter: parameter.name,
            example: parameter.schema?.example as unknown,
          }).toEqual({ parameter: parameter.name, example: undefined });
    // It fills a form from its schema's property examples, posting a null as the word.
    const update = document.paths['/api/Transaction/UpdateAgents'].post as Json;
    const form = requestBodyOf(document, update as OperationObject)!.content[
      FORM_MEDIA_TYPE
    ] as Json;
    const formSchema = (form.schema as { $ref: string }).$ref.split('/').pop()!;
    const fields = schemas[formSchema].properties as Json;
    for (const [name, field] of Object.entries(fields)) {
      expect({ name, example: (field as Json).example as unknown }).toEqual({
        name,
        example: form.example[name] as unknown,
      });
      expect(form.example[name]).not.toBeNull();
    }
  });

  it("states each operation's scope in x-required-scopes and its description, with its own 403; with AUTH_MODE none no scheme", () => {
    // The committed document is the default mode's, none: nothing to authorize.
    expect(document.components!.securitySchemes).toBeUndefined();
    // The service's own operations, pinned; a module's states its scope with @RequiresScope, which
    // x-required-scopes shows and the rest of this test holds the document to.
    const scopeOf = {
      'get /api/Requirement/GetRequirements': 'requirements:read',
      'get /api/Transaction/GetTransaction/{transaction_id}': 'transactions:read',
      'get /api/Transaction/ListTransactions': 'transactions:read',
      'get /api/Transaction/GetAgentHistory/{transaction_id}': 'transactions:read',
      'post /api/Transaction/UpdateAgents': 'transactions:write',
    };
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item as Json).map(
        ([method, operation]) => [`${method} ${path}`, operation as Json] as const,
      ),
    );
    for (const [name, operation] of operations) {
      expect({ name, security: operation.security as unknown }).toEqual({ name, security: [] });
      if (name.includes(' /health/')) continue;
      const scope =
        (scopeOf[name as keyof typeof scopeOf] as string | undefined) ??
        (operation['x-required-scopes'] as string[] | undefined)?.[0];
      expect({ name, scope }).toEqual({ name, scope: expect.any(String) as unknown });
      expect(operation['x-required-scopes']).toEqual([scope]);
      expect(operation.description).toContain(`\`${scope}\``);
      const forbidden = operation.responses['403'] as Json;
      expect(forbidden.content['application/json'].example).toMatchObject({
        status: 403,
        type: 'urn:property-sales:problem:insufficient_scope',
        Message: expect.stringContaining(` ${scope}, `) as unknown,
      });
      expect(forbidden.content['application/xml'].example).toMatch(
        new RegExp(`^<Error><Message>[^<]* ${scope}, [^<]*</Message></Error>$`),
      );
    }
  });

  it("serves the running AUTH_MODE's security schemes at /swagger-json and to the UI (a token URL only when configured), and PUBLIC_BASE_URL as its server", async () => {
    const jwt = {
      AUTH_MODE: 'jwt',
      AUTH_JWT_PUBLIC_KEY: generateKeyPairSync('rsa', { modulusLength: 2048 })
        .publicKey.export({ type: 'spki', format: 'pem' })
        .toString(),
      AUTH_JWT_ISSUER: 'https://login.example.com/',
      AUTH_JWT_AUDIENCE: 'property-sales-api',
    };
    const tokenUrl = 'https://login.example.com/oauth2/v2.0/token';
    const scopes = Object.fromEntries(
      declaredScopes().map(({ name, description }) => [name, description]),
    );
    // Each mode, with the schemes it shows and what UpdateAgents requires: any one of them.
    const modes: Array<[Record<string, string>, Json, Json[]]> = [
      [{ AUTH_MODE: 'none' }, {}, []],
      [
        {
          AUTH_MODE: 'apikey',
          AUTH_API_KEYS: apiKeyEntry('partner', 'oa-partner-5c1e8b3d'),
          PUBLIC_BASE_URL: 'https://api.example.com/property-sales/',
        },
        { ApiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } },
        [{ ApiKey: [] }],
      ],
      [jwt, { Bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } }, [{ Bearer: [] }]],
      [
        { ...jwt, AUTH_JWT_TOKEN_URL: tokenUrl },
        {
          Bearer: { type: 'http', scheme: 'bearer' },
          OAuth2: { type: 'oauth2', flows: { clientCredentials: { tokenUrl, scopes } } },
        },
        [{ Bearer: [] }, { OAuth2: ['transactions:write'] }],
      ],
    ];
    for (const [env, schemes, security] of modes) {
      const running = await RunningApp.start('sqlite::memory:', env);
      try {
        const served = (await running.http.get('/swagger-json').expect(200)).body as Json;
        const mode = env.AUTH_MODE + (env.AUTH_JWT_TOKEN_URL ? ' with a token URL' : '');
        const shown = (served.components.securitySchemes ?? {}) as Json;
        expect({ mode, schemes: Object.keys(shown) }).toEqual({
          mode,
          schemes: Object.keys(schemes),
        });
        expect({ mode, shown }).toMatchObject({ mode, shown: schemes });
        const update = served.paths['/api/Transaction/UpdateAgents'].post as Json;
        expect({ mode, security: update.security as unknown }).toEqual({ mode, security });
        expect(served.paths['/health/live'].get.security).toEqual([]);
        // Its server: PUBLIC_BASE_URL, without its trailing slash, where one is set.
        expect({ mode, servers: served.servers as unknown }).toEqual({
          mode,
          servers: [
            env.PUBLIC_BASE_URL
              ? {
                  url: 'https://api.example.com/property-sales',
                  description: 'this service, as its clients reach it (PUBLIC_BASE_URL)',
                }
              : document.servers![0],
          ],
        });
        // Swagger UI's Authorize dialog offers the schemes of the document its page is set up with,
        // written into the page's script as JSON: the same.
        const ui = (await running.http.get('/swagger/swagger-ui-init.js').expect(200)).text;
        const options = JSON.parse(/let options = (\{[\s\S]*?\n\});/.exec(ui)![1]) as Json;
        expect({ mode, offered: options.swaggerDoc.components.securitySchemes as unknown }).toEqual(
          {
            mode,
            offered: served.components.securitySchemes as unknown,
          },
        );
      } finally {
        await running.close();
      }
    }
  });

  it('documents every status a route answers here, with the headers it sends', async () => {
    // A key with every scope, and one whose only scope no route here requires.
    const keys = { full: 'oa-full-2b7e9c41d05f3a86', other: 'oa-other-8d1c6f2a94e07b53' };
    const running = await RunningApp.start('sqlite::memory:', {
      DEMO_DATA: 'true',
      AUTH_MODE: 'apikey',
      AUTH_API_KEYS: `${apiKeyEntry('full', keys.full)},${apiKeyEntry('other', keys.other, ['metrics:read'])}`,
      BODY_LIMIT: '2kb',
    });
    try {
      let checked = 0;
      for (const [template, item] of Object.entries(document.paths)) {
        if (template.startsWith('/health/')) continue;
        // Path parameters as their examples give them (a transaction of the demo data).
        const path = template.replace(/\{(\w+)\}/g, '1001');
        for (const [method, operation] of Object.entries(item as Json)) {
          const responses = (operation as Json).responses as Json;
          const send = (key?: string) => {
            const call = running.http[method as 'get' | 'post'](path);
            return key === undefined ? call : call.set('X-Api-Key', key);
          };
          const cases: Array<[string, () => Promise<Response>]> = [
            ['without a key', () => send()],
            ['without the scope', () => send(keys.other)],
          ];
          if (method === 'get') cases.push(['with every scope', () => send(keys.full)]);
          else
            cases.push(
              [
                'with an unread media type',
                () => send(keys.full).set('Content-Type', 'text/plain').send('x'),
              ],
              [
                'with a body over BODY_LIMIT',
                () =>
                  send(keys.full)
                    .set('Content-Type', 'application/json')
                    .send(`"${'x'.repeat(4096)}"`),
              ],
            );
          for (const [label, call] of cases) {
            const answer = await call();
            const documented = responses[String(answer.status)] as Json | undefined;
            const name = `${method} ${template} ${label}: ${answer.status}`;
            expect({ name, documented: documented !== undefined }).toEqual({
              name,
              documented: true,
            });
            const required = Object.entries((documented!.headers ?? {}) as Json)
              .filter(([, header]) => (header as Json).required || (header as Json).$ref)
              .map(([header]) => header.toLowerCase());
            expect({
              name,
              missing: required.filter((header) => !(header in answer.headers)),
            }).toEqual({ name, missing: [] });
            const [mediaType] = (answer.headers['content-type'] ?? '').split(';');
            if (documented!.content)
              expect({ name, mediaType: mediaType in (documented!.content as Json) }).toEqual({
                name,
                mediaType: true,
              });
            checked += 1;
          }
        }
      }
      expect(checked).toBeGreaterThanOrEqual(15);
    } finally {
      await running.close();
    }
  });

  it('gives UpdateAgents examples that, sent unchanged, change only the agent members they name', async () => {
    const running = await RunningApp.start('sqlite::memory:', { DEMO_DATA: 'true' });
    try {
      const { content } = requestBodyOf(
        document,
        document.paths['/api/Transaction/UpdateAgents'].post!,
      )!;
      const example = content['application/json'].example as Json;
      const id = example.transaction_id as number;
      const read = async () =>
        (await running.http.get(`/api/Transaction/GetTransaction/${id}`).expect(200)).body as Json;
      const original = await read();
      // The id, financetype (required) and the agent members changed, as the issue asked; and the
      // agents differ from the demo data's, so sending it changes something.
      const agents = Object.keys(example).filter(
        (name) => !['transaction_id', 'financetype'].includes(name),
      );
      expect(example.financetype).toBe(original.financetype);
      expect(agents.length).toBeGreaterThan(0);
      expect(agents.filter((name) => example[name] === original[name])).toEqual([]);
      const posts: Array<[string, string]> = [
        ['application/json', JSON.stringify(example)],
        ['application/xml', content['application/xml'].example as string],
        [
          FORM_MEDIA_TYPE,
          new URLSearchParams(
            Object.entries(content[FORM_MEDIA_TYPE].example as Json).map(
              ([key, value]): [string, string] => [key, String(value)],
            ),
          ).toString(),
        ],
      ];
      for (const [mediaType, body] of posts) {
        // Back to the demo data's agents, so that each example changes them again.
        await running.http
          .post('/api/Transaction/UpdateAgents')
          .set('Content-Type', 'application/json')
          .send(
            JSON.stringify({
              ...Object.fromEntries(agents.map((name) => [name, original[name] as unknown])),
              transaction_id: id,
              financetype: original.financetype as unknown,
            }),
          )
          .expect(204);
        const before = await read();
        await running.http
          .post('/api/Transaction/UpdateAgents')
          .set('Content-Type', mediaType)
          .send(body)
          .expect(204);
        const after = await read();
        const changed = Object.keys(after).filter(
          (name) => JSON.stringify(after[name]) !== JSON.stringify(before[name]),
        );
        expect({ mediaType, changed: changed.sort() }).toEqual({
          mediaType,
          changed: [...agents, 'stamp', 'row_version'].sort(),
        });
        expect({ mediaType, after }).toEqual({
          mediaType,
          after: {
            ...before,
            ...Object.fromEntries(agents.map((name) => [name, example[name] as unknown])),
            stamp: after.stamp as unknown,
            row_version: (before.row_version as number) + 1,
          },
        });
      }
    } finally {
      await running.close();
    }
  });

  it('shows what a running service answers: the same bodies, in the same member order', async () => {
    const running = await RunningApp.start('sqlite::memory:', { DEMO_DATA: 'true' });
    try {
      const read = document.paths['/api/Transaction/GetTransaction/{transaction_id}'].get as Json;
      for (const mediaType of ['application/json', 'application/xml']) {
        const example = read.responses['200'].content[mediaType].example as unknown;
        const answer = await running.http
          .get('/api/Transaction/GetTransaction/1001')
          .set('Accept', mediaType)
          .expect(200);
        expect(answer.text).toBe(typeof example === 'string' ? example : JSON.stringify(example));
      }
      const missing = await running.http.get('/api/Transaction/GetTransaction/999999').expect(404);
      const notFound = read.responses['404'].content['application/json'].example as Json;
      expect(Object.keys(missing.body as Json)).toEqual(Object.keys(notFound));
      expect(missing.headers['x-request-id']).toEqual(expect.any(String));
    } finally {
      await running.close();
    }
  });

  it('is served at /swagger-json, with the UI at /swagger, outside the API prefix', async () => {
    const running = await RunningApp.start('sqlite::memory:');
    try {
      const served = await running.http.get('/swagger-json').expect(200);
      expect(served.body).toEqual(document);
      // Compressed when asked (the test's client undoes it), tagged, and not sent again when current.
      const gzipped = await running.http
        .get('/swagger-json')
        .set('Accept-Encoding', 'gzip')
        .expect(200);
      expect(gzipped.headers['content-encoding']).toBe('gzip');
      expect(Number(gzipped.headers['content-length'])).toBeLessThan(served.text.length / 5);
      expect(gzipped.body).toEqual(document);
      const brotli = await running.http.get('/swagger-json').set('Accept-Encoding', 'br, gzip');
      expect(brotli.headers['content-encoding']).toBe('br');
      expect(brotli.headers.vary).toMatch(/Accept-Encoding/);
      const etag = String(served.headers.etag);
      expect(gzipped.headers.etag).toBe(etag);
      await running.http.get('/swagger-json').set('If-None-Match', etag).expect(304);
      const ui = await running.http.get('/swagger').expect(200);
      expect(ui.headers['content-type']).toMatch(/^text\/html/);
      expect(ui.text).toContain('swagger-ui');
    } finally {
      await running.close();
    }
  });
});
