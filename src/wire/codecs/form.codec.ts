import { type BoundRecord, type WireModel, wireModelOf } from '../model/wire-model';
import { type PlainRecord, type WireReader } from './wire-codec';
import { FORM_DIALECT } from './wire-dialects';
import { isDotNetBlank } from '../values/white-space';
import { MalformedBodyError } from '../model/wire-errors';
import { dotNetUrlDecode } from '../values/dotnet-url-decode';
import { jQueryToModelKey } from './jquery-keys';

export const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';

/** Most `[` and `.` a key read for a plain DTO may hold, whose records are built by recursion. */
const MAX_KEY_SEGMENTS = 8;

/**
 * The form's key and value pairs, split and decoded as Web API's FormUrlEncodedParser did: pairs at
 * `&`, the key at the first `=` (a key without one has the value ''), each decoded by
 * `dotNetUrlDecode`. Empty pairs bind nothing and are left out. As many pairs as the body holds: the
 * body's byte limit bounds them, and each costs time in proportion to its length.
 */
function formPairs(text: string): [string, string][] {
  const pairs: [string, string][] = [];
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    pairs.push(
      equals < 0
        ? [dotNetUrlDecode(pair), '']
        : [dotNetUrlDecode(pair.slice(0, equals)), dotNetUrlDecode(pair.slice(equals + 1))],
    );
  }
  return pairs;
}

interface FormFields {
  /** First value of each plain key, by lower-case name. */
  readonly scalars: Map<string, string>;
  /**
   * Indexed keys: list name → index as written → the item's members (first value of each, by
   * lower-case name). An item is present once any key addresses it (`list[0]`, `list[0].x`).
   */
  readonly lists: Map<string, Map<string, Map<string, string>>>;
}

const setFirst = (map: Map<string, string>, key: string, value: string) => {
  if (!map.has(key)) map.set(key, value);
};

/** Notes a key already in Web API's model-binding syntax (`name`, `list[0].member`). */
function addField(fields: FormFields, key: string, value: string): void {
  const open = key.indexOf('[');
  if (open < 0) {
    if (!key.includes('.')) setFirst(fields.scalars, key, value);
    return;
  }
  const name = key.slice(0, open);
  const close = key.indexOf(']', open);
  if (name.includes('.') || close < 0) return;
  const rest = key.slice(close + 1);
  // Web API's prefix rule: `list[0]` addresses the item, as do `list[0].x` and `list[0][…]`.
  if (rest !== '' && rest[0] !== '.' && rest[0] !== '[') return;
  const list = fields.lists.get(name) ?? new Map<string, Map<string, string>>();
  fields.lists.set(name, list);
  const index = key.slice(open + 1, close);
  const item = list.get(index) ?? new Map<string, string>();
  list.set(index, item);
  const member = rest.slice(1);
  if (rest[0] === '.' && !member.includes('.') && !member.includes('['))
    setFirst(item, member, value);
}

function readFields(text: string, jQueryKeys: boolean): FormFields {
  const fields: FormFields = { scalars: new Map(), lists: new Map() };
  for (const [key, value] of formPairs(text))
    addField(fields, (jQueryKeys ? jQueryToModelKey(key) : key).toLowerCase(), value);
  return fields;
}

/** Members whose value is the text as sent, white space and all. */
const TEXT_KINDS: ReadonlySet<string> = new Set(['string', 'intOrText']);

/**
 * Each value read by the form binder's type converter of its member. An empty value is null; so is
 * white space alone for any other member than text, as Web API's ValueProviderResult reads it ("the
 * user didn't type anything").
 */
function bindScalars(model: WireModel, values: ReadonlyMap<string, string>): BoundRecord {
  const bound: BoundRecord = {};
  for (const member of model.readMembers) {
    if (member.kind === 'list') continue;
    const value = values.get(member.name.toLowerCase());
    if (value === undefined) continue;
    const blank = value === '' || (!TEXT_KINDS.has(member.kind) && isDotNetBlank(value));
    bound[member.name] = blank ? null : FORM_DIALECT[member.kind](value);
  }
  return bound;
}

// For plain DTOs: `name`, then any of `[member]`, `[0]`, `[]` (the next item) or `.member`.
const PLAIN_KEY = /^([^.[\]]+)((?:\[[^.[\]]*\]|\.[^.[\]]+)*)$/;
const PLAIN_KEY_SEGMENT = /\[([^.[\]]*)\]|\.([^.[\]]+)/g;
// A list index, or '' to append.
const LIST_SLOT = /^(?:0|[1-9]\d{0,5})?$/;

/** A list read from indexed keys: items by index, closed up in index order once the form is read. */
class FormList {
  readonly items = new Map<number, FormValue>();
}
type FormValue = string | string[] | FormList | FormRecord;
interface FormRecord {
  [member: string]: FormValue;
}

/** The key of `segment` in `parent`; `undefined` when the segment cannot address it. */
function slotIn(parent: FormRecord | FormList, segment: string): string | number | undefined {
  if (!(parent instanceof FormList)) return segment === '' ? undefined : segment;
  if (!LIST_SLOT.test(segment)) return undefined;
  return segment === '' ? parent.items.size : Number(segment);
}

function valueAt(parent: FormRecord | FormList, key: string | number): FormValue | undefined {
  if (parent instanceof FormList) return parent.items.get(key as number);
  return Object.hasOwn(parent, key) ? parent[key] : undefined;
}

function setAt(parent: FormRecord | FormList, key: string | number, value: FormValue): void {
  if (parent instanceof FormList) parent.items.set(key as number, value);
  else parent[key] = value;
}

/**
 * Puts a value at its key path. A repeated key collects its values into a list; a key that
 * contradicts an earlier one (a plain value where a record or list was begun, or the reverse) is
 * ignored.
 */
function putPlain(root: FormRecord, path: readonly string[], value: string): void {
  let parent: FormRecord | FormList = root;
  for (let depth = 0; depth < path.length; depth++) {
    const key = slotIn(parent, path[depth]);
    if (key === undefined) return;
    const existing = valueAt(parent, key);
    if (depth === path.length - 1) {
      if (existing === undefined) setAt(parent, key, value);
      else if (typeof existing === 'string') setAt(parent, key, [existing, value]);
      else if (Array.isArray(existing)) existing.push(value);
      return;
    }
    const child = existing ?? (LIST_SLOT.test(path[depth + 1]) ? new FormList() : {});
    if (typeof child === 'string' || Array.isArray(child)) return;
    if (existing === undefined) setAt(parent, key, child);
    parent = child;
  }
}

function settle(value: FormValue): unknown {
  if (typeof value === 'string' || Array.isArray(value)) return value;
  if (value instanceof FormList)
    return [...value.items].sort(([a], [b]) => a - b).map(([, item]) => settle(item));
  return Object.fromEntries(Object.entries(value).map(([name, member]) => [name, settle(member)]));
}

/**
 * `application/x-www-form-urlencoded` bodies, bound as Web API's jQuery form binding did: keys
 * rewritten by `jQueryToModelKey` (`financetype[]` is `financetype`), then matched to member names
 * case-insensitively, the first of repeated keys wins, lists bind from
 * `requirements[0][requirement_id]` or `requirements[0].requirement_id` with indices from 0 up to the
 * first gap.
 */
export class FormReader implements WireReader {
  readonly requestTypes = [FORM_MEDIA_TYPE];

  /**
   * @param jQueryKeys whether keys are read in jQuery's syntax first, as Web API read form bodies
   *   (query strings were bound by their keys as sent).
   */
  constructor(private readonly jQueryKeys = true) {}

  decode(text: string, model: WireModel): BoundRecord {
    const fields = readFields(text, this.jQueryKeys);
    const bound = bindScalars(model, fields.scalars);
    for (const member of model.readMembers) {
      if (member.kind !== 'list') continue;
      const entries = fields.lists.get(member.name.toLowerCase());
      if (!entries) continue;
      const itemModel = wireModelOf(member.item());
      const items: BoundRecord[] = [];
      // Indices as Web API's collection binder wrote them, from 0 to the first missing one.
      for (let index = 0; entries.has(String(index)); index++)
        items.push(bindScalars(itemModel, entries.get(String(index))!));
      bound[member.name] = items;
    }
    return bound;
  }

  /**
   * Read as NestJS's extended form parser reads a form, with dotted keys besides: names as sent
   * (case-sensitive), a repeated key as a list, `tags[]=a`, `items[0][name]=a` or `items[0].name=a`
   * for lists and records, list indices closed up in order.
   */
  decodePlain(text: string): PlainRecord {
    const root: FormRecord = {};
    for (const [key, value] of formPairs(text)) {
      if ((key.match(/[[.]/g)?.length ?? 0) > MAX_KEY_SEGMENTS)
        throw new MalformedBodyError(`The form key '${key.slice(0, 100)}' is nested too deeply.`);
      const match = PLAIN_KEY.exec(key);
      const path = match
        ? [
            match[1],
            ...[...match[2].matchAll(PLAIN_KEY_SEGMENT)].map(
              ([, inBrackets, dotted]) => inBrackets ?? dotted,
            ),
          ]
        : [key];
      // Assigned, it would replace a record's prototype instead of adding a member.
      if (!path.includes('__proto__')) putPlain(root, path, value);
    }
    return settle(root) as PlainRecord;
  }
}
