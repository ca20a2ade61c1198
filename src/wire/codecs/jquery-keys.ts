import { MalformedBodyError } from '../model/wire-errors';

// Char.IsDigit: a Unicode decimal digit, in any script.
const DIGIT = /^\p{Nd}$/u;

/**
 * A form key in jQuery's syntax (`$.param`, PHP's `http_build_query`) as Web API's
 * FormDataCollectionExtensions.NormalizeJQueryToMvc rewrote it for model binding: `[]` is dropped
 * (`tags[]` is `tags`), a bracketed index is kept (`[0]`, and anything starting with a digit), any
 * other bracketed name becomes a dotted one (`a[b]` is `a.b`). Brackets do not nest: a segment ends at
 * the first `]`. A `[` without a `]` after it refused the whole form, whatever the key.
 */
export function jQueryToModelKey(key: string): string {
  let open = key.indexOf('[');
  if (open < 0) return key;
  let normal = '';
  let from = 0;
  while (open >= 0) {
    normal += key.slice(from, open);
    const close = key.indexOf(']', open);
    if (close < 0)
      throw new MalformedBodyError(
        `The form key '${key.slice(0, 100)}' has a '[' without a matching ']'.`,
      );
    const inside = key.slice(open + 1, close);
    if (DIGIT.test(key[open + 1] ?? '')) normal += `[${inside}]`;
    else if (inside !== '') normal += `.${inside}`;
    from = close + 1;
    open = key.indexOf('[', from);
  }
  return normal + key.slice(from);
}
