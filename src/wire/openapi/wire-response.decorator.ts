import { applyDecorators, HttpCode, HttpException, SetMetadata } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiExtension,
  ApiExtraModels,
  ApiHeader,
  ApiProduces,
  ApiResponse,
  type ContentObject,
  getSchemaPath,
  type HeaderObject,
  type MediaTypeObject,
  type ReferenceObject,
  type SchemaObject,
} from '@nestjs/swagger';
import { type DocumentedErrorClass } from '../../common/domain-error';
import { DEFAULT_XML_NAMESPACE } from '../../config/app-config';
import { FORM_MEDIA_TYPE } from '../codecs/form.codec';
import { JSON_MEDIA_TYPES, JsonCodec, PROBLEM_JSON } from '../codecs/json.codec';
import { type WireErrorBody } from '../codecs/wire-codec';
import { errorBodyOf, httpErrorBodyOf, INTERNAL_ERROR } from '../codecs/error-bodies';
import {
  PayloadTooLargeError,
  RequestValidationError,
  UnsupportedMediaTypeError,
} from '../model/wire-errors';
import { LegacyErrorSchema, ProblemDetailsSchema } from './wire-error.schemas';
import { REQUEST_EXAMPLE_EXTENSION } from './wire-examples';
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

/**
 * A body's schema under every JSON and XML media type. The example, as a module wrote it, waits on
 * the JSON media types: the document writes it in each format as the codecs write it (writeWireExamples).
 */
function bodyContent(type: WireClass, list: boolean, example: object): ContentObject {
  const model = wireModelOf(type);
  const record = { $ref: getSchemaPath(model.schemaName) };
  const json = list ? { type: 'array', items: record } : record;
  const xml = list
    ? { type: 'array', items: record, xml: { name: model.collectionName, wrapped: true } }
    : record;
  return { ...contentOf(JSON_MEDIA_TYPES, json, example), ...contentOf(XML_MEDIA_TYPES, xml) };
}

/**
 * The response headers the wire layer and the domain errors write, each described once; an answer
 * declaring one always carries it.
 */
const RESPONSE_HEADERS: Record<string, HeaderObject> = {
  ETag: {
    description: 'The strong entity tag of the representation: If-None-Match and If-Match take it.',
    required: true,
    schema: { type: 'string', example: '"1001.3"' },
  },
  Location: {
    description: 'The address of the resource the request created.',
    required: true,
    schema: { type: 'string', format: 'uri-reference', example: '/api/Developer/GetDeveloper/7' },
  },
  'Retry-After': {
    description: 'Seconds to wait before sending the request again.',
    required: true,
    schema: { type: 'integer', minimum: 1, example: 5 },
  },
  'WWW-Authenticate': {
    description:
      'The scheme, and its realm, the request must authenticate with; on a 403 also ' +
      '`error="insufficient_scope"` and the `scope` the operation requires (RFC 6750).',
    required: true,
    schema: { type: 'string', example: 'ApiKey realm="property-sales"' },
  },
};

function headersOf(names: Iterable<string>): Record<string, HeaderObject> {
  return Object.fromEntries(
    [...names].map((name) => {
      const header = RESPONSE_HEADERS[name];
      if (!header)
        throw new Error(`The response header ${name} is not described in RESPONSE_HEADERS.`);
      return [name, header];
    }),
  );
}

/** A body the interceptor writes in the negotiated format, under every response media type. */
const writtenBody = (type: WireClass, list: boolean) =>
  applyDecorators(
    SetMetadata(WIRE_RESPONSE, { type, list } satisfies WireResponseOptions),
    ApiExtraModels(type),
    ApiProduces(...RESPONSE_TYPES),
  );

/**
 * Declares a route's body: the interceptor writes it in the negotiated format, with an ETag on GET,
 * and the OpenAPI document lists it under every response media type.
 */
export const WireResponse = (
  type: WireClass,
  options: {
    list?: boolean;
    description: string;
    example: object;
    /** Headers the route writes besides the ETag, described by the route. */
    headers?: Record<string, HeaderObject>;
  },
) =>
  applyDecorators(
    writtenBody(type, options.list ?? false),
    ApiHeader({
      name: 'If-None-Match',
      required: false,
      description: 'An ETag of this representation read before: 304 while it is still current.',
      // No example: Swagger UI's "Try it out" would send it with every read.
      schema: { type: 'string' },
    }),
    ApiResponse({
      status: 200,
      description: options.description,
      content: bodyContent(type, options.list ?? false, options.example),
      headers: { ...headersOf(['ETag']), ...options.headers },
    }),
  );

/**
 * Declares a route that creates: it answers 201 Created with `Location`, the new resource's address,
 * which the route sets (`response.location(…)`), and no ETag. With `type` and `example`, the created
 * resource is the body, written in the negotiated format; without, the answer has no body. With
 * `replaced`, the route creates or replaces (a PUT naming the resource's key): it answers 204 No
 * Content, which `replaced` describes, unless it created, when it sets 201 and Location itself
 * (`response.status(201).location(…)`).
 */
export const WireCreated = (options: {
  description: string;
  type?: WireClass;
  example?: object;
  replaced?: string;
}) => {
  const { description, type, example, replaced } = options;
  const headers = headersOf(['Location']);
  return applyDecorators(
    ...(replaced === undefined
      ? [HttpCode(201)]
      : [HttpCode(204), ApiResponse({ status: 204, description: replaced })]),
    ...(type && example
      ? [
          writtenBody(type, false),
          ApiResponse({
            status: 201,
            description,
            headers,
            content: bodyContent(type, false, example),
          }),
        ]
      : [ApiResponse({ status: 201, description, headers })]),
  );
};

/** Documents a request body read by the wire layer, under every request media type. */
export const WireRequestBody = (type: WireClass, description: string, example: object) =>
  applyDecorators(
    ApiExtraModels(type),
    ApiConsumes(...REQUEST_TYPES),
    ApiBody({ type, description, required: true }),
    ApiExtension(REQUEST_EXAMPLE_EXTENSION, example),
  );

interface WireErrorEntry {
  readonly description: string;
  /** The body answered, as every client reads it; a 304 has none. */
  readonly example?: WireErrorBody;
  readonly headers?: readonly string[];
}

/** What the wire layer itself answers, on any route: described, and shown, here once. */
const WIRE_ERRORS = {
  304: {
    description: 'Not modified: the If-None-Match header carries the current ETag.',
    headers: ['ETag'],
  },
  400: {
    description: 'The body or a route parameter is invalid; ModelState names every violation.',
    example: errorBodyOf(
      new RequestValidationError({
        'transaction.loanterm': ['The field loanterm must be between 1 and 100.'],
      }),
    ),
  },
  413: {
    description: 'The body is larger than the limit.',
    example: errorBodyOf(new PayloadTooLargeError(1048576)),
  },
  415: {
    description: 'The body has an unsupported media type.',
    example: errorBodyOf(new UnsupportedMediaTypeError('text/plain')),
  },
  500: {
    description: 'An unexpected error; nothing internal is disclosed.',
    example: INTERNAL_ERROR,
  },
} as const satisfies Record<number, WireErrorEntry>;

export type WireErrorStatus = keyof typeof WIRE_ERRORS;

/** The X-Request-Id every example shows, as the service writes one. */
const EXAMPLE_REQUEST_ID = '6f1d2c3b-8a4e-4f5d-9b7c-0e1a2b3c4d5e';
const exampleJson = new JsonCodec();

/**
 * The error bodies of one status under every JSON type (problem+json included) and as the legacy XML
 * Error, each written by its codec: one example, or one per error when several share the status.
 */
function errorContent(examples: readonly WireErrorBody[]): ContentObject {
  const written = (write: (body: WireErrorBody) => unknown) =>
    examples.length === 1
      ? { example: write(examples[0]) }
      : {
          examples: Object.fromEntries(
            examples.map((body) => [body.code, { summary: body.title, value: write(body) }]),
          ),
        };
  const json = written(
    (body) =>
      JSON.parse(exampleJson.encodeError({ ...body, requestId: EXAMPLE_REQUEST_ID })) as unknown,
  );
  const xml = written((body) => exampleXml.encodeError(body));
  const problem = { $ref: getSchemaPath(ProblemDetailsSchema) };
  const legacyError = { $ref: getSchemaPath(LegacyErrorSchema) };
  return Object.fromEntries([
    ...[...JSON_MEDIA_TYPES, PROBLEM_JSON].map((type) => [type, { schema: problem, ...json }]),
    ...XML_MEDIA_TYPES.map((type) => [type, { schema: legacyError, ...xml }]),
  ]) as ContentObject;
}

/** A NestJS exception class a route throws: `ConflictException`, or a module's subclass of one. */
export type HttpExceptionClass = (new () => HttpException) & { readonly description?: string };

function isHttpExceptionClass(error: unknown): error is HttpExceptionClass {
  return typeof error === 'function' && error.prototype instanceof HttpException;
}

/** The entry of a documented error: a wire status, a domain error or an HttpException class. */
function entryOf(error: WireErrorStatus | DocumentedErrorClass | HttpExceptionClass): {
  status: number;
  entry: WireErrorEntry;
} {
  if (typeof error === 'number') return { status: error, entry: WIRE_ERRORS[error] };
  if (isHttpExceptionClass(error)) {
    // Made with no arguments, as `throw new ConflictException()` or a subclass's own message.
    const example = httpErrorBodyOf(new error());
    return {
      status: example.status,
      entry: { description: error.description ?? example.message, example },
    };
  }
  return {
    status: error.status,
    entry: {
      description: error.description,
      example: errorBodyOf(error.example),
      headers: Object.keys(error.example.headers),
    },
  };
}

/**
 * Documents the error answers of a route: the statuses the wire layer produces, by number, the domain
 * errors the route may raise, by class, each described as its class describes itself and shown by its
 * example, with the headers it writes, and NestJS exception classes (`ConflictException` or a
 * subclass), shown as made without arguments and described by a static `description` if they have
 * one. Errors sharing a status share its entry. JSON errors carry the legacy members and RFC 9457's,
 * under the negotiated JSON type or `application/problem+json` when asked for; XML errors are the
 * legacy Error.
 */
export const WireErrors = (
  ...errors: Array<WireErrorStatus | DocumentedErrorClass | HttpExceptionClass>
) => {
  const byStatus = new Map<number, WireErrorEntry[]>();
  for (const error of errors) {
    const { status, entry } = entryOf(error);
    byStatus.set(status, [...(byStatus.get(status) ?? []), entry]);
  }
  return applyDecorators(
    ApiExtraModels(ProblemDetailsSchema, LegacyErrorSchema),
    ...[...byStatus].map(([status, entries]) => {
      const examples = entries.flatMap(({ example }) => (example ? [example] : []));
      return ApiResponse({
        status,
        description: entries.map(({ description }) => description).join(' '),
        headers: headersOf(new Set(entries.flatMap(({ headers = [] }) => headers))),
        ...(examples.length > 0 && { content: errorContent(examples) }),
      });
    }),
  );
};
