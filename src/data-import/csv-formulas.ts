/**
 * Text a spreadsheet would read as a formula: OWASP's CSV injection guidance names a first character
 * of `=`, `+`, `-`, `@`, tab or carriage return. Quotes before it are counted in, so that text already
 * starting with `'=` is written with one more quote, and read back as it was.
 */
const FORMULA = /^'*[=+\-@\t\r]/;
/** A cell `neutralised` wrote: a quote, then what FORMULA matches. */
const NEUTRALISED = /^'+[=+\-@\t\r]/;

/**
 * A text cell as the CSV export writes it: with a `'` before it where a spreadsheet would run it as a
 * formula (a name such as `=HYPERLINK(…)` would be a link, `=cmd|…` a command), as OWASP recommends.
 */
export const neutralised = (text: string): string => (FORMULA.test(text) ? `'${text}` : text);

/** A CSV cell as the import reads it: without the `'` that `neutralised` put before it. */
export const restored = (cell: string): string => (NEUTRALISED.test(cell) ? cell.slice(1) : cell);
