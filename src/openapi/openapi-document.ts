import { type INestApplication } from '@nestjs/common';
import {
  DocumentBuilder,
  type OpenAPIObject,
  type OperationObject,
  type ReferenceObject,
  type ResponseObject,
  type SchemaObject,
  SwaggerModule,
} from '@nestjs/swagger';
import { declaredScopes, declareScope, REQUIRED_SCOPES_EXTENSION } from '../auth/scopes';
import { type AppConfig } from '../config/app-config';
import { servedJson } from './served-document';
import { type Request, type Response } from 'express';
import {
  declaredWireModels,
  describedTags,
  type WireClass,
  writeWireExamples,
  XmlCodec,
} from '../wire';

const DESCRIPTION =
  'Property sales transactions and their document requirements. Every operation speaks JSON ' +
  '(application/json, text/json) and XML (application/xml, text/xml, DataContractSerializer shapes), and ' +
  'takes form posts. Errors are negotiated the same way: JSON errors (application/json by default, ' +
  'text/json, or application/problem+json when Accept asks for it) carry the legacy Message and ' +
  'ModelState members with the RFC 9457 ones; XML errors are the legacy Error.';

/**
 * A document with its object keys sorted, so a committed copy changes only with what it describes.
 * Kept as written: schema `properties`, whose order is the JSON member order of the wire, and each
 * member `verbatim` names by its key and its parent's (an example: a body as the service writes it).
 * An array's items have the array's key as their parent's.
 */
export function canonical(
  value: unknown,
  verbatim: (key: string, parentKey?: string) => boolean,
  parentKey?: string,
): unknown {
  if (Array.isArray(value)) return value.map((item) => canonical(item, verbatim, parentKey));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>);
  if (parentKey !== 'properties') entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(
    entries.map(([key, child]) => [
      key,
      verbatim(key, parentKey) ? child : canonical(child, verbatim, key),
    ]),
  );
}

/** An OpenAPI example, and each entry of `examples` (a body in its `value`). */
const OPENAPI_EXAMPLE = (key: string, parentKey?: string) =>
  key === 'example' || parentKey === 'examples';

const REQUEST_ID = {
  description:
    "The request's id, in the log line and in JSON error bodies: the caller's own when it is a " +
    'plain token of up to 128 letters, digits, `_`, `.`, `:` or `-`, else a new UUID.',
  schema: { type: 'string' },
} as const;

/** X-Request-Id, sent by a gateway or a client and echoed on every answer. */
function declareRequestId(document: OpenAPIObject): void {
  const components = document.components!;
  components.parameters = {
    ...components.parameters,
    // No example: Swagger UI's "Try it out" would send the same id with every request.
    RequestId: { name: 'X-Request-Id', in: 'header', required: false, ...REQUEST_ID },
  };
  // Every answer carries it.
  components.headers = {
    ...components.headers,
    RequestId: {
      ...REQUEST_ID,
      required: true,
      schema: { type: 'string', example: '6f1d2c3b-8a4e-4f5d-9b7c-0e1a2b3c4d5e' },
    },
  };
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item) as OperationObject[]) {
      operation.parameters = [
        ...(operation.parameters ?? []),
        { $ref: '#/components/parameters/RequestId' },
      ];
      for (const response of Object.values(operation.responses) as ResponseObject[])
        response.headers = {
          ...response.headers,
          'X-Request-Id': { $ref: '#/components/headers/RequestId' },
        };
    }
  }
}

const SCHEMAS = '#/components/schemas/';

/** The schema names a schema reaches through its `$ref`s, itself included. */
export function reachable(document: OpenAPIObject, roots: readonly unknown[]): Set<string> {
  const schemas = document.components!.schemas!;
  const seen = new Set<string>();
  const visit = (node: unknown): void => {
    if (node === null || typeof node !== 'object') return;
    const ref = (node as ReferenceObject).$ref;
    if (typeof ref === 'string' && ref.startsWith(SCHEMAS)) {
      const name = ref.slice(SCHEMAS.length);
      if (seen.has(name)) return;
      seen.add(name);
      visit(schemas[name]);
      return;
    }
    Object.values(node).forEach(visit);
  };
  roots.forEach(visit);
  return seen;
}

/**
 * Every member of a response body is written, null or not, so its schema requires every member. A
 * record a request body holds too keeps its optional members there, as `<Name>Input`: a client sends
 * only what it has.
 */
function requireResponseMembers(document: OpenAPIObject): void {
  const schemas = document.components!.schemas!;
  const operations = Object.values(document.paths).flatMap(
    (item) => Object.values(item) as OperationObject[],
  );
  const requests = operations.flatMap((operation) =>
    operation.requestBody ? [operation.requestBody] : [],
  );
  const wireSchemas = new Set(declaredWireModels().map(({ schemaName }) => schemaName));
  const responseSchemas = [
    ...reachable(
      document,
      operations.flatMap((operation) => Object.values(operation.responses)),
    ),
  ].filter((name) => wireSchemas.has(name));
  const requestSchemas = reachable(document, requests);
  const shared = new Set([...requestSchemas].filter((name) => responseSchemas.includes(name)));
  const toInput = (node: unknown): void => {
    if (node === null || typeof node !== 'object') return;
    const reference = node as ReferenceObject;
    const name = reference.$ref?.slice(SCHEMAS.length);
    if (name !== undefined && shared.has(name)) reference.$ref = `${SCHEMAS}${name}Input`;
    else Object.values(node).forEach(toInput);
  };
  for (const name of requestSchemas) {
    if (shared.has(name)) schemas[`${name}Input`] = structuredClone(schemas[name]);
    toInput(schemas[shared.has(name) ? `${name}Input` : name]);
  }
  toInput(requests);
  for (const name of responseSchemas) {
    const schema = schemas[name] as SchemaObject;
    schema.required = Object.keys(schema.properties ?? {});
  }
}

/** Where Swagger UI's Authorize dialog gets a token: AUTH_JWT_TOKEN_URL, else a reserved example. */
const tokenUrlOf = (config: AppConfig) =>
  (config.auth.mode === 'jwt' && config.auth.tokenUrl) ||
  'https://identity-provider.invalid/oauth2/token';

/**
 * Each operation's security: with AUTH_MODE none nothing, with apikey a key, with jwt a token; the
 * scope it requires under OAuth2 (OpenAPI 3.0 lists scopes for OAuth 2.0 schemes only) and in its
 * description. The probes are always open.
 */
function requireScopes(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths))
    for (const operation of Object.values(item) as Array<
      OperationObject & Record<string, unknown>
    >) {
      const scopes = operation[REQUIRED_SCOPES_EXTENSION] as string[] | undefined;
      operation.security = scopes ? [{}, { ApiKey: [] }, { Bearer: [] }, { OAuth2: scopes }] : [];
      if (scopes)
        operation.description = `${operation.description ?? ''}\n\nScope: ${scopes.map((scope) => `\`${scope}\``).join(', ')} (AUTH_MODE apikey or jwt; 403 without it).`;
    }
}

/**
 * The OpenAPI 3 document of the running routes, from the same decorators that validate and write the
 * wire; XML names and the namespace come from the wire models. Deterministic, so it can be committed.
 * `extraModels` adds the schemas of wire models no route names: the AsyncAPI document's event data.
 */
export function createOpenApiDocument(
  app: INestApplication,
  config: AppConfig,
  version: string,
  extraModels: readonly WireClass[] = [],
): OpenAPIObject {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Property Sales Service')
      .setDescription(DESCRIPTION)
      .setVersion(version)
      .addApiKey(
        {
          type: 'apiKey',
          in: 'header',
          name: 'X-Api-Key',
          description:
            'AUTH_MODE apikey: the key in X-Api-Key (or `Authorization: ApiKey <key>`). A key may ' +
            'call what AUTH_API_KEYS grants it; each operation names its scope in ' +
            `${REQUIRED_SCOPES_EXTENSION} and under OAuth2.`,
        },
        'ApiKey',
      )
      .addBearerAuth(
        {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            "AUTH_MODE jwt: an access token of the configured issuer and audience, with the operation's " +
            'scope in its `scope` or `scp` claim, or granted to one of its `roles`.',
        },
        'Bearer',
      )
      .addOAuth2(
        {
          type: 'oauth2',
          description:
            'AUTH_MODE jwt: the scopes a token may carry. Tokens come from the identity provider ' +
            "(AUTH_JWT_TOKEN_URL); the service only verifies them, and answers 403 when a token lacks an operation's scope.",
          flows: {
            clientCredentials: {
              tokenUrl: tokenUrlOf(config),
              scopes: Object.fromEntries(
                declaredScopes().map(({ name, description }) => [name, description]),
              ),
            },
          },
        },
        'OAuth2',
      )
      .build(),
    { extraModels: [...extraModels] },
  );
  requireScopes(document);
  const schemas = document.components?.schemas ?? {};
  for (const model of declaredWireModels()) {
    const schema = schemas[model.schemaName];
    if (schema && !('$ref' in schema))
      schema.xml = { name: model.name, namespace: config.xmlNamespace };
  }
  writeWireExamples(document, new XmlCodec(config.xmlNamespace));
  requireResponseMembers(document);
  declareRequestId(document);
  document.tags = describedTags(
    Object.values(document.paths).flatMap((item) =>
      (Object.values(item) as OperationObject[]).flatMap((operation) => operation.tags ?? []),
    ),
  );
  document.info.license = { name: 'Proprietary: all rights reserved' };
  // Relative to where the document is served: right behind a gateway that serves it under a path.
  // Swagger UI's drop-down shows `url - description`, so the description says what '.' stands for.
  document.servers = [{ url: '.', description: SERVER_DESCRIPTION }];
  const legacyError = schemas.LegacyError;
  if (legacyError && !('$ref' in legacyError)) legacyError.xml = { name: 'Error' };
  return canonical(document, OPENAPI_EXAMPLE) as OpenAPIObject;
}

/** The one server: this service, wherever the page showing the document came from. */
export const SERVER_DESCRIPTION = 'this service, at the address this page was loaded from';

export const OPENAPI_PATHS = ['/swagger', '/swagger-json', '/swagger-yaml'];

/** What a reader needs for the OpenAPI and AsyncAPI documents when SWAGGER is `protected`. */
export const API_DOCS_READ = declareScope(
  'api-docs:read',
  'Read the OpenAPI and AsyncAPI documents and the Swagger UI.',
);

/** Serves the document at `/swagger-json` and the UI at `/swagger`, outside the API prefix. */
export function serveOpenApi(app: INestApplication, document: OpenAPIObject): void {
  // Ahead of SwaggerModule's own route for the JSON document, which it sends uncompressed and untagged.
  const served = servedJson(JSON.stringify(document));
  app
    .getHttpAdapter()
    .get(OPENAPI_PATHS[1], (request: Request, response: Response) => served(request, response));
  SwaggerModule.setup('swagger', app, document, {
    jsonDocumentUrl: 'swagger-json',
    yamlDocumentUrl: 'swagger-yaml',
  });
}
