import { type OpenAPIObject, type OperationObject } from '@nestjs/swagger';
import { parse as parseContentType } from 'content-type';
import fc from 'fast-check';
import { type IncomingHttpHeaders, request as httpRequest } from 'node:http';
import { OPENAPI_PATHS, requestBodyOf } from '../src/openapi/openapi-document';
import { AGENT_CHAIN_FIELDS } from '../src/transaction/agent-chain';
import { UpdateAgentsDto } from '../src/transaction/dto/update-agents.dto';
import { INT32_MAX, INT32_MIN, RouteMethods, wireModelOf } from '../src/wire';
import { DELIBERATE_DIFFERENCES } from './parity/deliberate-differences';
import { LEGACY_EXCHANGES } from './parity/recorded';
import {
  type BodyFormat,
  bodyBytes,
  bodyFor,
  type CaseStyle,
  caseStyle,
  RawBytes,
  recase,
} from './support/body-arbitraries';
import { encodeForm, encodeXml, type FormListStyle } from './support/client-encoding';
import { CATALOGUE, transactionRecord } from './support/fixtures';
import { TABLED_ACCEPTS, tabledAnswerType } from './support/negotiation-table';
import { describeOnEachDatabase } from './support/test-app';
import { UPDATE_AGENTS } from './support/update-agents-cases';
import { validRecord } from './support/wire-arbitraries';
import { inspectXml } from './support/xml-inspection';

/*
 * Fuzzing (CONTRACT §1, §2, §4, §5, §7): random and mutated requests of every method, path,
 * Content-Type, Accept and body against the real listening service, on each database. The routes are
 * the ones the service serves, with what its OpenAPI document says of them, so a new route is fuzzed
 * without an edit here. Every answer is below 500, arrives in time on an intact connection, and is
 * well-formed in a type the contract allows (the negotiation table says which, where it has the
 * case); errors carry the legacy Message and nothing internal. Afterwards the process, its prototypes
 * and the data the requests could not touch are as they were.
 */

/** Small, so that bodies over the limit stay cheap to send. */
const BODY_LIMIT_BYTES = 64 * 1024;
const RESPONSE_TIMEOUT_MS = 5000;
/** Fixed run counts: each run does the same amount of work, however slow the machine. */
const MAIN_RUNS = 1500;
const BODY_RUNS = 1200;
const VALID_UPDATE_RUNS = 80;

const UNLOCKED_IDS = [1001, 1002];
const LOCKED_IDS = [1003, 1004];
const SEEDED_IDS = [...UNLOCKED_IDS, ...LOCKED_IDS];
/** The fixture's keys, by the path parameter that names them: the ids a route finds. */
const SEEDED_KEYS: Readonly<Record<string, readonly number[]>> = { transaction_id: SEEDED_IDS };

const UPDATE_MODEL = wireModelOf(UpdateAgentsDto);

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'] as const;
type Method = (typeof METHODS)[number];

const JSON_TYPES = ['application/json', 'text/json'];
const XML_TYPES = ['application/xml', 'text/xml'];
const FORM_TYPE = 'application/x-www-form-urlencoded';
const READABLE_TYPES = [...JSON_TYPES, ...XML_TYPES, FORM_TYPE];
const WRITABLE_TYPES = [...JSON_TYPES, ...XML_TYPES];
const PROBLEM_JSON = 'application/problem+json';
const utf8 = (mediaType: string) => `${mediaType}; charset=utf-8`;

/** Every status this service may answer here: AUTH_MODE none, no rate limit, the database up. */
const PLAUSIBLE_STATUSES = new Set([200, 204, 304, 400, 404, 405, 409, 412, 413, 415]);

/** Where the Swagger UI's own files are served (by routes and not): the library's, not judged here. */
const UI_FILES = `${OPENAPI_PATHS[0]}/`.toLowerCase();

// ---------------------------------------------------------------------------------------------------
// Routes, as the service serves and documents them, and what a request-target names
// ---------------------------------------------------------------------------------------------------

// The OpenAPI document is read as plain JSON: any member may be looked at.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/** What the OpenAPI document says of one method of a route. */
interface Operation {
  readonly statuses: readonly number[];
  /** The media types of its success body; none where the document shows none. */
  readonly successTypes: readonly string[];
  /** Its success body's JSON schema, a reference resolved. */
  readonly successSchema?: Json;
  /** Its success body's root element in XML. */
  readonly xmlRoot?: string;
  /** The media types of the body it reads; none when it reads none. */
  readonly requestTypes: readonly string[];
}

interface Route {
  /** As routed, a parameter as `:name`: `/api/Transaction/GetTransaction/:transaction_id`. */
  readonly path: string;
  /** HEAD wherever GET (CONTRACT §1). */
  readonly methods: readonly Method[];
  /** Its path parameters in order, and whether the document makes each an int32. */
  readonly parameters: readonly { readonly name: string; readonly int32: boolean }[];
  /** An API route without parameters: also matched with one trailing segment, which it ignores (CONTRACT §1). */
  readonly legacyAction: boolean;
  /** Case-insensitive; after an API route's last segment any number of slashes (CONTRACT §1). */
  readonly pattern: RegExp;
  /** By method; none for the routes that serve the document itself. */
  readonly operations: Partial<Record<Method, Operation>>;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function operationOf(document: Json, operation: Json | undefined): Operation | undefined {
  if (!operation) return undefined;
  const resolve = (schema: Json | undefined): Json | undefined => {
    const name = (schema?.$ref as string | undefined)?.split('/').pop();
    return name === undefined ? schema : (document.components.schemas[name] as Json);
  };
  const responses = operation.responses as Json;
  const success = Object.entries(responses).find(
    ([status, response]) => Number(status) < 300 && (response as Json).content,
  )?.[1] as Json | undefined;
  const content = (success?.content ?? {}) as Json;
  return {
    statuses: Object.keys(responses).map(Number),
    successTypes: Object.keys(content),
    successSchema: resolve(content['application/json']?.schema as Json | undefined),
    xmlRoot: resolve(content['application/xml']?.schema as Json | undefined)?.xml?.name as
      string | undefined,
    requestTypes: Object.keys(
      requestBodyOf(document as OpenAPIObject, operation as OperationObject)?.content ?? {},
    ),
  };
}

/** Every route the router serves, with what the OpenAPI document says of each of its methods. */
function describeRoutes(
  served: readonly { path: string; methods: readonly string[] }[],
  document: Json,
  apiPrefix: string,
): Route[] {
  const methodsByPath = new Map<string, Set<Method>>();
  for (const { path, methods } of served) {
    // A route is matched with or without a trailing slash: `/swagger/` is `/swagger`.
    const key = path.length > 1 ? path.replace(/\/$/, '') : path;
    if (key.toLowerCase().startsWith(UI_FILES)) continue;
    const known = methodsByPath.get(key) ?? new Set<Method>();
    for (const method of methods.filter((name): name is Method =>
      (METHODS as readonly string[]).includes(name),
    )) {
      known.add(method);
      if (method === 'GET') known.add('HEAD');
    }
    methodsByPath.set(key, known);
  }
  const under = apiPrefix ? `/${apiPrefix}/`.toLowerCase() : '/';
  return [...methodsByPath].map(([path, methods]) => {
    const item = (document.paths as Json)[path.replace(/:(\w+)/g, '{$1}')] as Json | undefined;
    const operations: Partial<Record<Method, Operation>> = {};
    for (const method of methods) {
      const operation = operationOf(
        document,
        item?.[method === 'HEAD' ? 'get' : method.toLowerCase()],
      );
      if (operation) operations[method] = operation;
    }
    const documented = Object.values(item ?? {}).flatMap(
      (operation) => ((operation as Json).parameters ?? []) as Json[],
    );
    const parameters = [...path.matchAll(/:(\w+)/g)].map(([, name]) => {
      const schema = documented.find(
        (parameter) => parameter.in === 'path' && parameter.name === name,
      )?.schema as Json | undefined;
      return { name, int32: schema?.type === 'integer' && schema.format === 'int32' };
    });
    const api = path.toLowerCase().startsWith(under);
    const legacyAction = api && parameters.length === 0;
    const segments = path
      .split('/')
      .map((segment) => (segment.startsWith(':') ? '([^/]+)' : escapeRegExp(segment)))
      .join('/');
    return {
      path,
      methods: [...methods],
      parameters,
      legacyAction,
      pattern: new RegExp(
        `^${segments}${legacyAction ? '(?:/[^/]+)?' : ''}${api ? '/*' : '/?'}$`,
        'i',
      ),
      operations,
    };
  });
}

type Target = { readonly route: Route; readonly values: readonly string[] } | 'none' | 'unsure';

function matchRoute(routes: readonly Route[], pathname: string): Target | undefined {
  for (const route of routes) {
    const match = route.pattern.exec(pathname);
    if (match) return { route, values: match.slice(1) };
  }
  return undefined;
}

/**
 * The route a request-target names, `none` for a path no route has (404 whatever the method), or
 * `unsure` for what this test does not judge: the Swagger UI's static files, other request-target
 * forms, and literal segments written percent-encoded.
 */
function targetOf(routes: readonly Route[], requestTarget: string): Target {
  if (!requestTarget.startsWith('/')) return 'unsure';
  // Dot segments and backslashes resolved as a URL resolves them, and as the legacy's host did.
  const pathname = new URL(`http://host${requestTarget.split('?')[0]}`).pathname;
  // An escaped slash or backslash: the legacy's routing decoded it, and its answers there are not
  // judged here.
  if (/%2F|%5C/i.test(pathname)) return 'unsure';
  const matched = matchRoute(routes, pathname);
  if (matched) return matched;
  if (pathname.toLowerCase().startsWith(UI_FILES)) return 'unsure';
  const decoded = decodedOrUndefined(pathname);
  if (decoded !== undefined && matchRoute(routes, decoded)) return 'unsure';
  return 'none';
}

function decodedOrUndefined(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

type IdKind = 'found' | 'missing' | 'valid' | 'invalid' | 'unsure';

/**
 * What an int32 path segment should give: found (200), missing (404) or either when the fixture does
 * not say (`valid`), 400, or not judged here (`+1`, ` 1`…).
 */
function idKind(raw: string, seeded: readonly number[] | undefined): IdKind {
  const text = decodedOrUndefined(raw);
  if (text === undefined) return 'invalid';
  if (/^-?\d{1,10}$/.test(text)) {
    const id = Number(text);
    if (id < INT32_MIN || id > INT32_MAX) return 'invalid';
    if (!seeded) return 'valid';
    return seeded.includes(id) ? 'found' : 'missing';
  }
  if (/^[+-]?\d+$/.test(text)) {
    const id = Number(text);
    return id < INT32_MIN || id > INT32_MAX ? 'invalid' : 'unsure';
  }
  return text.trim() === text ? 'invalid' : 'unsure';
}

// ---------------------------------------------------------------------------------------------------
// Request media types, as CONTRACT §2 states them
// ---------------------------------------------------------------------------------------------------

// Charsets no decoder knows: Web API read such a body as UTF-8 (CONTRACT §2).
const UNKNOWN_CHARSETS = ['x-unknown', 'utf-9', 'klingon'];

/** Content-Types outside RFC 7231's grammar that Web API read, with the type it read (CONTRACT §2). */
const LENIENT_CONTENT_TYPES: Readonly<Record<string, string>> = {
  'application/json; charset': 'application/json',
  'application/ json': 'application/json',
  'text / xml': 'text/xml',
  'application/xml; a; b=c; d': 'application/xml',
  'application/x-www-form-urlencoded; charset': FORM_TYPE,
};

/** The request's media type, lower case and without parameters; `undefined` when absent or unreadable. */
function requestMediaTypeOf(header: string | undefined): string | undefined {
  if (header !== undefined && header in LENIENT_CONTENT_TYPES) return LENIENT_CONTENT_TYPES[header];
  try {
    return parseContentType((header ?? '').trim()).type;
  } catch {
    return undefined;
  }
}
/** Whether a route reading these types reads a request media type: one of them, or a range naming one. */
const isReadable = (mediaType: string, readable: readonly string[]) =>
  readable.includes(mediaType) ||
  (mediaType.endsWith('/*') &&
    readable.some((type) => mediaType === '*/*' || type.startsWith(mediaType.slice(0, -1))));

// ---------------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------------

interface FuzzRequest {
  readonly method: Method;
  /** The request-target exactly as sent. */
  readonly path: string;
  readonly contentType?: string;
  readonly accept?: string;
  readonly ifMatch?: string;
  readonly ifNoneMatch?: string;
  readonly requestId?: string;
  /** `undefined`: no body at all. */
  readonly body?: string | RawBytes;
  /** Sent with Transfer-Encoding: chunked instead of a Content-Length. */
  readonly chunked: boolean;
}

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/**
 * Sends a request byte for byte as described, on its own keep-alive connection (so a server answering
 * before it read the body drains it instead of resetting), and fails on a dropped connection or a hang.
 */
function send(baseUrl: string, spec: FuzzRequest): Promise<Answer> {
  const { hostname, port } = new URL(baseUrl);
  const headers: Record<string, string> = { Connection: 'keep-alive' };
  if (spec.contentType !== undefined) headers['Content-Type'] = spec.contentType;
  if (spec.accept !== undefined) headers.Accept = spec.accept;
  if (spec.ifMatch !== undefined) headers['If-Match'] = spec.ifMatch;
  if (spec.ifNoneMatch !== undefined) headers['If-None-Match'] = spec.ifNoneMatch;
  if (spec.requestId !== undefined) headers['X-Request-Id'] = spec.requestId;
  const bytes = bodyBytes(spec.body);
  if (spec.body !== undefined) {
    if (spec.chunked) headers['Transfer-Encoding'] = 'chunked';
    else headers['Content-Length'] = String(bytes.length);
  }
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (outcome: Answer | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outgoing.destroy();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const outgoing = httpRequest(
      { host: hostname, port, method: spec.method, path: spec.path, headers, agent: false },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          settle({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks),
          }),
        );
        response.on('error', (error) =>
          settle(new Error(`the response broke off: ${error.message}`)),
        );
      },
    );
    const timer = setTimeout(
      () => settle(new Error(`no complete answer within ${RESPONSE_TIMEOUT_MS} ms`)),
      RESPONSE_TIMEOUT_MS,
    );
    // Once the answer is complete, a reset of the rest of an unread body is no fault.
    outgoing.on('error', (error) => settle(new Error(`no answer: ${error.message}`)));
    if (spec.chunked) {
      for (let start = 0; start < bytes.length; start += 1000)
        outgoing.write(bytes.subarray(start, start + 1000));
    } else if (bytes.length > 0) {
      outgoing.write(bytes);
    }
    outgoing.end();
  });
}

// ---------------------------------------------------------------------------------------------------
// Judging one answer
// ---------------------------------------------------------------------------------------------------

/** Characters XML 1.0 cannot carry, not even as a character reference. */
const NON_XML_CHARACTER =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What must never reach a client (CONTRACT §7), unless the client itself sent it and it is echoed. */
const LEAKS: readonly RegExp[] = [
  /\n\s+at /,
  / {4}at /,
  /node_modules/,
  /QueryFailedError|TypeORMError|EntityNotFound/,
  /\bER_[A-Z_]{2,}/,
  /\bSQLITE_[A-Z]+/,
  /\bSELECT /,
  /\bINSERT /,
  /\bUPDATE /,
];

const requestText = (spec: FuzzRequest) =>
  [spec.path, spec.contentType, spec.accept, spec.ifMatch, spec.ifNoneMatch, spec.requestId]
    .filter((part) => part !== undefined)
    .join('\n') +
  '\n' +
  bodyBytes(spec.body).toString('utf8') +
  '\n' +
  bodyBytes(spec.body).toString('latin1');

/** Why a body is not well-formed XML 1.0, or `undefined`. */
function xmlProblem(text: string, root?: string): string | undefined {
  const bad = NON_XML_CHARACTER.exec(text);
  if (bad) {
    return `holds ${JSON.stringify(bad[0])} at ${bad.index}, which XML 1.0 cannot carry`;
  }
  try {
    const element = inspectXml(text);
    if (root !== undefined && element.name !== root)
      return `has root <${element.name}>, not <${root}>`;
    if (root === 'Error') {
      const message = element.children[0];
      if (message?.name !== 'Message' || message.text.trim() === '')
        return 'has no <Message> as the first child of <Error>';
    }
  } catch (error) {
    return `is not well-formed XML: ${(error as Error).message.split('\n')[0]}`;
  }
  return undefined;
}

function jsonProblem(
  text: string,
  check: (value: unknown) => string | undefined,
): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return `is not JSON: ${(error as Error).message}`;
  }
  return check(value);
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function jsonErrorProblem(status: number) {
  return (value: unknown) => {
    if (!isObject(value)) return 'is not a JSON object';
    if (typeof value.Message !== 'string' || value.Message === '') return 'has no legacy Message';
    if (value.status !== status) return `says status ${String(value.status)}`;
    for (const member of ['type', 'title', 'detail'])
      if (typeof value[member] !== 'string') return `has no string ${member}`;
    if (value.ModelState !== undefined) {
      if (!isObject(value.ModelState)) return 'has a ModelState that is not an object';
      for (const messages of Object.values(value.ModelState))
        if (!Array.isArray(messages) || !messages.every((message) => typeof message === 'string'))
          return 'has a ModelState entry that is not a list of messages';
    }
    return undefined;
  };
}

/**
 * What a JSON success body must be, as the document describes it: an array or an object, and an
 * object with a member named as an int32 path parameter says the one asked for.
 */
function successJsonShape(operation: Operation | undefined, target: Target) {
  return (value: unknown): string | undefined => {
    const schema = operation?.successSchema;
    if (!schema) return undefined;
    if (schema.type === 'array') return Array.isArray(value) ? undefined : 'is not a JSON array';
    if (schema.type !== 'object' && !schema.properties) return undefined;
    if (!isObject(value)) return 'is not a JSON object';
    if (typeof target !== 'object') return undefined;
    for (const [index, { name, int32 }] of target.route.parameters.entries()) {
      const asked = Number(decodedOrUndefined(target.values[index]));
      if (int32 && (schema.properties as Json | undefined)?.[name] && value[name] !== asked)
        return `is not the ${name} asked for`;
    }
    return undefined;
  };
}

/** The statuses a request must get, when this test can tell; `undefined` when it cannot. */
function expectedStatuses(spec: FuzzRequest, target: Target): number[] | undefined {
  if (target === 'unsure') return undefined;
  if (target === 'none') return [404];
  const { route, values } = target;
  if (!route.methods.includes(spec.method)) return [405];
  const operation = route.operations[spec.method];
  if (operation && operation.requestTypes.length > 0) return bodyStatuses(spec, operation);
  const success = operation
    ? operation.statuses.filter((status) => status >= 200 && status < 300)
    : [200];
  // Express answers `If-None-Match: *` with 304 wherever a GET succeeds, documented or not.
  const notModified = spec.ifNoneMatch === undefined ? [] : [304];
  const kinds = route.parameters.map(({ name, int32 }, index) =>
    int32 ? idKind(values[index], SEEDED_KEYS[name]) : 'unsure',
  );
  if (kinds.includes('unsure')) return undefined;
  if (kinds.includes('invalid')) return [400];
  if (kinds.includes('missing')) return [404];
  return [...success, ...notModified, ...(kinds.includes('valid') ? [404] : [])];
}

/**
 * A route reading a body: the media type is checked first, then the presence and size of the body
 * (CONTRACT §2, §7), any charset read; then what its document lists and this setup can answer.
 */
function bodyStatuses(spec: FuzzRequest, operation: Operation): number[] {
  const mediaType = requestMediaTypeOf(spec.contentType);
  const size = bodyBytes(spec.body).length;
  const sendsBody = spec.body !== undefined && (spec.chunked || size > 0);
  if (mediaType !== undefined && !isReadable(mediaType, operation.requestTypes)) return [415];
  if (!sendsBody) return [400];
  if (mediaType === undefined) return [415];
  if (size > BODY_LIMIT_BYTES) return [413];
  return operation.statuses.filter(
    (status) => PLAUSIBLE_STATUSES.has(status) && status !== 413 && status !== 415,
  );
}

/** Problem details only where the Accept header names them (CONTRACT §7). */
const namesProblemJson = (accept: string | undefined) =>
  accept !== undefined && accept.toLowerCase().includes(PROBLEM_JSON);

/** Everything wrong with one answer; empty when it is as the contract says. */
function judge(routes: readonly Route[], spec: FuzzRequest, answer: Answer): string[] {
  const problems: string[] = [];
  const { status, headers } = answer;
  const target = targetOf(routes, spec.path);
  const route = typeof target === 'object' ? target.route : undefined;
  const requestMediaType = requestMediaTypeOf(spec.contentType);
  const contentType = headers['content-type'];

  // The Swagger UI's static files redirect a directory to its trailing-slash form, as any file server.
  const pathname = spec.path.split('?')[0];
  if (
    status === 301 &&
    pathname.toLowerCase().startsWith(UI_FILES) &&
    (spec.method === 'GET' || spec.method === 'HEAD') &&
    String(headers.location).toLowerCase().startsWith(UI_FILES)
  )
    return problems;
  if (status >= 500) problems.push(`a server error ${status}`);
  else if (!PLAUSIBLE_STATUSES.has(status))
    problems.push(`status ${status}, which nothing here calls for`);
  const expected = expectedStatuses(spec, target);
  // A path that is not valid percent-encoding is a malformed request: 400 is as good as the route's answer.
  if (expected && decodedOrUndefined(pathname) === undefined) expected.push(400);
  if (expected && !expected.includes(status))
    problems.push(`status ${status} where ${expected.join(' or ')} is due`);

  if (status === 405) {
    const allow = (headers.allow ?? '')
      .split(',')
      .map((method) => method.trim())
      .filter(Boolean);
    if (allow.length === 0) problems.push('a 405 without an Allow header');
    if (allow.includes(spec.method)) problems.push(`a 405 whose Allow lists ${spec.method} itself`);
    if (route && [...allow].sort().join() !== [...route.methods].sort().join())
      problems.push(`Allow: ${allow.join(', ')} for a route taking ${route.methods.join(', ')}`);
  }

  const hasBody = spec.method !== 'HEAD' && status !== 204 && status !== 304;
  if (!hasBody && spec.method !== 'HEAD' && answer.body.length > 0)
    problems.push(`a ${status} with a body`);
  let text = '';
  if (hasBody) {
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(answer.body);
    } catch {
      problems.push('a body that is not UTF-8');
    }
  }
  if (hasBody && answer.body.length > 0 && contentType === undefined)
    problems.push('a body without a Content-Type');

  if (status >= 400) {
    // The table's type where it has the case; else one of the types errors are written in.
    const tabled = tabledAnswerType('error', spec.accept, requestMediaType);
    const allowed = tabled
      ? [tabled]
      : [...WRITABLE_TYPES, ...(namesProblemJson(spec.accept) ? [PROBLEM_JSON] : [])];
    if (!allowed.map(utf8).includes(String(contentType)))
      problems.push(`an error as ${String(contentType)}, not ${allowed.join(' or ')}`);
    if (hasBody) {
      const problem = XML_TYPES.includes(String(contentType).split(';')[0])
        ? xmlProblem(text, 'Error')
        : jsonProblem(text, jsonErrorProblem(status));
      if (problem) problems.push(`an error body that ${problem}`);
      const sent = requestText(spec);
      for (const leak of LEAKS)
        if (leak.test(text) && !leak.test(sent))
          problems.push(`an error body matching ${leak}, which leaks`);
    }
  } else if (
    status >= 200 &&
    status < 300 &&
    (hasBody || spec.method === 'HEAD') &&
    status !== 204
  ) {
    // The documented types; of a negotiated route, the table's where it has the case.
    const operation = route?.operations[spec.method];
    const documented = operation?.successTypes ?? [];
    const tabled = WRITABLE_TYPES.every((type) => documented.includes(type))
      ? tabledAnswerType('success', spec.accept, requestMediaType)
      : undefined;
    const allowed = tabled ? [tabled] : documented;
    if (allowed.length > 0 && !allowed.map(utf8).includes(String(contentType)))
      problems.push(`a ${status} as ${String(contentType)}, not ${allowed.join(' or ')}`);
    if (hasBody) {
      const mediaType = String(contentType).split(';')[0];
      const problem = JSON_TYPES.includes(mediaType)
        ? jsonProblem(text, successJsonShape(operation, target))
        : XML_TYPES.includes(mediaType)
          ? xmlProblem(text, operation?.xmlRoot)
          : undefined;
      if (problem) problems.push(`a ${status} body that ${problem}`);
    }
  }
  return problems;
}

const OBJECT_PROTOTYPE_KEYS = Reflect.ownKeys(Object.prototype).map(String).sort().join();
const ARRAY_PROTOTYPE_KEYS = Reflect.ownKeys(Array.prototype).map(String).sort().join();

function pollutionProblems(): string[] {
  const problems: string[] = [];
  if (({} as Record<string, unknown>).polluted !== undefined) problems.push('({}).polluted is set');
  if (Reflect.ownKeys(Object.prototype).map(String).sort().join() !== OBJECT_PROTOTYPE_KEYS)
    problems.push('Object.prototype has changed keys');
  if (Reflect.ownKeys(Array.prototype).map(String).sort().join() !== ARRAY_PROTOTYPE_KEYS)
    problems.push('Array.prototype has changed keys');
  return problems;
}

function describeAnswer(answer: Answer): string {
  const text = answer.body.toString('utf8');
  return (
    `HTTP ${answer.status}; Content-Type: ${String(answer.headers['content-type'])}; ` +
    `Allow: ${String(answer.headers.allow)}; body (${answer.body.length} bytes): ` +
    JSON.stringify(text.length > 400 ? `${text.slice(0, 400)}…` : text)
  );
}

/** Sends one request and throws, naming every violation, when the answer breaks the contract. */
async function sendAndJudge(
  baseUrl: string,
  routes: readonly Route[],
  spec: FuzzRequest,
): Promise<Answer> {
  const answer = await send(baseUrl, spec);
  const problems = [...judge(routes, spec, answer), ...pollutionProblems()];
  if (problems.length > 0)
    throw new Error(
      `${problems.map((problem) => `- ${problem}`).join('\n')}\n${describeAnswer(answer)}`,
    );
  return answer;
}

// ---------------------------------------------------------------------------------------------------
// Arbitraries
// ---------------------------------------------------------------------------------------------------

// Hand-picked edge cases, mixed in with the random ones.

// prettier-ignore
const ODD_IDS = [
  '0', '-0', '+1001', '01001', '1e3', '0x10', '1.5', '1,001', '%201001', '1001%20', 'NaN',
  'Infinity', '-', '+', '2147483647', '2147483648', '-2147483648', '-2147483649', '9'.repeat(300),
  '%', '%%', '%zz', '%FF', '%E0%A4%A', '%C0%AF', '%ED%A0%80', '%00', '%2F', '%2e%2e', '..', '.',
  '%u0031', '%D9%A1%D9%A0%D9%A0%D9%A1', 'null', 'undefined', '__proto__', 'constructor',
];
// prettier-ignore
const ODD_QUERIES = [
  'x=%FF', 'a[b][c]=1', '__proto__[polluted]=yes', 'constructor[prototype][polluted]=yes', '%', '=&=&',
];
// prettier-ignore
const ODD_TARGETS = [
  '*', '/', '//', '///health/live', 'http://localhost/health/live',
  'http://localhost/api/Requirement/GetRequirements', '/api', '/api/', '/%', '/%%', '/%FF',
  '/./health/live', '/health/./live', '/health/live/..', '/api/Transaction/GetTransaction/1001/..',
  '/health//live', '/api/Transaction/UpdateAgents%00', '/api/Transaction/UpdateAgents/',
  '/api/Transaction/UpdateAgents/.', `/${'a/'.repeat(2000)}`, `/${'x'.repeat(6000)}`,
  `/api/Transaction/GetTransaction/${'%FF'.repeat(1500)}`,
];
// prettier-ignore
const ODD_ACCEPTS = [
  ';', ',', ',,,', 'application/', '/xml', 'application/xml;q=', 'application/xml;q=2',
  'application/xml;q=abc', 'application/xml;q=-1', 'application/xml; q = 0.5', 'xml', 'json', '*',
  'application/xml;q=0.5;q=0.1', 'text/xml;level=1', 'application/xml, application/xml;q=0', '',
  'application/xml;q=1e0', 'q=1',
];
// prettier-ignore
const ODD_ENTITY_TAGS = [
  '*', '""', '"x"', 'W/"x"', 'garbage', '"1001.1"', '"1003.1"', '"1001.1", "1002.1"', '"-1.0"',
  '"99999999999999999999.1"', '"1001.99999999999999999999"', '"1001.-1"', '"1001.1e3"', ', ,',
  '"1001.1',
];
/** Visible ASCII a path segment may hold as is: no `/`, `?` or `#`, and `%` free to form any escape. */
const PATH_CHARACTERS = [...Array(0x7e - 0x20).keys()]
  .map((offset) => String.fromCharCode(0x21 + offset))
  .filter((char) => !'/?#'.includes(char));
const pathText = (maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...PATH_CHARACTERS), minLength: 1, maxLength });
const printable = (maxLength: number) =>
  fc.string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
    maxLength,
  });
const percentEncodeAll = (text: string) =>
  [...Buffer.from(text)]
    .map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)
    .join('');

const transactionIdText: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...SEEDED_IDS).map(String) },
  fc.constantFrom(...SEEDED_IDS).map((id) => percentEncodeAll(String(id))),
  { weight: 2, arbitrary: fc.integer({ min: INT32_MIN, max: INT32_MAX }).map(String) },
  fc
    .bigInt({ min: -(10n ** 30n), max: 10n ** 30n })
    .filter((id) => id < BigInt(INT32_MIN) || id > BigInt(INT32_MAX))
    .map(String),
  fc.constantFrom(...ODD_IDS),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).map(encodeURIComponent),
  pathText(30),
  fc
    .uint8Array({ minLength: 1, maxLength: 12 })
    .map((bytes) => [...bytes].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('')),
);

const queryText = fc.oneof(
  printable(40).map((text) => text.replace(/[#\s]/g, '')),
  fc.constantFrom(...ODD_QUERIES),
);

/** A route's path with its literal segments recased and the values put in for its parameters. */
function routePath(route: Route, style: CaseStyle, values: readonly string[]): string {
  let next = 0;
  return route.path
    .split('/')
    .map((segment) => (segment.startsWith(':') ? values[next++] : recase(segment, style)))
    .join('/');
}

/** A route's path with its case varied, values for its parameters, maybe a trailing slash and a query. */
const routeTarget = (routes: readonly Route[]) =>
  fc
    .constantFrom(...routes)
    .chain((route) =>
      fc.record({
        route: fc.constant(route),
        style: caseStyle,
        values: fc.tuple(...route.parameters.map(() => transactionIdText)),
        // A legacy action's ignored segment, as the legacy route template allowed.
        ignoredSegment: fc.option(transactionIdText, { freq: 4 }),
        slash: fc.boolean(),
        query: fc.option(queryText, { freq: 5 }),
      }),
    )
    .map(({ route, style, values, ignoredSegment, slash, query }) => {
      const path = routePath(route, style, values);
      const ignored = route.legacyAction && ignoredSegment !== null ? `/${ignoredSegment}` : '';
      return `${path}${ignored}${slash ? '/' : ''}` + (query === null ? '' : `?${query}`);
    });

/** Random segments under the root, a route, or a route's leading segments (`/api/Transaction`). */
const unknownTarget = (routes: readonly Route[]) => {
  const prefixes = new Set(['']);
  for (const { path } of routes) {
    const fixed = path.split('/:')[0].split('/');
    for (let length = 2; length <= fixed.length; length += 1)
      prefixes.add(fixed.slice(0, length).join('/'));
  }
  return fc
    .tuple(fc.constantFrom(...prefixes), fc.array(pathText(24), { minLength: 1, maxLength: 4 }))
    .map(([prefix, segments]) => `${prefix}/${segments.join('/')}`);
};

const oddTarget = fc.constantFrom(...ODD_TARGETS);

/** Any method on any request-target: mostly the routes the service serves. */
const anyTarget = (routes: readonly Route[]): fc.Arbitrary<readonly [Method, string]> =>
  fc.tuple(
    fc.constantFrom(...METHODS),
    fc.oneof(
      { weight: 6, arbitrary: routeTarget(routes) },
      { weight: 3, arbitrary: unknownTarget(routes) },
      { weight: 1, arbitrary: oddTarget },
    ),
  );

// prettier-ignore
const CHARSET_PARAMETERS = [
  '', '; charset=utf-8', ';charset=UTF-8', '; charset="utf-8"', ' ; charset=utf-8', '; charset=iso-8859-1', '; charset=utf-16le', '; charset=us-ascii', '; charset=utf-8; boundary=x', '; q=1',
];
// prettier-ignore
const UNSUPPORTED_TYPES = [
  'text/plain', 'application/octet-stream', 'multipart/form-data; boundary=x', PROBLEM_JSON, 'application/json-patch+json', 'application/merge-patch+json', 'text/html', 'application/soap+xml', 'application/xhtml+xml', 'image/png', '*/*', 'application/*', 'text/plain; charset=utf-8',
];
// prettier-ignore
const ODD_CONTENT_TYPES = [
  'application/json;', 'application/json; charset=', 'json', 'xml', '/', ';', ',', 'application/', '/json', 'application/json, application/xml', 'application/json; charset="utf-8', 'application/json charset=utf-8', '"application/json"', 'application/xml;;charset=utf-8', 'text/xml; charset=utf-8;',
  ...Object.keys(LENIENT_CONTENT_TYPES),
];

const TYPES_OF_FORMAT: Record<BodyFormat, string[]> = {
  json: JSON_TYPES,
  xml: XML_TYPES,
  form: [FORM_TYPE],
};

/** A Content-Type header for a body in some format: mostly its own type, sometimes anything. */
const contentTypeFor = (format: BodyFormat): fc.Arbitrary<string | undefined> =>
  fc.oneof(
    {
      weight: 8,
      arbitrary: fc
        .tuple(
          fc.constantFrom(...TYPES_OF_FORMAT[format]),
          caseStyle,
          fc.constantFrom(...CHARSET_PARAMETERS),
        )
        .map(([mediaType, style, parameters]) => recase(mediaType, style) + parameters),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom(...READABLE_TYPES), fc.constantFrom(...CHARSET_PARAMETERS))
        .map(([mediaType, parameters]) => mediaType + parameters),
    },
    fc
      .tuple(fc.constantFrom(...READABLE_TYPES), fc.constantFrom(...UNKNOWN_CHARSETS))
      .map(([mediaType, charset]) => `${mediaType}; charset=${charset}`),
    fc.constantFrom(...UNSUPPORTED_TYPES),
    fc.constantFrom(...ODD_CONTENT_TYPES),
    printable(40),
    fc.constant(undefined),
  );

// prettier-ignore
const ACCEPT_RANGES = [
  'application/json', 'text/json', 'application/xml', 'text/xml', '*/*', 'application/*', 'text/*', PROBLEM_JSON, 'text/html', 'text/plain', 'image/png', FORM_TYPE, 'application/xhtml+xml',
];
// prettier-ignore
const Q_VALUES = [
  undefined, '1', '1.0', '1.000', '0.9', '0.5', '0.123', '0.1', '0.001', '0', '0.0', '0.000',
];

/** Mostly the negotiation table's headers, whose answers are judged exactly; the rest, loosely. */
const acceptHeader: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...TABLED_ACCEPTS) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        fc.uniqueArray(
          fc.record({
            range: fc.constantFrom(...ACCEPT_RANGES),
            q: fc.constantFrom(...Q_VALUES),
            style: caseStyle,
          }),
          { selector: (part) => part.range, minLength: 1, maxLength: 4 },
        ),
        fc.constantFrom(', ', ',', ' , '),
      )
      .map(([parts, separator]) =>
        parts
          .map(({ range, q, style }) => recase(range, style) + (q === undefined ? '' : `;q=${q}`))
          .join(separator),
      ),
  },
  fc.constantFrom(...ODD_ACCEPTS),
  printable(60),
);

const entityTag = (etags: readonly string[]): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom(...ODD_ENTITY_TAGS),
    fc
      .tuple(fc.constantFrom(...SEEDED_IDS, 0, -1), fc.nat({ max: 6 }))
      .map(([id, version]) => `"${id}.${version}"`),
    fc.constantFrom(...etags),
    printable(30),
  );

const contentTypeAndBody = fc
  .constantFrom<BodyFormat>('json', 'xml', 'form')
  .chain((format) =>
    fc.tuple(
      contentTypeFor(format),
      bodyFor(format, { transactionIds: SEEDED_IDS, bodyLimitBytes: BODY_LIMIT_BYTES }),
    ),
  );

function fuzzRequest(
  etags: readonly string[],
  target: fc.Arbitrary<readonly [Method, string]>,
): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      target,
      contentTypeAndBody,
      accept: acceptHeader,
      ifMatch: fc.option(entityTag(etags), { freq: 4, nil: undefined }),
      ifNoneMatch: fc.option(entityTag(etags), { freq: 4, nil: undefined }),
      requestId: fc.option(fc.oneof(printable(40), fc.constantFrom('abc-123', 'a'.repeat(129))), {
        freq: 10,
        nil: undefined,
      }),
      chunked: fc.boolean(),
    })
    .map(({ target: [method, path], contentTypeAndBody: [contentType, body], ...rest }) => {
      const spec: Record<string, unknown> = { method, path, ...rest, contentType, body };
      for (const key of Object.keys(spec)) if (spec[key] === undefined) delete spec[key];
      return spec as unknown as FuzzRequest;
    });
}

// ---------------------------------------------------------------------------------------------------
// The suite
// ---------------------------------------------------------------------------------------------------

const FIXTURE_TRANSACTIONS = [
  transactionRecord(1001),
  transactionRecord(1002, { requirements: [], coborrowername: null, salesagentname_recruit: null }),
  transactionRecord(1003, { locked: true }),
  transactionRecord(1004, { locked: true, requirements: [], brokerid: null }),
];

const AGENT_FIELDS: readonly string[] = AGENT_CHAIN_FIELDS;
/** A transaction as JSON without what UpdateAgents may change: agent chain, stamp, version. */
function withoutAgentChain(transaction: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(transaction).filter(
      ([name]) => !AGENT_FIELDS.includes(name) && name !== 'stamp' && name !== 'row_version',
    ),
  );
}

const UTF16_CHARSET = /charset=utf-16(?![\w-])/i;

describe('the negotiation table the fuzzing judges by', () => {
  it("gives every Accept header and request type it has the legacy's recorded answer, but where CONTRACT differs on purpose", () => {
    const deliberate = new Set(DELIBERATE_DIFFERENCES.flatMap((difference) => difference.cases));
    const cases = LEGACY_EXCHANGES.flatMap(({ name, request, legacy }) => {
      if (deliberate.has(name) || legacy.contentType === null) return [];
      const headers: Record<string, string | undefined> = Object.fromEntries(
        Object.entries(request.headers).map(([header, value]) => [header.toLowerCase(), value]),
      );
      // The table is of media types; an answer's encoding, which these headers may change, is the
      // parity suite's to judge (the fuzzing never sends them).
      if (
        headers['accept-charset'] !== undefined ||
        UTF16_CHARSET.test(headers['content-type'] ?? '')
      )
        return [];
      const tabled = tabledAnswerType(
        legacy.status >= 400 ? 'error' : 'success',
        headers.accept,
        requestMediaTypeOf(headers['content-type']),
      );
      return tabled === undefined
        ? []
        : [{ name, accept: headers.accept, legacy: legacy.contentType, tabled: utf8(tabled) }];
    });
    expect(cases.filter((tested) => tested.legacy !== tested.tabled)).toEqual([]);
    // Every row of the table is one the legacy was asked.
    const asked = new Set(cases.map((tested) => tested.accept));
    expect(TABLED_ACCEPTS.filter((accept) => !asked.has(accept))).toEqual([]);
  });
});

describeOnEachDatabase(
  'fuzzing every route with random and mutated requests',
  (context) => {
    const snapshot = {
      requirementsJson: '',
      requirementsXml: '',
      transactions: new Map<number, string>(),
    };
    const etags: string[] = [];
    let routes: Route[] = [];
    const baseUrl = () => context.running.baseUrl;
    const getTransaction = async (id: number) =>
      JSON.parse(
        (
          await context.http
            .get(`/api/Transaction/GetTransaction/${id}`)
            .set('Accept', 'application/json')
            .expect(200)
        ).text,
      ) as Record<string, unknown>;

    beforeAll(async () => {
      const document = (await context.http.get(OPENAPI_PATHS[1]).expect(200)).body as Json;
      routes = describeRoutes(
        context.running.app.get(RouteMethods).routes(),
        document,
        context.running.config.apiPrefix,
      );
      await context.running.seed({ requirements: CATALOGUE, transactions: FIXTURE_TRANSACTIONS });
      for (const accept of ['application/json', 'application/xml']) {
        const requirements = await context.http
          .get('/api/Requirement/GetRequirements')
          .set('Accept', accept)
          .expect(200);
        if (accept === 'application/json') snapshot.requirementsJson = requirements.text;
        else snapshot.requirementsXml = requirements.text;
        etags.push(String(requirements.headers.etag));
      }
      for (const id of SEEDED_IDS) {
        const transaction = await context.http
          .get(`/api/Transaction/GetTransaction/${id}`)
          .expect(200);
        snapshot.transactions.set(id, transaction.text);
        etags.push(String(transaction.headers.etag));
      }
    });

    it('answers random requests to every route without a 5xx, in a negotiated, well-formed type', async () => {
      await fc.assert(
        fc.asyncProperty(fuzzRequest(etags, anyTarget(routes)), async (spec) => {
          await sendAndJudge(baseUrl(), routes, spec);
        }),
        { numRuns: MAIN_RUNS },
      );
    }, 60_000);

    it('answers random and mutated bodies of every content type sent to each route that reads one the same way', async () => {
      const reads = routes.flatMap((route) =>
        route.methods
          .filter((method) => route.operations[method]?.requestTypes.length)
          .map((method) => ({ route, method })),
      );
      expect(reads).not.toEqual([]);
      const bodyTarget = fc
        .record({ read: fc.constantFrom(...reads), style: caseStyle, slash: fc.boolean() })
        .chain(({ read: { route, method }, style, slash }) =>
          fc
            .tuple(...route.parameters.map(() => transactionIdText))
            .map((values): readonly [Method, string] => [
              method,
              routePath(route, style, values) + (slash ? '/' : ''),
            ]),
        );
      await fc.assert(
        fc.asyncProperty(fuzzRequest(etags, bodyTarget), async (spec) => {
          await sendAndJudge(baseUrl(), routes, spec);
        }),
        { numRuns: BODY_RUNS },
      );
    }, 60_000);

    it('applies every valid UpdateAgents body in each content type: 204, and exactly the sent agent chain', async () => {
      const validUpdate = fc.record({
        record: validRecord(UpdateAgentsDto),
        transactionId: fc.constantFrom(...UNLOCKED_IDS),
        contentType: fc
          .tuple(fc.constantFrom(...READABLE_TYPES), fc.constantFrom('', '; charset=utf-8'))
          .map(([mediaType, parameters]) => mediaType + parameters),
        accept: fc.option(fc.constantFrom('application/json', 'text/xml', '*/*'), {
          nil: undefined,
        }),
        style: fc.constantFrom<FormListStyle>('brackets', 'dots'),
      });
      await fc.assert(
        fc.asyncProperty(
          validUpdate,
          async ({ record, transactionId, contentType, accept, style }) => {
            const body = { ...record, transaction_id: transactionId };
            const mediaType = contentType.split(';')[0];
            const text = JSON_TYPES.includes(mediaType)
              ? JSON.stringify(body)
              : XML_TYPES.includes(mediaType)
                ? encodeXml(body, UPDATE_MODEL)
                : encodeForm(body, UPDATE_MODEL, style);
            const before = await getTransaction(transactionId);
            const answer = await sendAndJudge(baseUrl(), routes, {
              method: 'POST',
              path: UPDATE_AGENTS,
              contentType,
              accept,
              body: text,
              chunked: false,
            });
            if (answer.status !== 204)
              throw new Error(`a valid body got ${describeAnswer(answer)}`);
            const after = await getTransaction(transactionId);
            // A form cannot tell an empty value from null (CONTRACT §5).
            const sent = (value: unknown) =>
              mediaType === FORM_TYPE && value === '' ? null : value;
            const expected = Object.fromEntries(
              AGENT_FIELDS.map((field) => [field, sent(body[field as keyof typeof body])]),
            );
            const stored = Object.fromEntries(AGENT_FIELDS.map((field) => [field, after[field]]));
            expect(stored).toStrictEqual(expected);
            expect(withoutAgentChain(after)).toStrictEqual(withoutAgentChain(before));
          },
        ),
        { numRuns: VALID_UPDATE_RUNS },
      );
    }, 60_000);

    it('is still ready afterwards, with its prototypes clean and the data no request could change intact', async () => {
      expect(pollutionProblems()).toEqual([]);
      await context.http.get('/health/ready').expect(200);
      const requirementsJson = await context.http
        .get('/api/Requirement/GetRequirements')
        .set('Accept', 'application/json')
        .expect(200);
      expect(requirementsJson.text).toBe(snapshot.requirementsJson);
      const requirementsXml = await context.http
        .get('/api/Requirement/GetRequirements')
        .set('Accept', 'application/xml')
        .expect(200);
      expect(requirementsXml.text).toBe(snapshot.requirementsXml);
      for (const id of LOCKED_IDS) {
        const locked = await context.http.get(`/api/Transaction/GetTransaction/${id}`).expect(200);
        expect(locked.text).toBe(snapshot.transactions.get(id));
      }
      for (const id of UNLOCKED_IDS) {
        const original = JSON.parse(snapshot.transactions.get(id)!) as Record<string, unknown>;
        expect(withoutAgentChain(await getTransaction(id))).toStrictEqual(
          withoutAgentChain(original),
        );
      }
    });
  },
  // The event feed and webhooks on, so that their routes are fuzzed as they serve, not only as
  // they answer when off.
  { BODY_LIMIT: `${BODY_LIMIT_BYTES}b`, EVENTS_FEED: 'true', WEBHOOKS: 'true' },
);
