import { JsonNumeral, readJsonDocument, readStandardJsonDocument } from './json-reader';
import {
  type BoundRecord,
  isBoundRecord,
  type WireMember,
  type WireModel,
  wireModelOf,
} from '../model/wire-model';
import {
  IMPORT_QUOTAS,
  type PlainRecord,
  type WireErrorBody,
  type WireReader,
  type WireWriter,
} from './wire-codec';
import { formatWireDate } from '../values/wire-date';
import { JSON_DIALECT } from './wire-dialects';
import { UnreadableValue } from '../values/unreadable-value';
import { MalformedBodyError } from '../model/wire-errors';
import {
  bindListNow,
  bindWithListsInSteps,
  type ListBinder,
  runSteps,
  type Steps,
} from '../model/steps';

export const JSON_MEDIA_TYPES = ['application/json', 'text/json'] as const;
export const PROBLEM_JSON = 'application/problem+json';

const membersByLowerName = new WeakMap<readonly WireMember[], ReadonlyMap<string, WireMember>>();

/**
 * The members a body binds: a request's (or an import file's), where a read-only member is an unknown
 * one, or an answer's, which holds them all.
 */
const boundMembers = (model: WireModel, answer: boolean) =>
  answer ? model.members : model.readMembers;

/** Json.NET matches member names ignoring case. */
function memberNamed(members: readonly WireMember[], name: string): WireMember | undefined {
  let byName = membersByLowerName.get(members);
  if (!byName) {
    byName = new Map(members.map((member) => [member.name.toLowerCase(), member]));
    membersByLowerName.set(members, byName);
  }
  return byName.get(name.toLowerCase());
}

/**
 * Binds a parsed object to the model as Json.NET did: names matched ignoring case, a member given
 * twice takes the later value, unknown members ignored, each value read by Json.NET's rules.
 */
function bind(
  model: WireModel,
  source: Record<string, unknown>,
  bindList: ListBinder = bindListNow,
  answer = false,
): BoundRecord {
  const bound: BoundRecord = {};
  const members = boundMembers(model, answer);
  const names = Object.keys(source);
  for (let index = 0; index < names.length; index++) {
    const name = names[index];
    const value = source[name];
    const member = memberNamed(members, name);
    if (!member) continue;
    if (member.kind !== 'list') {
      const read = JSON_DIALECT[member.kind](value);
      if (!(read instanceof UnreadableValue)) bound[member.name] = read;
      else if (!read.failsRecord || index === names.length - 1)
        bound[member.name] = read.sentAs(name);
      else {
        // Json.NET's reader, once failed, failed again on the next member and lost it, known or not.
        bound[member.name] = read.sentAs(name).losing(names[index + 1]);
        index++;
      }
    } else if (Array.isArray(value)) {
      const itemModel = wireModelOf(member.item());
      bound[member.name] = bindList(member.name, value as unknown[], (item) => {
        if (isBoundRecord(item)) return bind(itemModel, item, bindListNow, answer);
        if (emptyAsNull(item) === null) return null;
        return new UnreadableValue(item instanceof JsonNumeral ? item.text : item);
      });
    } else if (emptyAsNull(value) === null) bound[member.name] = null;
    // A numeral is quoted as written, like any other value a list cannot hold.
    else
      bound[member.name] = new UnreadableValue(
        value instanceof JsonNumeral ? value.text : value,
        false,
        listFaultPath(name, value),
      );
  }
  return bound;
}

// The characters for which Json.NET's path quotes a member name: `['a.b']`.
const PATH_SPECIAL = /[. [\]()]/;

/**
 * Where Json.NET reported a value given for a list that is not one: at the member as sent, or, for an
 * object, at its first member, which it had read when it gave up (`requirements.0`,
 * `requirements.['a.b']`). A parsed object lists integer-like names first, which Json.NET did not.
 */
function listFaultPath(name: string, value: unknown): string {
  const first = isBoundRecord(value) ? Object.keys(value)[0] : undefined;
  if (first === undefined) return name;
  return `${name}.${PATH_SPECIAL.test(first) ? `['${first}']` : first}`;
}

/**
 * Json.NET read an empty string as null for any nullable type but text, a list or a record included
 * (`"requirements": ""`, `[""]`).
 */
const emptyAsNull = (value: unknown) => (value === '' ? null : value);

function oneObject(parsed: unknown, name: string): Record<string, unknown> {
  if (!isBoundRecord(parsed))
    throw new MalformedBodyError(`The request body must be a JSON object holding one ${name}.`);
  return parsed;
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

/**
 * Json.NET's formats: `application/json` and `text/json`. Errors carry the legacy members and the RFC
 * 9457 ones in one body, in the negotiated JSON type (a .NET client reads no other), or as
 * `application/problem+json` when the Accept header asks for it.
 */
export class JsonCodec implements WireReader, WireWriter {
  readonly requestTypes = JSON_MEDIA_TYPES;
  readonly strictEncodings = true;
  // Web API's JSON formatter read through a StreamReader, which follows a byte order mark to .NET's
  // default encoding of that name (a replacing one, where the formatter's own encodings refused),
  // unless the mark was the preamble of the formatter's encoding for the charset.
  readonly replacesAfterByteOrderMark = true;
  readonly responseTypes = JSON_MEDIA_TYPES;
  readonly errorOnlyTypes = [PROBLEM_JSON];

  decode(text: string, model: WireModel): BoundRecord {
    return runSteps(this.decodeSteps(text, model));
  }

  *decodeSteps(text: string, model: WireModel): Steps<BoundRecord> {
    const source = oneObject(readJsonDocument(text), model.name);
    return yield* bindWithListsInSteps((bindList) => bind(model, source, bindList));
  }

  /**
   * Reads an answer as the service writes it, read-only members included: what a request's reading
   * leaves out. For the OpenAPI document's response examples.
   */
  decodeAnswer(text: string, model: WireModel): BoundRecord {
    return bind(model, oneObject(readJsonDocument(text), model.name), bindListNow, true);
  }

  decodePlain(text: string, rootName = 'object'): PlainRecord {
    return oneObject(readStandardJsonDocument(text), rootName);
  }

  decodeList(text: string, model: WireModel): BoundRecord[] {
    return this.bindList(readJsonDocument(text, IMPORT_QUOTAS), model);
  }

  /** Binds an already parsed JSON array of records. */
  bindList(parsed: unknown, model: WireModel): BoundRecord[] {
    if (!Array.isArray(parsed))
      throw new MalformedBodyError(`The document must be a JSON array of ${model.name}.`);
    return parsed.map((item: unknown, index) => {
      if (!isBoundRecord(item))
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
