/**
 * The media type of an answer, as CONTRACT §2 and §7 state it and the legacy's recorded answers show
 * it: a table of cases, not a second negotiator, so that a fault in the service's negotiation cannot
 * pass its test by being repeated there. The fuzzing suite holds every row the legacy's recordings
 * cover to them.
 */

const APPLICATION_JSON = 'application/json';
const TEXT_JSON = 'text/json';
const APPLICATION_XML = 'application/xml';
const TEXT_XML = 'text/xml';
const PROBLEM_JSON = 'application/problem+json';

/** The Accept header names nothing written here: the request body's type decides, else JSON. */
const BY_REQUEST_TYPE = Symbol('by the request type');
type Outcome = string | typeof BY_REQUEST_TYPE;

/** Request media types that choose their own type when the Accept header does not (CONTRACT §2). */
const ANSWER_BY_REQUEST_TYPE: Readonly<Record<string, string>> = {
  [APPLICATION_JSON]: APPLICATION_JSON,
  [TEXT_JSON]: TEXT_JSON,
  [APPLICATION_XML]: APPLICATION_XML,
  [TEXT_XML]: TEXT_XML,
  '*/*': APPLICATION_JSON,
};

/** Accept headers as sent, with the type of a success and, where it differs, of an error. */
const ACCEPT_TABLE: ReadonlyArray<
  readonly [accept: string | undefined, success: Outcome, error?: Outcome]
> = [
  // No Accept, or one naming nothing written here; q=0 refuses.
  [undefined, BY_REQUEST_TYPE],
  ['', BY_REQUEST_TYPE],
  ['text/html', BY_REQUEST_TYPE],
  ['image/png', BY_REQUEST_TYPE],
  ['text/plain', BY_REQUEST_TYPE],
  ['application/xhtml+xml', BY_REQUEST_TYPE],
  ['garbage', BY_REQUEST_TYPE],
  ['application/xml;q=0', BY_REQUEST_TYPE],
  // Problem details are an error's type alone, and only when asked for (CONTRACT §7).
  [PROBLEM_JSON, BY_REQUEST_TYPE, PROBLEM_JSON],
  // `*/*` is not "no Accept": JSON, errors included.
  ['*/*', APPLICATION_JSON],
  [APPLICATION_JSON, APPLICATION_JSON],
  [TEXT_JSON, TEXT_JSON],
  [APPLICATION_XML, APPLICATION_XML],
  [TEXT_XML, TEXT_XML],
  ['TEXT/XML', TEXT_XML],
  ['application/json; charset=utf-8', APPLICATION_JSON],
  ['application/xml; charset=utf-8', APPLICATION_XML],
  // A wildcard: the first type written that it names.
  ['application/*', APPLICATION_JSON],
  ['text/*', TEXT_JSON],
  // q-values honoured; on a tie, JSON.
  ['application/xml;q=0.5, application/json;q=0.9', APPLICATION_JSON],
  ['application/json;q=0.5, application/xml', APPLICATION_XML],
  ['application/json, application/xml', APPLICATION_JSON],
  ['application/xml, application/json', APPLICATION_JSON],
  ['application/xml;q=0.9, application/json;q=0.9', APPLICATION_JSON],
  ['text/xml;q=0.5, text/json;q=0.5', TEXT_JSON],
  ['*/*;q=0.1, application/xml;q=0.2', APPLICATION_XML],
  ['application/json;q=0.001', APPLICATION_JSON],
  ['application/xml; q=0.8; charset=utf-8, text/json; q=0.7', APPLICATION_XML],
  ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', APPLICATION_XML],
  // q=0 refuses a type, and leaves a wildcard to name it.
  ['application/json;q=0, */*', APPLICATION_JSON],
  // A q as .NET read it: text is no q, more than 1 outranks 1, `.2` is 0.2.
  ['application/xml;q=abc, application/json;q=0.5', APPLICATION_XML],
  ['application/xml;q=1.5, application/json', APPLICATION_XML],
  ['application/json;q=.2, application/xml;q=0.3', APPLICATION_XML],
  // One item .NET could not parse (an empty q, a bare `*`): the header counts as absent.
  ['application/xml;q=, application/json;q=0.9', BY_REQUEST_TYPE],
  ['application/xml, foo/bar/baz', BY_REQUEST_TYPE],
  ['text/html, image/gif, image/jpeg, *; q=.2, */*; q=.2', BY_REQUEST_TYPE],
];

/** The Accept headers the table answers for. */
export const TABLED_ACCEPTS: readonly (string | undefined)[] = ACCEPT_TABLE.map(
  ([accept]) => accept,
);

/**
 * The media type the table gives an answer, from the request's Accept header and its media type
 * (lower case, without parameters; `undefined` when absent or unreadable); `undefined` when the table
 * has no row for the case.
 */
export function tabledAnswerType(
  kind: 'success' | 'error',
  accept: string | undefined,
  requestMediaType: string | undefined,
): string | undefined {
  const row = ACCEPT_TABLE.find(([header]) => header === accept);
  if (!row) return undefined;
  const outcome = kind === 'error' ? (row[2] ?? row[1]) : row[1];
  if (outcome !== BY_REQUEST_TYPE) return outcome;
  if (requestMediaType === undefined) return APPLICATION_JSON;
  // Other ranges (`text/*`) choose by the types they name, which the legacy never answered.
  if (requestMediaType.endsWith('/*') && !(requestMediaType in ANSWER_BY_REQUEST_TYPE))
    return undefined;
  return ANSWER_BY_REQUEST_TYPE[requestMediaType] ?? APPLICATION_JSON;
}
