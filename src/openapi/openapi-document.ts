import { type INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { type RequestBodyObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { type AppConfig } from '../config/app-config';
import {
  JSON_MEDIA_TYPES,
  declaredWireModels,
  REQUEST_EXAMPLE_EXTENSION,
  XML_MEDIA_TYPES,
  XmlCodec,
} from '../wire';

const DESCRIPTION =
  'Property sales transactions and their document requirements. Every operation speaks JSON ' +
  '(application/json, text/json) and XML (application/xml, text/xml, DataContractSerializer shapes), and ' +
  'takes form posts. Errors are negotiated the same way: JSON errors (application/json by default, ' +
  'text/json, or application/problem+json when Accept asks for it) carry the legacy Message and ' +
  'ModelState members with the RFC 9457 ones; XML errors are the legacy Error.';

/** Object keys sorted, except schema `properties`, whose order is the JSON member order of the wire. */
function canonical(value: unknown, parentKey?: string): unknown {
  if (Array.isArray(value)) return value.map((item) => canonical(item));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>);
  if (parentKey !== 'properties') entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([key, child]) => [key, canonical(child, key)]));
}

/** Moves each operation's request example into its JSON and XML media types, written in each format. */
function writeRequestExamples(document: OpenAPIObject, xml: XmlCodec): void {
  for (const path of Object.values(document.paths)) {
    for (const operation of Object.values(path) as Array<Record<string, unknown>>) {
      const example = operation[REQUEST_EXAMPLE_EXTENSION] as object | undefined;
      const body = operation.requestBody as RequestBodyObject | undefined;
      if (!example || !body) continue;
      delete operation[REQUEST_EXAMPLE_EXTENSION];
      const schemaName = (
        (body.content[JSON_MEDIA_TYPES[0]]?.schema ?? {}) as { $ref?: string }
      ).$ref
        ?.split('/')
        .pop();
      const model = declaredWireModels().find((candidate) => candidate.schemaName === schemaName);
      for (const mediaType of JSON_MEDIA_TYPES)
        if (body.content[mediaType]) body.content[mediaType].example = example;
      for (const mediaType of XML_MEDIA_TYPES) {
        if (model && body.content[mediaType])
          body.content[mediaType].example = xml.encode(model, example);
      }
    }
  }
}

/**
 * The OpenAPI 3 document of the running routes, from the same decorators that validate and write the
 * wire; XML names and the namespace come from the wire models. Deterministic, so it can be committed.
 */
export function createOpenApiDocument(
  app: INestApplication,
  config: AppConfig,
  version: string,
): OpenAPIObject {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Property Sales Service')
      .setDescription(DESCRIPTION)
      .setVersion(version)
      .addApiKey({ type: 'apiKey', in: 'header', name: 'X-Api-Key' }, 'ApiKey')
      .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, 'Bearer')
      .build(),
  );
  // Which scheme applies depends on AUTH_MODE (none, apikey or jwt); the probes are always open.
  document.security = [{}, { ApiKey: [] }, { Bearer: [] }];
  for (const [path, item] of Object.entries(document.paths)) {
    if (!path.startsWith('/health/')) continue;
    for (const operation of Object.values(item) as Array<{ security?: unknown }>)
      operation.security = [];
  }
  const schemas = document.components?.schemas ?? {};
  for (const model of declaredWireModels()) {
    const schema = schemas[model.schemaName];
    if (schema && !('$ref' in schema))
      schema.xml = { name: model.name, namespace: config.xmlNamespace };
  }
  writeRequestExamples(document, new XmlCodec(config.xmlNamespace));
  const legacyError = schemas.LegacyError;
  if (legacyError && !('$ref' in legacyError)) legacyError.xml = { name: 'Error' };
  return canonical(document) as OpenAPIObject;
}

export const OPENAPI_PATHS = ['/swagger', '/swagger-json', '/swagger-yaml'];

/** Serves the document at `/swagger-json` and the UI at `/swagger`, outside the API prefix. */
export function serveOpenApi(app: INestApplication, document: OpenAPIObject): void {
  SwaggerModule.setup('swagger', app, document, {
    jsonDocumentUrl: 'swagger-json',
    yamlDocumentUrl: 'swagger-yaml',
  });
}
