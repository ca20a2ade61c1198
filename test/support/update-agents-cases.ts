import { type Response, type Test } from 'supertest';
import { TransactionDto } from '../../src/transaction/dto/transaction.dto';
import { wireModelOf } from '../../src/wire/wire-model';
import { encodeForm, encodeXml, type FormListStyle } from './client-encoding';
import { transactionRecord } from './fixtures';
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
  /** Whether member names bind case-sensitively (JSON and XML); form keys do not (CONTRACT §5). */
  readonly caseSensitiveNames: boolean;
}

const readJsonError = (text: string): LegacyError => {
  const body = JSON.parse(text) as Record<string, unknown>;
  return { message: body.Message, modelState: body.ModelState };
};

const jsonFormat = (contentType: string): BodyFormat => ({
  name: contentType,
  contentType,
  encode: (body) => JSON.stringify(body),
  errorContentType: 'application/problem+json; charset=utf-8',
  readError: readJsonError,
  caseSensitiveNames: true,
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
  // Without an Accept header, an XML request gets its error in its own media type.
  errorContentType: `${contentType}; charset=utf-8`,
  readError: readXmlError,
  caseSensitiveNames: true,
});

const formFormat = (style: FormListStyle): BodyFormat => ({
  name: `application/x-www-form-urlencoded, lists as ${style}`,
  contentType: 'application/x-www-form-urlencoded',
  encode: (body) => encodeForm(body, TRANSACTION_MODEL, style),
  errorContentType: 'application/problem+json; charset=utf-8',
  readError: readJsonError,
  caseSensitiveNames: false,
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
  /** The exact ModelState of the 400 response. */
  readonly modelState: ModelState;
}

export const accepted = (title: string, patch: BodyPatch, stored?: AgentValues): AcceptedCase => ({
  title,
  patch,
  stored,
});

export const refused = (title: string, patch: BodyPatch, modelState: ModelState): RefusedCase => ({
  title,
  patch,
  modelState,
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
  [`transaction.${field}`]: [`The field ${field} must be a string with a maximum length of 255.`],
});

/** The seed's inclusive ranges (section 2.1): both ends accepted, just past either end refused. */
const RANGES = [
  { field: 'property_id', min: 1, max: 100000, outside: [0, -1, 100001] },
  { field: 'requirement_type_id', min: 1, max: 10000, outside: [0, 10001] },
  { field: 'loanterm', min: 1, max: 100, outside: [0, 101] },
  ...['sellingprice', 'downpayment', 'reservation'].map((field) => ({
    field,
    min: 1,
    max: 100000000,
    outside: [0.9999, 0, 100000000.0001, 100000001],
  })),
];

const LONGEST_TEXT = 'x'.repeat(255);

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
  accepted('four fractional digits on discount', { discount: 1.2345 }),
  accepted('four fractional digits on a ranged amount', { sellingprice: 2850000.1234 }),
  accepted('the smallest fraction on interestrate', { interestrate: 0.0001 }),
  accepted('the largest magnitude on discount', { discount: 99999999999.9999 }),
  accepted('the largest negative magnitude on miscellaneous', {
    miscellaneous: -99999999999.9999,
  }),
  accepted('the largest magnitude on TotalPayments', { TotalPayments: 99999999999.9999 }),
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
  accepted('nulls for every non-required member but the agents', {
    property_id: null,
    sellingprice: null,
    reservationdate: null,
    locked: null,
    requirements: null,
    clientname: null,
  }),
  accepted('an empty requirements list', { requirements: [] }),
  accepted('a 255-character agent name, stored whole', { brokername: LONGEST_TEXT }),
  accepted('a 255-character non-agent text', { clientname: LONGEST_TEXT }),
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
  refused('2147483648 on brokerid', { brokerid: 2147483648 }, notValid('brokerid', '2147483648')),
  refused(
    '-2147483649 on brokerid',
    { brokerid: -2147483649 },
    notValid('brokerid', '-2147483649'),
  ),
  refused(
    '2147483648 on dp_payableinmonths',
    { dp_payableinmonths: 2147483648 },
    notValid('dp_payableinmonths', '2147483648'),
  ),
  refused(
    '2147483648 on transaction_id',
    { transaction_id: 2147483648 },
    notValid('transaction_id', '2147483648'),
  ),
  refused('1.5 on brokerid', { brokerid: 1.5 }, notValid('brokerid', '1.5')),
  refused('"12a" on brokerid', { brokerid: '12a' }, notValid('brokerid', '12a')),
  refused('true on brokerid', { brokerid: true }, notValid('brokerid', 'true')),
  refused('"abc" on transaction_id', { transaction_id: 'abc' }, notValid('transaction_id', 'abc')),
  refused('1.5 on transaction_id', { transaction_id: 1.5 }, notValid('transaction_id', '1.5')),
  refused(
    'five fractional digits on discount',
    { discount: 1.23456 },
    notValid('discount', '1.23456'),
  ),
  refused(
    'five fractional digits on a ranged amount',
    { sellingprice: 2850000.12345 },
    notValid('sellingprice', '2850000.12345'),
  ),
  refused(
    '100000000000 on discount',
    { discount: 100000000000 },
    notValid('discount', '100000000000'),
  ),
  refused(
    '-100000000000 on miscellaneous',
    { miscellaneous: -100000000000 },
    notValid('miscellaneous', '-100000000000'),
  ),
  refused('financetype absent', { financetype: ABSENT }, required('financetype')),
  refused('financetype null', { financetype: null }, required('financetype')),
  refused('financetype empty', { financetype: '' }, required('financetype')),
  refused('financetype white space', { financetype: '   ' }, required('financetype')),
  refused('transaction_id absent', { transaction_id: ABSENT }, required('transaction_id')),
  refused('transaction_id null', { transaction_id: null }, required('transaction_id')),
  refused('"yes" on a boolean', { reservation_paid: 'yes' }, notValid('reservation_paid', 'yes')),
  refused('"yes" on locked', { locked: 'yes' }, notValid('locked', 'yes')),
  refused(
    '"not a date" on a date',
    { reservationdate: 'not a date' },
    notValid('reservationdate', 'not a date'),
  ),
  refused(
    'the year 0999',
    { date_added: '0999-12-31T23:59:59+00:00' },
    notValid('date_added', '0999-12-31T23:59:59+00:00'),
  ),
  refused(
    'a day that does not exist',
    { stamp: '2026-02-30T10:00:00+00:00' },
    notValid('stamp', '2026-02-30T10:00:00+00:00'),
  ),
  refused('a 256-character agent name', { brokername: `${LONGEST_TEXT}x` }, tooLong('brokername')),
  refused(
    'a 256-character non-agent text',
    { clientname: `${LONGEST_TEXT}x` },
    tooLong('clientname'),
  ),
  refused(
    'bad members inside requirements, keyed by index',
    {
      requirements: [
        VALID_ITEM,
        { ...VALID_ITEM, requirement_id: 1.5, submitted: 'yes', stamp: 'never' },
      ],
    },
    {
      ...notValid('requirement_id', '1.5', 'transaction.requirements[1].requirement_id'),
      ...notValid('submitted', 'yes', 'transaction.requirements[1].submitted'),
      ...notValid('stamp', 'never', 'transaction.requirements[1].stamp'),
    },
  ),
  refused(
    'every violation at once',
    {
      financetype: ABSENT,
      property_id: 0,
      loanterm: 101,
      reservation: 100000000.0001,
      brokerid: 1.5,
      reservation_paid: 'yes',
      reservationdate: 'not a date',
      managername: `${LONGEST_TEXT}x`,
      requirements: [{ ...VALID_ITEM, requirement_type_id: '1x' }],
    },
    {
      ...required('financetype'),
      ...between('property_id', 1, 100000),
      ...between('loanterm', 1, 100),
      ...between('reservation', 1, 100000000),
      ...notValid('brokerid', '1.5'),
      ...notValid('reservation_paid', 'yes'),
      ...notValid('reservationdate', 'not a date'),
      ...tooLong('managername'),
      ...notValid('requirement_type_id', '1x', 'transaction.requirements[0].requirement_type_id'),
    },
  ),
];

export interface Snapshot {
  readonly transaction: WireBody;
  readonly etag: string;
  readonly history: WireBody[];
}

/** One member of one history record: values as text, null as null. */
export interface AgentChange {
  readonly field: string;
  readonly before: string | null;
  readonly after: string | null;
}

const asText = (value: string | number | null) => (value === null ? null : String(value));
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

  async snapshot(id: number): Promise<Snapshot> {
    const read = await this.context.http.get(getTransactionPath(id));
    expect(read.status).toBe(200);
    const history = await this.context.http.get(getAgentHistoryPath(id));
    expect(history.status).toBe(200);
    return {
      transaction: read.body as WireBody,
      etag: String(read.headers.etag),
      history: history.body as WireBody[],
    };
  }

  /**
   * Sends a request that must apply: 204 with an empty body; exactly the `agents` members written
   * and every other member as before; `stamp` the time of the change; a new ETag; one more history
   * record, stamped at the same instant, listing each changed member.
   */
  async expectApplied(id: number, send: () => Test, agents: AgentValues): Promise<Snapshot> {
    const before = await this.snapshot(id);
    const started = Date.now();
    const response = await send();
    const finished = Date.now();
    expectNoContent(response);
    const after = await this.snapshot(id);
    const stamp = after.transaction.stamp as string;
    expect(after.transaction).toEqual({ ...before.transaction, ...agents, stamp });
    expect(Date.parse(stamp)).toBeGreaterThanOrEqual(started);
    expect(Date.parse(stamp)).toBeLessThanOrEqual(finished);
    expect(after.etag).not.toBe(before.etag);
    const changes: AgentChange[] = Object.entries(agents)
      .filter(([field, value]) => before.transaction[field] !== value)
      .map(([field, value]) => ({
        field,
        before: asText(before.transaction[field] as AgentValues[string]),
        after: asText(value),
      }));
    expect(changes.length).toBeGreaterThan(0);
    expect(after.history.slice(0, -1)).toEqual(before.history);
    expect(after.history).toHaveLength(before.history.length + 1);
    const record = after.history.at(-1)!;
    expect(record.transaction_id).toBe(id);
    expect(Date.parse(record.stamp as string)).toBe(Date.parse(stamp));
    expect(changesOf(record)).toEqual(changes.sort(byField));
    return after;
  }

  /** Sends a request that must change nothing: the transaction, its ETag and its history as before. */
  async expectUnchanged(id: number, send: () => Test): Promise<Response> {
    const before = await this.snapshot(id);
    const response = await send();
    expect(await this.snapshot(id)).toEqual(before);
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
