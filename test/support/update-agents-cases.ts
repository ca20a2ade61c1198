import { type Response, type Test } from 'supertest';
import { TransactionDto } from '../../src/transaction/dto/transaction.dto';
import { wireModelOf } from '../../src/wire';
import { encodeForm, encodeXml, type FormListStyle } from './client-encoding';
import { textOfLength, transactionRecord } from './fixtures';
import { type SuiteContext } from './test-app';
import { inspectXml } from './xml-inspection';

/**
 * UpdateAgents as clients see it: the body formats a Transaction can be sent in, the request cases
 * every format must treat alike, and probes that read back what a request did to the stored data.
 */

export const UPDATE_AGENTS = '/api/Transaction/UpdateAgents';
export const getTransactionPath = (id: number) => `/api/Transaction/GetTransaction/${id}`;
export const getAgentHistoryPath = (id: number) => `/api/Transaction/GetAgentHistory/${id}`;

/** The agent chain (CONTRACT §8): the only members UpdateAgents writes. */
export const AGENT_ID_FIELDS = [
  'brokerid',
  'directorid',
  'directorid_recruit',
  'managerid',
  'managerid_recruit',
  'salesagentid',
  'salesagentid_recruit',
] as const;
export const AGENT_NAME_FIELDS = [
  'brokername',
  'directorname',
  'directorname_recruit',
  'managername',
  'managername_recruit',
  'salesagentname',
  'salesagentname_recruit',
] as const;
export const AGENT_FIELDS: readonly string[] = [...AGENT_ID_FIELDS, ...AGENT_NAME_FIELDS];

export type WireBody = Record<string, unknown>;
export type AgentValues = Record<string, string | number | null>;
export type ModelState = Record<string, string[]>;

/** The legacy members of an error body, whatever its format. */
export interface LegacyError {
  readonly message: unknown;
  readonly modelState?: unknown;
}

/** One way of sending a Transaction: the cases below run once per row. */
export interface BodyFormat {
  readonly name: string;
  /** The request's Content-Type header. */
  readonly contentType: string;
  /** Writes a Transaction given as a plain object; a member holding null is sent as null. */
  readonly encode: (body: WireBody) => string;
  /** Content-Type of the error response to such a body when the request has no Accept header. */
  readonly errorContentType: string;
  readonly readError: (text: string) => LegacyError;
  /** Whether member names bind case-sensitively: in XML only; Json.NET and forms ignore case. */
  readonly caseSensitiveNames: boolean;
  /** The ModelState of a refused body: its rule violations and values the format could not read. */
  readonly refusal: (
    rules: ModelState,
    unreadable: readonly Unreadable[],
    body: WireBody,
  ) => ModelState;
}

/** A value of a body that its format cannot convert to the member's type. */
export interface Unreadable {
  readonly key: string;
  readonly message: string;
  /** Json.NET's reader itself fails on it (a JSON number where an int or decimal cannot hold it). */
  readonly stopsJsonReader: boolean;
}

/** Each unreadable value on its own member, as the form binder and Json.NET's serializer reported. */
const memberRefusal = (rules: ModelState, unreadable: readonly Unreadable[]): ModelState => ({
  ...rules,
  ...Object.fromEntries(unreadable.map(({ key, message }) => [key, [message]])),
});

/**
 * Json.NET: where its reader failed on a value, it failed again on the member sent next and lost it,
 * reported under that member's name with the same message; after the record's last member, on the
 * record (`transaction`); after an item's last member, on the list holding it and the record.
 */
const jsonRefusal = (
  rules: ModelState,
  unreadable: readonly Unreadable[],
  body: WireBody,
): ModelState => {
  const refusal = memberRefusal(rules, unreadable);
  const report = (key: string, message: string) =>
    (refusal[key] = [...(refusal[key] ?? []), message]);
  for (const { key, message, stopsJsonReader } of unreadable) {
    if (!stopsJsonReader) continue;
    const [, list, index, name] = /^transaction\.(?:(\w+)\[(\d+)\]\.)?(\w+)$/.exec(key)!;
    const container = list ? (body[list] as WireBody[])[Number(index)] : body;
    // As JSON.stringify writes them: a member without a value is not sent.
    const sent = Object.keys(container).filter((member) => container[member] !== undefined);
    const next = sent[sent.indexOf(name) + 1];
    const prefix = list ? `transaction.${list}[${index}]` : 'transaction';
    if (next !== undefined) report(`${prefix}.${next}`, message);
    else
      for (const enclosing of ['transaction', ...(list ? [`transaction.${list}`] : [])])
        report(enclosing, message);
  }
  return refusal;
};

/**
 * DataContractSerializer: one unreadable value refused the record, reported on the record alone,
 * the messages in one element; otherwise the rules as every format reports them.
 */
const xmlRefusal = (rules: ModelState, unreadable: readonly Unreadable[]): ModelState =>
  unreadable.length > 0
    ? { transaction: [unreadable.map(({ message }) => message).join(' ')] }
    : rules;

const readJsonError = (text: string): LegacyError => {
  const body = JSON.parse(text) as Record<string, unknown>;
  return { message: body.Message, modelState: body.ModelState };
};

const jsonFormat = (contentType: string): BodyFormat => ({
  name: contentType,
  contentType,
  encode: (body) => JSON.stringify(body),
  // Without an Accept header, a request gets its error in its own media type (text/json included).
  errorContentType: `${contentType}; charset=utf-8`,
  readError: readJsonError,
  caseSensitiveNames: false,
  refusal: jsonRefusal,
});

/** XmlConvert.DecodeName: `transaction.requirements_x005B_0_x005D_.x` back to the ModelState key. */
const decodeLocalName = (name: string) =>
  name.replace(/_x([0-9A-F]{4,8})_/g, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16)));

const readXmlError = (text: string): LegacyError => {
  const root = inspectXml(text);
  const modelState = root.children.find((element) => element.name === 'ModelState');
  return {
    message: root.children.find((element) => element.name === 'Message')?.text,
    modelState:
      modelState &&
      Object.fromEntries(
        modelState.children.map((entry) => [decodeLocalName(entry.name), [entry.text]]),
      ),
  };
};

const TRANSACTION_MODEL = wireModelOf(TransactionDto);

const xmlFormat = (contentType: string): BodyFormat => ({
  name: contentType,
  contentType,
  encode: (body) => encodeXml(body, TRANSACTION_MODEL),
  errorContentType: `${contentType}; charset=utf-8`,
  readError: readXmlError,
  caseSensitiveNames: true,
  refusal: xmlRefusal,
});

const formFormat = (style: FormListStyle): BodyFormat => ({
  name: `application/x-www-form-urlencoded, lists as ${style}`,
  contentType: 'application/x-www-form-urlencoded',
  encode: (body) => encodeForm(body, TRANSACTION_MODEL, style),
  errorContentType: 'application/json; charset=utf-8',
  readError: readJsonError,
  caseSensitiveNames: false,
  refusal: memberRefusal,
});

export const BODY_FORMATS: readonly BodyFormat[] = [
  jsonFormat('application/json'),
  jsonFormat('text/json'),
  xmlFormat('application/xml'),
  xmlFormat('text/xml'),
  formFormat('brackets'),
  formFormat('dots'),
];

/** Marks a member a case leaves out of the body entirely (as opposed to sending it as null). */
export const ABSENT = Symbol('absent');

/** Changes a case makes to a complete, valid Transaction body; ABSENT removes a member. */
export type BodyPatch = Readonly<Record<string, unknown>>;

/** The fixture transaction as a request body, with a case's changes applied. */
export function transactionBody(id: number, patch: BodyPatch = {}): WireBody {
  const body: WireBody = transactionRecord(id);
  for (const [name, value] of Object.entries(patch)) {
    if (value === ABSENT) delete body[name];
    else body[name] = value;
  }
  return body;
}

export interface AcceptedCase {
  readonly title: string;
  readonly patch: BodyPatch;
  /** Agent members as they must be stored, where that differs from how the body spells them. */
  readonly stored?: AgentValues;
}

export interface RefusedCase {
  readonly title: string;
  readonly patch: BodyPatch;
  /** The rules the body breaks, reported alike by every format. */
  readonly modelState: ModelState;
  /** Its values that cannot be converted, which each format reports its own way. */
  readonly unreadable: readonly Unreadable[];
}

export const accepted = (title: string, patch: BodyPatch, stored?: AgentValues): AcceptedCase => ({
  title,
  patch,
  stored,
});

export const refused = (
  title: string,
  patch: BodyPatch,
  modelState: ModelState,
  unreadable: readonly Unreadable[] = [],
): RefusedCase => ({ title, patch, modelState, unreadable });

/** `value` sent for `field` cannot be converted; `stopsJsonReader` when it is a JSON number. */
export const unreadable = (
  field: string,
  value: string,
  { key = `transaction.${field}`, stopsJsonReader = false } = {},
): Unreadable => ({
  key,
  message: `The value '${value}' is not valid for ${field}.`,
  stopsJsonReader,
});

export const between = (field: string, min: number, max: number): ModelState => ({
  [`transaction.${field}`]: [`The field ${field} must be between ${min} and ${max}.`],
});

export const notValid = (field: string, value: string, key = `transaction.${field}`) => ({
  [key]: [`The value '${value}' is not valid for ${field}.`],
});

const required = (field: string): ModelState => ({
  [`transaction.${field}`]: [`The ${field} field is required.`],
});

const tooLong = (field: string): ModelState => ({
  [`transaction.${field}`]: [`The field ${field} must be a string with a maximum length of 4000.`],
});

/** The seed's inclusive ranges (section 2.1): both ends accepted, just past either end refused. */
const RANGES = [
  { field: 'property_id', min: 1, max: 100000, outside: [0, -1, 100001] },
  { field: 'requirement_type_id', min: 1, max: 10000, outside: [0, 10001] },
  { field: 'loanterm', min: 1, max: 100, outside: [0, 101] },
  // Decimals are compared after rounding half to even to a whole number, as [Range(1, N)] did.
  ...['sellingprice', 'downpayment', 'reservation'].map((field) => ({
    field,
    min: 1,
    max: 100000000,
    outside: [0.5, 0, 100000000.51, 100000001],
  })),
];

/** The text members UpdateAgents ignores: no length limit, as the legacy had none. */
const IGNORED_TEXT = wireModelOf(TransactionDto)
  .members.filter((member) => member.kind === 'string')
  .map((member) => member.name)
  .filter((name) => !AGENT_FIELDS.includes(name));

const VALID_ITEM = transactionRecord(0).requirements[0];

/** Bodies every format must accept; the agent members they carry are written, nothing else is. */
export const ACCEPTED_CASES: readonly AcceptedCase[] = [
  ...RANGES.flatMap(({ field, min, max }) => [
    accepted(`${field} at its minimum ${min}`, { [field]: min }),
    accepted(`${field} at its maximum ${max}`, { [field]: max }),
  ]),
  accepted('the int32 maximum on brokerid, stored', { brokerid: 2147483647 }),
  accepted('the int32 minimum on brokerid, stored', { brokerid: -2147483648 }),
  accepted('the int32 maximum on dp_payableinmonths', { dp_payableinmonths: 2147483647 }),
  accepted('the int32 minimum on dp_payableinmonths', { dp_payableinmonths: -2147483648 }),
  ...['sellingprice', 'downpayment', 'reservation'].flatMap((field) => [
    accepted(`${field} 0.99, rounded to 1`, { [field]: 0.99 }),
    accepted(`${field} 100000000.4, rounded to 100000000`, { [field]: 100000000.4 }),
    accepted(`${field} 100000000.5, rounded half to even`, { [field]: 100000000.5 }),
  ]),
  accepted('four fractional digits on discount', { discount: 1.2345 }),
  accepted('five fractional digits on a ranged amount', { sellingprice: 2850000.12345 }),
  accepted('decimals of any precision a .NET decimal holds', {
    discount: 5.12345,
    interestrate: 1e-5,
    miscellaneous: 633642.0000000001,
    TotalPayments: 0.30000000000000004,
  }),
  accepted('the largest magnitude on discount', { discount: 99999999999.9999 }),
  accepted('a magnitude past any column on miscellaneous', { miscellaneous: -1e20 }),
  accepted('booleans as "true" and "false"', {
    reservation_paid: 'false',
    requirements_complete: 'true',
    requirements: [{ ...VALID_ITEM, submitted: 'false' }],
  }),
  accepted('locked "true" in the body (ignored: the transaction stays unlocked)', {
    locked: 'true',
  }),
  accepted('a date with an offset', { reservationdate: '2026-03-01T18:11:12+08:00' }),
  accepted('a date in UTC', { date_added: '2026-03-01T10:11:12Z' }),
  accepted('a date without an offset', { reservationdate: '2026-03-01T18:11:12' }),
  accepted('a date with seven fractional digits, as .NET writes', {
    stamp: '2026-03-01T18:11:12.1234567+08:00',
  }),
  accepted(".NET's DateTime.MinValue, which .NET clients send for a date never set", {
    date_added: '0001-01-01T00:00:00',
  }),
  accepted('nulls for every non-required member but the agents', {
    property_id: null,
    sellingprice: null,
    reservationdate: null,
    locked: null,
    requirements: null,
    clientname: null,
  }),
  accepted('an empty requirements list', { requirements: [] }),
  accepted('a 1500-character agent name, stored whole', {
    brokername: textOfLength('broker ', 1500),
  }),
  accepted(
    'every agent name at 4000 characters, stored whole',
    Object.fromEntries(AGENT_NAME_FIELDS.map((name) => [name, textOfLength(name, 4000)])),
  ),
  accepted(
    'text UpdateAgents ignores, of 5000 characters',
    Object.fromEntries(IGNORED_TEXT.map((name) => [name, 'x'.repeat(5000)])),
  ),
  accepted('non-ASCII agent names, stored exactly', {
    salesagentname: 'José Peña-Ñuñez 山田太郎 😀',
    directorname: 'Zoë Ångström',
  }),
  accepted('an agent name with surrounding spaces, stored as sent', {
    managername: '  Paolo  Reyes  ',
  }),
  accepted('agent members set to null, stored as null', {
    directorid_recruit: null,
    directorname_recruit: null,
  }),
  accepted('unknown members, ignored', {
    favourite_colour: 'teal',
    Agent: 'nobody',
    transaction: 'not a wrapper',
  }),
];

/** Bodies every format must refuse with exactly this ModelState, changing nothing. */
export const REFUSED_CASES: readonly RefusedCase[] = [
  ...RANGES.flatMap(({ field, min, max, outside }) =>
    outside.map((value) =>
      refused(
        `${field} ${value}, outside ${min}..${max}`,
        { [field]: value },
        between(field, min, max),
      ),
    ),
  ),
  ...[
    ['brokerid', 2147483648],
    ['brokerid', -2147483649],
    ['dp_payableinmonths', 2147483648],
    ['transaction_id', 2147483648],
    ['brokerid', 1.5],
    ['transaction_id', 1.5],
  ].map(([field, value]) =>
    refused(`${value} on ${field}`, { [field]: value }, {}, [
      unreadable(String(field), String(value), { stopsJsonReader: true }),
    ]),
  ),
  refused('"12a" on brokerid', { brokerid: '12a' }, {}, [unreadable('brokerid', '12a')]),
  refused('true on brokerid', { brokerid: true }, {}, [unreadable('brokerid', 'true')]),
  refused('"abc" on transaction_id', { transaction_id: 'abc' }, {}, [
    unreadable('transaction_id', 'abc'),
  ]),
  refused('1e30 on discount, past any .NET decimal', { discount: 1e30 }, {}, [
    unreadable('discount', '1e+30', { stopsJsonReader: true }),
  ]),
  refused('financetype absent', { financetype: ABSENT }, required('financetype')),
  refused('financetype null', { financetype: null }, required('financetype')),
  refused('financetype empty', { financetype: '' }, required('financetype')),
  refused('financetype white space', { financetype: '   ' }, required('financetype')),
  refused('transaction_id absent', { transaction_id: ABSENT }, required('transaction_id')),
  refused('transaction_id null', { transaction_id: null }, required('transaction_id')),
  refused('"yes" on a boolean', { reservation_paid: 'yes' }, {}, [
    unreadable('reservation_paid', 'yes'),
  ]),
  refused('"yes" on locked', { locked: 'yes' }, {}, [unreadable('locked', 'yes')]),
  refused('"not a date" on a date', { reservationdate: 'not a date' }, {}, [
    unreadable('reservationdate', 'not a date'),
  ]),
  refused('the year 10000', { date_added: '10000-01-01T00:00:00+00:00' }, {}, [
    unreadable('date_added', '10000-01-01T00:00:00+00:00'),
  ]),
  refused('a day that does not exist', { stamp: '2026-02-30T10:00:00+00:00' }, {}, [
    unreadable('stamp', '2026-02-30T10:00:00+00:00'),
  ]),
  refused(
    'a 4001-character agent name',
    { brokername: textOfLength('broker ', 4001) },
    tooLong('brokername'),
  ),
  refused(
    'bad members inside requirements, keyed by index',
    {
      requirements: [
        VALID_ITEM,
        { ...VALID_ITEM, requirement_id: 1.5, submitted: 'yes', stamp: 'never' },
      ],
    },
    {},
    [
      unreadable('requirement_id', '1.5', {
        key: 'transaction.requirements[1].requirement_id',
        stopsJsonReader: true,
      }),
      unreadable('stamp', 'never', { key: 'transaction.requirements[1].stamp' }),
      unreadable('submitted', 'yes', { key: 'transaction.requirements[1].submitted' }),
    ],
  ),
  refused(
    'every violation at once',
    {
      financetype: ABSENT,
      property_id: 0,
      loanterm: 101,
      reservation: 100000001,
      brokerid: 1.5,
      reservation_paid: 'yes',
      reservationdate: 'not a date',
      managername: textOfLength('manager ', 4001),
      requirements: [{ ...VALID_ITEM, requirement_type_id: '1x' }],
    },
    {
      ...required('financetype'),
      ...between('property_id', 1, 100000),
      ...between('loanterm', 1, 100),
      ...between('reservation', 1, 100000000),
      ...tooLong('managername'),
    },
    // In the order DataContractSerializer meets them.
    [
      unreadable('brokerid', '1.5', { stopsJsonReader: true }),
      unreadable('requirement_type_id', '1x', {
        key: 'transaction.requirements[0].requirement_type_id',
      }),
      unreadable('reservation_paid', 'yes'),
      unreadable('reservationdate', 'not a date'),
    ],
  ),
];

export interface Snapshot {
  readonly transaction: WireBody;
  readonly etag: string;
  readonly history: WireBody[];
}

/** One member of one history record: an id as a number, a name as text, null as null. */
export interface AgentChange {
  readonly field: string;
  readonly before: string | number | null;
  readonly after: string | number | null;
}

const byField = (a: AgentChange, b: AgentChange) =>
  a.field < b.field ? -1 : a.field > b.field ? 1 : 0;

/** A history record's changes in field order: the contract does not order them within a record. */
export const changesOf = (record: WireBody): AgentChange[] =>
  [...(record.changes as AgentChange[])].sort(byField);

/** The agent members a body carries, as they must be stored. */
export function agentsOf(body: WireBody, stored: AgentValues = {}): AgentValues {
  const agents: AgentValues = {};
  for (const field of AGENT_FIELDS) {
    if (Object.hasOwn(body, field)) agents[field] = body[field] as AgentValues[string];
  }
  return { ...agents, ...stored };
}

/** Reads back what UpdateAgents did, through the service's own read operations. */
export class TransactionProbe {
  constructor(private readonly context: SuiteContext) {}

  /** The transaction and its history, read together: nothing writes between the two reads. */
  async snapshot(id: number): Promise<Snapshot> {
    const [read, history] = await Promise.all([
      this.context.http.get(getTransactionPath(id)),
      this.context.http.get(getAgentHistoryPath(id)),
    ]);
    expect(read.status).toBe(200);
    expect(history.status).toBe(200);
    return {
      transaction: read.body as WireBody,
      etag: String(read.headers.etag),
      history: history.body as WireBody[],
    };
  }

  /**
   * Sends a request that must apply: 204 with an empty body and the new ETag; exactly the `agents`
   * members written and every other member as before; `stamp` the time of the change; the version
   * one more, named by the new ETag; one more history record, stamped at the same instant, listing
   * each changed member and the version it left.
   */
  async expectApplied(id: number, send: () => Test, agents: AgentValues): Promise<Snapshot> {
    const before = await this.snapshot(id);
    const started = Date.now();
    const response = await send();
    const finished = Date.now();
    expectNoContent(response);
    const after = await this.snapshot(id);
    const stamp = after.transaction.stamp as string;
    const version = (before.transaction.row_version as number) + 1;
    expect(after.transaction).toEqual({
      ...before.transaction,
      ...agents,
      stamp,
      row_version: version,
    });
    expect(Date.parse(stamp)).toBeGreaterThanOrEqual(started);
    expect(Date.parse(stamp)).toBeLessThanOrEqual(finished);
    expect(after.etag).toBe(`"${id}.${version}"`);
    expect(response.headers.etag).toBe(after.etag);
    const changes: AgentChange[] = Object.entries(agents)
      .filter(([field, value]) => before.transaction[field] !== value)
      .map(([field, value]) => ({
        field,
        before: before.transaction[field] as AgentValues[string],
        after: value,
      }));
    expect(changes.length).toBeGreaterThan(0);
    expect(after.history.slice(0, -1)).toEqual(before.history);
    expect(after.history).toHaveLength(before.history.length + 1);
    const record = after.history.at(-1)!;
    expect(record.transaction_id).toBe(id);
    expect(Date.parse(record.stamp as string)).toBe(Date.parse(stamp));
    expect(changesOf(record)).toEqual(changes.sort(byField));
    expect(record.row_version).toBe(version);
    return after;
  }

  /**
   * Sends a request that must change nothing: the transaction, its ETag and its history as before.
   * A 204 carries that ETag, unchanged; a refusal carries none.
   */
  async expectUnchanged(id: number, send: () => Test): Promise<Response> {
    const before = await this.snapshot(id);
    const response = await send();
    expect(await this.snapshot(id)).toEqual(before);
    expect(response.headers.etag).toBe(response.status === 204 ? before.etag : undefined);
    return response;
  }
}

export function expectNoContent(response: Response): void {
  expect({ status: response.status, body: response.text }).toEqual({ status: 204, body: '' });
}

/** Makes each accepted body change something, so that its write shows in the stored data. */
let markers = 0;
export const withMarker = (patch: BodyPatch): BodyPatch => ({
  salesagentname_recruit: `Marker ${++markers}`,
  ...patch,
});
