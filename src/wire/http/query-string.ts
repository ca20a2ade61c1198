import { type Request } from 'express';
import { FormReader } from '../codecs/form.codec';
import { type WireClass, wireModelOf } from '../model/wire-model';
import { toValidatedDto } from '../model/wire-validation';

// Web API bound query strings by their keys as sent, without the jQuery rewriting of form bodies.
const reader = new FormReader(false);

/** The query string as sent, after the path (`request.url` keeps it whatever routing rewrote). */
export const queryStringOf = (request: Request): string => {
  const start = request.url.indexOf('?');
  return start < 0 ? '' : request.url.slice(start + 1);
};

/**
 * A query string read into a query DTO (a wire record) as Web API bound URI values: names in any
 * case, the first of repeated names, an empty value as absent, values converted as the form binder
 * converts them. Violations answer 400, in ModelState keyed `<parameter name>.<member>`.
 */
export function readQuery<T extends object>(type: WireClass<T>, queryString: string): T {
  const model = wireModelOf(type);
  return toValidatedDto(type, reader.decode(queryString, model), model.parameterName);
}
