import { type INestApplication } from '@nestjs/common';
import {
  DocumentBuilder,
  type OpenAPIObject,
  type OperationObject,
  type ReferenceObject,
  type RequestBodyObject,
  type ResponseObject,
  type SchemaObject,
  type SecuritySchemeObject,
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
  if (parentKey !== 'properties')
    entries.sort(
      ([a], [b]) => keyOrder(a, parentKey) - keyOrder(b, parentKey) || (a < b ? -1 : a > b ? 1 : 0),
    );
  return Object.fromEntries(
    entries.map(([key, child]) => [
      key,
      verbatim(key, parentKey) ? child : canonical(child, verbatim, key),
    ]),
  );
}

/**
 * JSON is the first media type of every body, request or response, and the others follow in name
 * order: a generator that takes one type of several takes the first.
 */
const keyOrder = (key: string, parentKey?: string) =>
  parentKey === 'content' && key === JSON_MEDIA_TYPE ? 0 : 1;

const JSON_MEDIA_TYPE = 'application/json';

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

/**
 * The security schemes of the running AUTH_MODE, which Swagger UI's Authorize dialog offers: none
 * with `none` (a gateway authenticates); the key with `apikey`; with `jwt` the bearer token, and the
 * OAuth 2.0 client-credentials flow, which lists the scopes, only when AUTH_JWT_TOKEN_URL says where
 * tokens come from.
 */
function securitySchemesOf({ auth }: AppConfig): Record<string, SecuritySchemeObject> {
  if (auth.mode === 'apikey')
    return {
      ApiKey: {
        type: 'apiKey',
        in: 'header',
        name: 'X-Api-Key',
        description:
          'The key in X-Api-Key (or `Authorization: ApiKey <key>`). A key may call what ' +
          `AUTH_API_KEYS grants it; each operation names its scope in ${REQUIRED_SCOPES_EXTENSION}.`,
      },
    };
  if (auth.mode === 'none') return {};
  return {
    Bearer: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description:
        "An access token of the configured issuer and audience, with the operation's scope in its " +
        '`scope` or `scp` claim, or granted to one of its `roles`.',
    },
    ...(auth.tokenUrl && {
      OAuth2: {
        type: 'oauth2',
        description:
          'The scopes a token may carry. Tokens come from the identity provider; the service only ' +
          "verifies them, and answers 403 when a token lacks an operation's scope.",
        flows: {
          clientCredentials: {
            tokenUrl: auth.tokenUrl,
            scopes: Object.fromEntries(
              declaredScopes().map(({ name, description }) => [name, description]),
            ),
          },
        },
      },
    }),
  };
}

/**
 * The running mode's schemes, and each operation's security: any one of them, with the scope the
 * operation requires under OAuth2 (OpenAPI 3.0 lists scopes for OAuth 2.0 schemes only); with
 * AUTH_MODE none, no scheme and nothing required. Every mode's document names the scope in the
 * operation's description and `x-required-scopes`. The probes are always open.
 */
function declareSecurity(document: OpenAPIObject, config: AppConfig): void {
  const schemes = securitySchemesOf(config);
  if (Object.keys(schemes).length > 0) document.components!.securitySchemes = schemes;
  for (const item of Object.values(document.paths))
    for (const operation of Object.values(item) as Array<
      OperationObject & Record<string, unknown>
    >) {
      const scopes = operation[REQUIRED_SCOPES_EXTENSION] as string[] | undefined;
      operation.security = scopes
        ? Object.keys(schemes).map((name) => ({ [name]: name === 'OAuth2' ? scopes : [] }))
        : [];
      if (scopes)
        operation.description = `${operation.description ?? ''}\n\nScope: ${scopes.map((scope) => `\`${scope}\``).join(', ')} (AUTH_MODE apikey or jwt; 403 without it).`;
    }
}

/**
 * A success without a body (204) is declared JSON, as the errors beside it are: a generator that
 * reads the success's format to parse the answer (swagger-typescript-api) then parses those errors,
 * instead of leaving a typed error null. Its schema, any value, is there for a generator that drops
 * a media type without one, and with it the success (orval). The answer itself carries no body.
 */
function declareBodilessSuccesses(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths))
    for (const operation of Object.values(item) as OperationObject[])
      for (const [status, response] of Object.entries(operation.responses) as Array<
        [string, ResponseObject]
      >)
        if (/^2\d\d$/.test(status) && !response.content)
          response.content = { [JSON_MEDIA_TYPE]: { schema: {} } };
}

/**
 * Each operation's body as a named request body of the components (`UpdateAgents`), JSON first: a
 * generator that takes one media type of a referenced body takes its first (orval), and sends JSON
 * with its Content-Type instead of a union of every type with none. `x-contentType` names that type
 * on the operation for a generator that reads the types of an inline body only
 * (swagger-typescript-api), as Swagger 2's `consumes` did.
 */
function nameRequestBodies(document: OpenAPIObject): void {
  const bodies: Record<string, RequestBodyObject> = {};
  for (const item of Object.values(document.paths))
    for (const operation of Object.values(item) as Array<
      OperationObject & Record<string, unknown>
    >) {
      const body = operation.requestBody as RequestBodyObject | undefined;
      if (!body || !operation.operationId) continue;
      bodies[operation.operationId] = body;
      operation.requestBody = { $ref: `#/components/requestBodies/${operation.operationId}` };
      operation['x-contentType'] = JSON_MEDIA_TYPE;
    }
  if (Object.keys(bodies).length > 0) document.components!.requestBodies = bodies;
}

/** An operation's request body, whether inline or named in the components. */
export function requestBodyOf(
  document: OpenAPIObject,
  operation: OperationObject,
): RequestBodyObject | undefined {
  const body = operation.requestBody;
  if (!body || !('$ref' in body)) return body;
  return document.components?.requestBodies?.[body.$ref.split('/').pop()!] as RequestBodyObject;
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
      .build(),
    { extraModels: [...extraModels] },
  );
  declareSecurity(document, config);
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
  // PUBLIC_BASE_URL, or empty: the root of the host the document came from. Not '/', which a
  // generator joins to '/api/…' as '//api/…', nor '.', which one takes for a base URL as it stands.
  document.servers = [{ url: config.publicBaseUrl, description: serverDescription(config) }];
  const legacyError = schemas.LegacyError;
  if (legacyError && !('$ref' in legacyError)) legacyError.xml = { name: 'Error' };
  declareBodilessSuccesses(document);
  nameRequestBodies(document);
  return canonical(document, OPENAPI_EXAMPLE) as OpenAPIObject;
}

/** Swagger UI's drop-down shows `url - description`: the description says what the URL stands for. */
export const serverDescription = ({ publicBaseUrl }: AppConfig) =>
  publicBaseUrl
    ? 'this service, as its clients reach it (PUBLIC_BASE_URL)'
    : 'this service, at the root of the host this document was loaded from';

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
