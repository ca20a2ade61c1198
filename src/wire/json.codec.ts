import { formatWireDate } from './wire-date';
import {
  type BoundRecord,
  MAX_DOCUMENT_DEPTH,
  type WireErrorBody,
  type WireReader,
  type WireWriter,
} from './wire-codec';
import { MalformedBodyError } from './wire-errors';
import { type WireModel, wireModelOf } from './wire-model';

export const JSON_MEDIA_TYPES = ['application/json', 'text/json'] as const;
export const PROBLEM_JSON = 'application/problem+json';

function depthExceeds(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (limit === 0) return true;
  const children: unknown[] = Array.isArray(value) ? value : Object.values(value);
  return children.some((child) => depthExceeds(child, limit - 1));
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

function parseDocument(text: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new MalformedBodyError('The request body is not valid JSON.');
  }
  if (depthExceeds(parsed, MAX_DOCUMENT_DEPTH)) {
    throw new MalformedBodyError(
      `The request body is nested deeper than ${MAX_DOCUMENT_DEPTH} levels.`,
    );
  }
  return parsed;
}

/** Picks the model's members from a parsed object, case-sensitively; unknown members are ignored. */
function bind(model: WireModel, source: Record<string, unknown>): BoundRecord {
  const bound: BoundRecord = {};
  for (const member of model.members) {
    if (!Object.hasOwn(source, member.name)) continue;
    const value = source[member.name];
    if (member.kind === 'list' && Array.isArray(value)) {
      const itemModel = wireModelOf(member.item());
      bound[member.name] = value.map((item: unknown) =>
        isPlainObject(item) ? bind(itemModel, item) : item,
      );
    } else {
      bound[member.name] = value;
    }
  }
  return bound;
}

/** The JSON value of one record: every member, in declaration order, `null` when missing. */
function toJsonValue(model: WireModel, record: object): Record<string, unknown> {
  const source = record as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const member of model.members) {
    const value = source[member.name];
    if (value === undefined || value === null) out[member.name] = null;
    else if (member.kind === 'list') {
      const itemModel = wireModelOf(member.item());
      out[member.name] = (value as object[]).map((item) => toJsonValue(itemModel, item));
    } else if (value instanceof Date) out[member.name] = formatWireDate(value);
    else out[member.name] = value;
  }
  return out;
}

/** Json.NET's formats: `application/json` and `text/json`; errors as RFC 9457 problem details. */
export class JsonCodec implements WireReader, WireWriter {
  readonly requestTypes = JSON_MEDIA_TYPES;
  readonly responseTypes = JSON_MEDIA_TYPES;
  readonly errorType = PROBLEM_JSON;

  decode(text: string, model: WireModel): BoundRecord {
    const parsed = parseDocument(text);
    if (!isPlainObject(parsed)) {
      throw new MalformedBodyError(
        `The request body must be a JSON object holding one ${model.name}.`,
      );
    }
    return bind(model, parsed);
  }

  decodeList(text: string, model: WireModel): BoundRecord[] {
    return this.bindList(parseDocument(text), model);
  }

  /** Binds an already parsed JSON array of records. */
  bindList(parsed: unknown, model: WireModel): BoundRecord[] {
    if (!Array.isArray(parsed))
      throw new MalformedBodyError(`The document must be a JSON array of ${model.name}.`);
    return parsed.map((item: unknown, index) => {
      if (!isPlainObject(item))
        throw new MalformedBodyError(`Record ${index + 1} is not a JSON object.`);
      return bind(model, item);
    });
  }

  encode(model: WireModel, value: object | readonly object[]): string {
    const json = Array.isArray(value)
      ? (value as readonly object[]).map((record) => toJsonValue(model, record))
      : toJsonValue(model, value);
    return JSON.stringify(json);
  }

  encodeError(error: WireErrorBody): string {
    return JSON.stringify({
      type: `urn:property-sales:problem:${error.code}`,
      title: error.title,
      status: error.status,
      detail: error.message,
      Message: error.message,
      ...(error.modelState && { ModelState: error.modelState }),
      ...(error.requestId && { requestId: error.requestId }),
    });
  }
}
