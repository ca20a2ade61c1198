import { applyDecorators, SetMetadata } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiExtension,
  ApiExtraModels,
  ApiProduces,
  ApiResponse,
  getSchemaPath,
} from '@nestjs/swagger';
import {
  type ContentObject,
  type MediaTypeObject,
  type ReferenceObject,
  type SchemaObject,
} from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { type DomainErrorClass } from '../../common/domain-error';
import { DEFAULT_XML_NAMESPACE } from '../../config/app-config';
import { FORM_MEDIA_TYPE } from '../codecs/form.codec';
import { JSON_MEDIA_TYPES, PROBLEM_JSON } from '../codecs/json.codec';
import { LegacyErrorSchema, ProblemDetailsSchema } from './wire-error.schemas';
import { type WireClass, wireModelOf } from '../model/wire-model';
import { XML_MEDIA_TYPES, XmlCodec } from '../codecs/xml.codec';

export const WIRE_RESPONSE = Symbol('wire:response');

export interface WireResponseOptions {
  readonly type: WireClass;
  /** The body is a collection: a JSON array, or `ArrayOf…` in XML. */
  readonly list: boolean;
}

const RESPONSE_TYPES = [...JSON_MEDIA_TYPES, ...XML_MEDIA_TYPES];
const REQUEST_TYPES = [...RESPONSE_TYPES, FORM_MEDIA_TYPE];

const exampleXml = new XmlCodec(DEFAULT_XML_NAMESPACE);

/** The same schema (and example) under each media type. */
function contentOf(
  mediaTypes: readonly string[],
  schema: SchemaObject | ReferenceObject,
  example?: unknown,
): ContentObject {
  const media: MediaTypeObject = example === undefined ? { schema } : { schema, example };
  return Object.fromEntries(
    mediaTypes.map((mediaType): [string, MediaTypeObject] => [mediaType, media]),
  );
}

/** A body's schema under every JSON and XML media type, with the example written in each format. */
function bodyContent(type: WireClass, list: boolean, example: object): ContentObject {
  const model = wireModelOf(type);
  const record = { $ref: getSchemaPath(model.schemaName) };
  const json = list ? { type: 'array', items: record } : record;
  const xml = list
    ? { type: 'array', items: record, xml: { name: model.collectionName, wrapped: true } }
    : record;
  return {
    ...contentOf(JSON_MEDIA_TYPES, json, example),
    ...contentOf(XML_MEDIA_TYPES, xml, exampleXml.encode(model, example)),
  };
}

/**
 * Declares a route's body: the interceptor writes it in the negotiated format, and the OpenAPI
 * document lists it under every response media type.
 */
export const WireResponse = (
  type: WireClass,
  options: { list?: boolean; description: string; example: object },
) =>
  applyDecorators(
    SetMetadata(WIRE_RESPONSE, { type, list: options.list ?? false } satisfies WireResponseOptions),
    ApiExtraModels(type),
    ApiProduces(...RESPONSE_TYPES),
    ApiResponse({
      status: 200,
      description: options.description,
      content: bodyContent(type, options.list ?? false, options.example),
      headers: {
        ETag: {
          description: 'Strong entity tag of this representation.',
          schema: { type: 'string' },
        },
      },
    }),
  );

/** The operation extension carrying a request example, written into each media type by the document. */
export const REQUEST_EXAMPLE_EXTENSION = 'x-request-example';

/** Documents a request body read by the wire layer, under every request media type. */
export const WireRequestBody = (type: WireClass, description: string, example: object) =>
  applyDecorators(
    ApiExtraModels(type),
    ApiConsumes(...REQUEST_TYPES),
    ApiBody({ type, description, required: true }),
    ApiExtension(REQUEST_EXAMPLE_EXTENSION, example),
  );

/** What the wire layer itself answers, on any route: described here, once. */
const WIRE_ERROR_DESCRIPTIONS = {
  304: 'Not modified: the If-None-Match header carries the current ETag.',
  400: 'The body or a route parameter is invalid; ModelState names every violation.',
  413: 'The body is larger than the limit.',
  415: 'The body has an unsupported media type.',
  500: 'An unexpected error; nothing internal is disclosed.',
} as const;

export type WireErrorStatus = keyof typeof WIRE_ERROR_DESCRIPTIONS;

/** The error body under every JSON type (problem+json included) and the legacy XML Error. */
const ERROR_CONTENT: ContentObject = {
  ...contentOf([...JSON_MEDIA_TYPES, PROBLEM_JSON], { $ref: getSchemaPath(ProblemDetailsSchema) }),
  ...contentOf(XML_MEDIA_TYPES, { $ref: getSchemaPath(LegacyErrorSchema) }),
};

/**
 * Documents the error answers of a route: the statuses the wire layer produces, by number, and the
 * domain errors the route may raise, by class, each described as its class describes itself. Errors
 * sharing a status share its entry. JSON errors carry the legacy members and RFC 9457's, under the
 * negotiated JSON type or `application/problem+json` when asked for; XML errors are the legacy Error.
 */
export const WireErrors = (...errors: Array<WireErrorStatus | DomainErrorClass>) => {
  const descriptions = new Map<number, Set<string>>();
  for (const error of errors) {
    const [status, description] =
      typeof error === 'number'
        ? [error, WIRE_ERROR_DESCRIPTIONS[error]]
        : [error.status, error.description];
    descriptions.set(status, (descriptions.get(status) ?? new Set()).add(description));
  }
  return applyDecorators(
    ApiExtraModels(ProblemDetailsSchema, LegacyErrorSchema),
    ...[...descriptions].map(([status, texts]) => {
      const description = [...texts].join(' ');
      // A 304 has no body.
      return status === 304
        ? ApiResponse({ status, description })
        : ApiResponse({ status, description, content: ERROR_CONTENT });
    }),
  );
};
