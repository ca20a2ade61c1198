import { type BoundRecord } from '../model/wire-model';
import { type WireReader } from './wire-codec';
import { FORM_DIALECT } from './wire-dialects';
import { MalformedBodyError } from '../model/wire-errors';
import { type WireModel, wireModelOf } from '../model/wire-model';

export const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';

/** Most parameters a form may carry: a Transaction with a long checklist stays far below it. */
export const MAX_FORM_PARAMETERS = 1000;

// `name`, `list[0][member]` or `list[0].member`; anything deeper binds to nothing.
// An index as the binder wrote it (`0`, `12`; `00` names nothing).
const FORM_KEY = /^([^.[\]]+)(?:\[(0|[1-9]\d{0,5})\](?:\[([^.[\]]+)\]|\.([^.[\]]+)))?$/;
const MAX_KEY_SEGMENTS = 8;

interface FormFields {
  /** First value of each plain key, by lower-case name. */
  readonly scalars: Map<string, string>;
  /** First value of each indexed key: list name → index → member name, all lower case. */
  readonly lists: Map<string, Map<number, Map<string, string>>>;
}

function countParameters(text: string): number {
  let count = text.length > 0 ? 1 : 0;
  for (let at = text.indexOf('&'); at >= 0; at = text.indexOf('&', at + 1)) count++;
  return count;
}

function readFields(text: string): FormFields {
  if (countParameters(text) > MAX_FORM_PARAMETERS) {
    throw new MalformedBodyError(`The form has more than ${MAX_FORM_PARAMETERS} parameters.`);
  }
  const fields: FormFields = { scalars: new Map(), lists: new Map() };
  for (const [key, value] of new URLSearchParams(text)) {
    const match = FORM_KEY.exec(key.toLowerCase());
    if (!match) {
      if ((key.match(/[[.]/g)?.length ?? 0) > MAX_KEY_SEGMENTS) {
        throw new MalformedBodyError(`The form key '${key.slice(0, 100)}' is nested too deeply.`);
      }
      continue;
    }
    const [, name, index, bracketMember, dottedMember] = match;
    if (index === undefined) {
      if (!fields.scalars.has(name)) fields.scalars.set(name, value);
      continue;
    }
    const list = fields.lists.get(name) ?? new Map<number, Map<string, string>>();
    fields.lists.set(name, list);
    const item = list.get(Number(index)) ?? new Map<string, string>();
    list.set(Number(index), item);
    const member = bracketMember ?? dottedMember;
    if (!item.has(member)) item.set(member, value);
  }
  return fields;
}

/** Each value read by the form binder's type converter of its member; an empty value is null. */
function bindScalars(model: WireModel, values: ReadonlyMap<string, string>): BoundRecord {
  const bound: BoundRecord = {};
  for (const member of model.members) {
    if (member.kind === 'list') continue;
    const value = values.get(member.name.toLowerCase());
    if (value !== undefined)
      bound[member.name] = value === '' ? null : FORM_DIALECT[member.kind](value);
  }
  return bound;
}

/**
 * `application/x-www-form-urlencoded` bodies, bound as jQuery-style Web API binding did: keys match
 * member names case-insensitively, the first of repeated keys wins, lists bind from
 * `requirements[0][requirement_id]` or `requirements[0].requirement_id` with indices from 0 up to the
 * first gap.
 */
export class FormReader implements WireReader {
  readonly requestTypes = [FORM_MEDIA_TYPE];

  decode(text: string, model: WireModel): BoundRecord {
    const fields = readFields(text);
    const bound = bindScalars(model, fields.scalars);
    for (const member of model.members) {
      if (member.kind !== 'list') continue;
      const entries = fields.lists.get(member.name.toLowerCase());
      if (!entries) continue;
      const itemModel = wireModelOf(member.item());
      const items: BoundRecord[] = [];
      for (let index = 0; entries.has(index); index++)
        items.push(bindScalars(itemModel, entries.get(index)!));
      bound[member.name] = items;
    }
    return bound;
  }
}
