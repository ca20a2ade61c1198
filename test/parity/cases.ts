import { type ParityAnswer, type ParityRequest } from './exchange';
import legacyClientRequests from './legacy-client-requests.json';

/**
 * Requests sent to the legacy service and to this one, in this order, on the demo data. UpdateAgents
 * cases write to unlocked transactions (1001, 1002, 1004, 1006); the legacy wrote the whole agent chain
 * from every body (absent members as null), so a read-back follows only a body carrying the whole chain
 * (or shows that difference on purpose).
 */
export interface ParityCase {
  readonly name: string;
  /** What the case is about, for reading the catalogue and the report. */
  readonly group: string;
  readonly request: ParityRequest;
  /** The body is the legacy's JSON answer to this earlier case, posted back (as a form: its members). */
  readonly bodyFrom?: string;
  /**
   * A GetTransaction answer (a route of the twin, not of the legacy), compared by member values: the
   * spelling of its amounts (`25000.0`) is the twin's. `changed`: a read-back of UpdateAgents' effect,
   * without the record's own stamp (the time of the change).
   */
  readonly record?: 'as stored' | 'changed';
}

const UPDATE_AGENTS = '/api/Transaction/UpdateAgents';
export const GET_REQUIREMENTS = '/api/Requirement/GetRequirements';
const GET_TRANSACTION = '/api/Transaction/GetTransaction';
const XML_NAMESPACE = 'http://schemas.datacontract.org/2004/07/PropertySales.Models';
export const XML_INSTANCE = 'http://www.w3.org/2001/XMLSchema-instance';
export const FORM = 'application/x-www-form-urlencoded';

// ------------------------------------------------------------------------------------------------
// Builders
// ------------------------------------------------------------------------------------------------

/** A member's value as a body format spells it: raw text, or null. */
type Spelled = string | null;
type Item = Readonly<Record<string, Spelled>>;
export type Members = Readonly<Record<string, Spelled | readonly Item[]>>;

const ordinal = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * DataContractSerializer's shape: members in ordinal order, nil as `i:nil`, lists wrapped. The
 * namespace `null` leaves the default namespace out.
 */
export function xmlOf(members: Members, namespace: string | null = XML_NAMESPACE): string {
  const element = (name: string, value: Members[string]): string => {
    if (value === null) return `<${name} i:nil="true" />`;
    if (typeof value === 'string') return `<${name}>${value}</${name}>`;
    const items = value.map(
      (item) =>
        `<RequirementAcquisition>${Object.keys(item)
          .sort(ordinal)
          .map((child) => element(child, item[child]))
          .join('')}</RequirementAcquisition>`,
    );
    return `<${name}>${items.join('')}</${name}>`;
  };
  const children = Object.keys(members)
    .sort(ordinal)
    .map((name) => element(name, members[name]))
    .join('');
  const xmlns = namespace === null ? '' : ` xmlns="${namespace}"`;
  return `<Transaction xmlns:i="${XML_INSTANCE}"${xmlns}>${children}</Transaction>`;
}

/** jQuery-style form text; null as an empty value; lists in the bracket or dot syntax. */
export function formOf(members: Members, dots = false): string {
  const pairs: string[] = [];
  for (const [name, value] of Object.entries(members)) {
    if (value === null || typeof value === 'string') {
      pairs.push(`${encodeURIComponent(name)}=${encodeURIComponent(value ?? '')}`);
      continue;
    }
    value.forEach((item, index) => {
      for (const [member, text] of Object.entries(item)) {
        const key = dots ? `${name}[${index}].${member}` : `${name}[${index}][${member}]`;
        pairs.push(`${encodeURIComponent(key)}=${encodeURIComponent(text ?? '')}`);
      }
    });
  }
  return pairs.join('&');
}

/** A JSON record as JSON.parse gives it. */
type Scalar = string | number | boolean | null;
type JsonItem = Readonly<Record<string, Scalar>>;
type JsonRecord = Readonly<Record<string, Scalar | readonly JsonItem[]>>;

const isList = (value: JsonRecord[string]): value is readonly JsonItem[] => Array.isArray(value);

/** A JSON record's members as form values: the text each would be written as. */
function membersOf(record: JsonRecord): Members {
  const spelled = (value: Scalar): Spelled => (value === null ? null : String(value));
  return Object.fromEntries(
    Object.entries(record).map(([name, value]): [string, Members[string]] => [
      name,
      isList(value)
        ? value.map((item) =>
            Object.fromEntries(Object.entries(item).map(([key, text]) => [key, spelled(text)])),
          )
        : spelled(value),
    ]),
  );
}

export type Case = Omit<ParityCase, 'group'>;

export const post = (
  name: string,
  contentType: string | undefined,
  body: string,
  headers: Record<string, string> = {},
  path = UPDATE_AGENTS,
): Case => ({
  name,
  request: {
    method: 'POST',
    path,
    headers: { ...(contentType !== undefined && { 'Content-Type': contentType }), ...headers },
    body,
  },
});

/** A body sent in another encoding than UTF-8. */
export const encoded = (
  name: string,
  contentType: string,
  body: string,
  encoding: ParityRequest['encoding'],
): Case => {
  const { request } = post(name, contentType, body);
  return { name, request: { ...request, encoding } };
};

export const get = (name: string, path: string, headers: Record<string, string> = {}): Case => ({
  name,
  request: { method: 'GET', path, headers },
});

export const readBack = (name: string, id: number): Case => ({
  ...get(`${name}: read back`, `${GET_TRANSACTION}/${id}`, { Accept: 'application/json' }),
  record: 'changed',
});

export const inGroup = (group: string, cases: readonly Case[]): ParityCase[] =>
  cases.map((parityCase) => ({ ...parityCase, group }));

const BASE: Members = { transaction_id: '1004', financetype: 'Cash' };

/** A JSON body: the base members and raw JSON text for the case's own. */
const jsonText = (own: string, base = '"transaction_id":1004,"financetype":"Cash"') =>
  own === '' ? `{${base}}` : `{${base},${own}}`;

/** The base members and one more, in each format, with the value spelled as that format's text. */
const xmlWith = (member: string, value: Spelled) => xmlOf({ ...BASE, [member]: value });
const formWith = (member: string, value: string) => formOf({ ...BASE, [member]: value });

const LONG = (length: number) => 'x'.repeat(length);

// ------------------------------------------------------------------------------------------------
// Values, as each format spells them: every one was sent to the legacy service.
// ------------------------------------------------------------------------------------------------

/** Decimals .NET's decimal holds, of any precision (CONTRACT §6), on an unranged member. */
const PRECISE_DECIMALS = [
  '5.12345',
  '1e-5',
  '633642.0000000001',
  '0.30000000000000004',
  '2.0416666666666666666666666667',
];

/** Values around the integer-bounded [Range(1, 100000000)], compared after rounding half to even. */
const RANGED_DECIMALS = [
  '0.5',
  '0.50000000000000001',
  '0.99',
  '1.5',
  '100000000.4',
  '100000000.5',
  '100000000.51',
  '100000000.50000000001',
];

/** JSON member values (raw JSON text) of every type and spelling Json.NET may have read. */
const JSON_VALUES: readonly [string, readonly string[]][] = [
  [
    'loanterm',
    [
      '5',
      '"5"',
      '" +5 "',
      '""',
      'null',
      '012',
      '0x1A',
      '08',
      '5.5',
      '1e-2',
      '"5.0"',
      '"0x1A"',
      '"1,000"',
      '"abc"',
      'true',
      '{}',
      '[]',
      '2147483648',
      '-2147483648',
      'Infinity',
      '0',
      '101',
      '100',
      '1',
      '-1',
      '"  "',
      '"1e2"',
      '"12abc"',
      '"-0"',
      'false',
      '+5',
      '"\\u0665"',
      '-0x1A',
      '0x',
    ],
  ],
  [
    'sellingprice',
    [
      ...RANGED_DECIMALS,
      '1e-5',
      '1E2',
      '0.5e1',
      '.5',
      '5.',
      '-.5',
      '00012',
      '0X1a',
      '"1,000.5"',
      '"1,0,0"',
      '" 5 "',
      '"+5"',
      '"5."',
      '".5"',
      '"5-"',
      '",5"',
      '"(5)"',
      '"$5"',
      '"5e2"',
      '"0x1A"',
      '"NaN"',
      'NaN',
      '1e30',
      '2.0416666666666666666666666667',
      '""',
      'true',
      '1E+2',
      '"1e-5"',
      '"1 000"',
      '"5,00"',
      '-Infinity',
      'null',
      '12345678901234567890123456789',
    ],
  ],
  [
    'discount',
    [
      ...PRECISE_DECIMALS,
      '79228162514264337593543950335',
      '79228162514264337593543950336',
      '1.23456789012345678901234567890123',
      '-1e20',
      '-0',
      '-0.0',
      '1e28',
      '7.9e28',
      '1e-28',
      '1e-29',
      '0.0000000000000000000000000001',
      '0.00000000000000000000000000001',
      '""',
      '"abc"',
    ],
  ],
  [
    'locked',
    [
      'true',
      '"True"',
      '" true "',
      '"1"',
      '0',
      '2',
      '1.5',
      '"yes"',
      'null',
      '""',
      '"  "',
      '[]',
      '1',
      'false',
      '"false"',
      '"FALSE"',
      '"0"',
      '0.0',
      '"t"',
      '"on"',
    ],
  ],
  ['requirements_complete', ['"True"', '1', '""']],
  [
    'stamp',
    [
      '"1/1/0001"',
      '"2024-01-02"',
      '"2024-01-02T10:00:00.1234567+08:00"',
      '"2024-01-02T10:00:00Z"',
      '"2024-01-02 10:00:00"',
      '"1/2/2024 10:00:00 AM"',
      '"Tue, 02 Jan 2024 10:00:00 GMT"',
      '"2024/01/02"',
      '"2 January 2024"',
      '"Jan 2, 2024"',
      '"Tuesday, January 02, 2024"',
      '"01/02/2024"',
      '"01.02.2024"',
      '"2024-01"',
      '"Jan 2024"',
      '"13/02/2024"',
      '"/Date(1245398693390)/"',
      '"/Date(1245398693390+0800)/"',
      '"/Date(-1245398693390-0130)/"',
      '"0001-01-01T00:00:00"',
      '"9999-12-31T23:59:59.9999999"',
      '"2024-01-02T25:00:00"',
      '"20240102"',
      '"garbage"',
      '"2024-01-02T10:00:00.123456789Z"',
      '"2024-01-02T10:00:00+14:00"',
      '"  2024-01-02  "',
      '"12/31/1999 11:59 PM"',
      '"2024-01-02T10:00:00.5"',
      '"   "',
      '""',
      '1245398693390',
      '"2024-02-30"',
      '"2024-01-02T10:00:00+0800"',
      '"2024-01-02T10:00:00 +08:00"',
      '"2016-12-31T23:59:60Z"',
      '"10000-01-01"',
      '"/Date(253402300800000)/"',
      '"\\/Date(0)\\/"',
      '"/Date(1245398693390-0000)/"',
      '"10:00"',
      '"2024-1-2"',
      '"Tue, 02 Jan 2024 10:00:00 +0800"',
      '"2024-01-02T10:00:00.1234567890123Z"',
    ],
  ],
  ['date_added', ['"/Date(1245398693390+0800)/"', '"2024-01-02T10:00:00-05:00"']],
  [
    'brokername',
    ['123', '0x1A', '1.50', 'true', '"a\\u0001b"', '{}', '[]', 'null', '""', '"  "', '"\\u0000"'],
  ],
  [
    'brokerid',
    [
      '"0x1A"',
      '-0',
      '"-0"',
      '"\\t5\\n"',
      '"+05"',
      '5',
      '"5"',
      '""',
      '2147483647',
      '"2147483648"',
      '-2147483649',
      '1.5',
    ],
  ],
  [
    'interestrate',
    [...PRECISE_DECIMALS, '6.125', '"6.125%"', '"1.5e3"', '" 1,234.50 "', '"1234,50"', '-1'],
  ],
  [
    'financetype',
    [
      '""',
      '"   "',
      'null',
      '123',
      'true',
      '{}',
      '[]',
      '"\\u0043ash"',
      '" Cash "',
      '"\\t"',
      '"\\u00a0"',
      '"\\u0085"',
      '"\\u200b"',
      '"\\u2028"',
      '"\\u3000"',
      '"\\ufeff"',
    ],
  ],
  [
    'requirements',
    [
      'null',
      '[]',
      '[null]',
      '{}',
      '"x"',
      '[5]',
      '[{}]',
      '[{"requirement_id":null}]',
      '[{"submitted":"True"}]',
      '[{"REQUIREMENT_ID":101}]',
      '[{"stamp":"/Date(1245398693390+0800)/"}]',
      '[{"stamp":"01/02/2024"}]',
      '[{"stamp":""}]',
      '[{"submitted":1}]',
      '[{"submitted":""}]',
      '[{"requirement_id":"101"}]',
      '[{"requirement_id":""}]',
      '[{"requirement_id":1.5}]',
      '[{"requirement_id":101,"unknown":{"a":[null]}}]',
      '[{"requirement_id":101,"Requirement_Id":"x"}]',
      '[[]]',
      '[null,{}]',
    ],
  ],
];

/** XML element texts, as XmlConvert read them. */
const XML_VALUES: readonly [string, readonly string[]][] = [
  ['loanterm', [' 5 ', '+5', '012', '5.0', '0x1A', '', '0', '101', '-0', '1e1', '\n5\n']],
  [
    'sellingprice',
    [
      ...RANGED_DECIMALS,
      '.5',
      '5.',
      ' 5 ',
      '1e-5',
      '1,000',
      '-0',
      'INF',
      '1E2',
      '-.5',
      '12345678901234567890123456789',
    ],
  ],
  ['interestrate', PRECISE_DECIMALS],
  ['locked', ['true', 'True', '1', ' 0 ', ' true ', '', 'yes', 'TRUE', 'false', '0']],
  [
    'stamp',
    [
      '2024-01-02',
      '2024-01-02T10:00:00',
      '2024-01-02T10:00:00.1234567+08:00',
      '2024-01-02 10:00:00',
      '01/02/2024',
      '0001-01-01T00:00:00',
      '2024-01-02T10:00',
      ' 2024-01-02T10:00:00Z ',
      '2024-01-02T10:00:00.1234567Z',
      '2024-01-02Z',
      '',
      '/Date(1245398693390)/',
      'Tue, 02 Jan 2024 10:00:00 GMT',
      '2024-01-02T10:00:00.12345678Z',
      '2024-01-02T24:00:00',
    ],
  ],
  [
    'brokername',
    [
      '',
      ' padded ',
      '&lt;b&gt;',
      '<![CDATA[a<b]]>',
      'a&amp;b',
      '&#67;ash',
      'a<!-- comment -->b',
      '<b>bold</b>',
    ],
  ],
  ['brokerid', ['  12  ', '+12', '12.0', '0x0C', '2147483648']],
  ['financetype', [' ', '&#160;', '<![CDATA[ ]]>']],
];

/** Form values, as the form binder's type converters read them. */
const FORM_VALUES: readonly [string, readonly string[]][] = [
  ['loanterm', [' 5 ', '0x1A', '#5', '012', '5.0', '', 'abc', '0', '101', '&H1A', '1e1']],
  [
    'sellingprice',
    [...RANGED_DECIMALS, '1e-5', '.5', '5.', ' 1 ', '1,000', '(5)', '$5', '5%', 'NaN'],
  ],
  ['interestrate', PRECISE_DECIMALS],
  ['locked', ['True', ' true ', 'FALSE', '1', 'on', '', 'yes', '0', 'true,false']],
  ['brokerid', ['+12', '12.0', '', '2147483648']],
  [
    'stamp',
    [
      '01/02/2024',
      '/Date(1245398693390)/',
      '/Date(1245398693390+0800)/',
      '2024-01-02 10:00:00',
      '2024-01-02T10:00:00Z',
      '0001-01-01T00:00:00',
      'Tue, 02 Jan 2024 10:00:00 GMT',
      '1/2/2024 10:00:00 AM',
      'Jan 2, 2024',
      '10:00',
      'garbage',
    ],
  ],
  ['financetype', ['', ' ']],
];

// ------------------------------------------------------------------------------------------------
// The seed's rules, alone and together
// ------------------------------------------------------------------------------------------------

const RANGES: readonly [string, string, string][] = [
  ['property_id', '0', '100001'],
  ['requirement_type_id', '0', '10001'],
  ['loanterm', '0', '101'],
  ['sellingprice', '0', '100000001'],
  ['downpayment', '0.4', '100000000.6'],
  ['reservation', '-1', '200000000'],
];

/** Each range at its two bounds, which pass. */
const AT_BOUNDS: Members = {
  ...BASE,
  property_id: '1',
  requirement_type_id: '10000',
  loanterm: '100',
  sellingprice: '100000000',
  downpayment: '1',
  reservation: '100000000',
};

const RULE_CASES: readonly [string, Members][] = [
  ['financetype absent', { transaction_id: '1004' }],
  ['financetype empty', { ...BASE, financetype: '' }],
  ['financetype white space', { ...BASE, financetype: '   ' }],
  ...RANGES.flatMap(([member, low, high]): [string, Members][] => [
    [`${member} below its range`, { ...BASE, [member]: low }],
    [`${member} above its range`, { ...BASE, [member]: high }],
  ]),
  [
    'every rule at once',
    {
      transaction_id: '1004',
      ...Object.fromEntries(RANGES.map(([member, low]) => [member, low])),
    },
  ],
  ['every range at its bounds', AT_BOUNDS],
  [
    'every rule at once and a value of another type',
    {
      transaction_id: '1004',
      ...Object.fromEntries(RANGES.map(([member, , high]) => [member, high])),
      dp_payableinmonths: 'abc',
    },
  ],
  [
    'a requirement item of another type',
    { ...BASE, requirements: [{ requirement_id: 'abc', stamp: 'never', submitted: 'x' }] },
  ],
];

// ------------------------------------------------------------------------------------------------
// Effects: what UpdateAgents wrote, read back
// ------------------------------------------------------------------------------------------------

export const CHAIN: Members = {
  brokerid: '501',
  brokername: 'Parity Broker',
  directorid: '502',
  directorname: 'Parity Director',
  directorid_recruit: null,
  directorname_recruit: null,
  managerid: '503',
  managername: 'Parity Manager',
  managerid_recruit: '504',
  managername_recruit: 'Parity Recruit',
  salesagentid: '505',
  salesagentname: 'Parity Agent',
  salesagentid_recruit: null,
  salesagentname_recruit: null,
};

/** A body carrying the whole agent chain, with this brokername. */
const chainJson = (id: number, brokername: string) =>
  JSON.stringify({ ...BASE, transaction_id: id, ...CHAIN, brokername });

/** Writes a body, then reads the record back: the effect, compared member by member. */
export const writeAndReadBack = (write: Case, id: number): Case[] => [
  write,
  readBack(write.name, id),
];

/** A record as the legacy served it (an earlier GetTransaction case), posted back whole. */
const postBack = (name: string, contentType: string, from: string, id: number): Case[] => [
  { ...post(name, contentType, ''), bodyFrom: from },
  readBack(name, id),
];

const STORED = 'GetTransaction 1006 as JSON';
const STORED_XML = 'GetTransaction 1006 as XML';

/**
 * The request of a case as sent: `bodyFrom` filled in from the legacy's answers so far, as the
 * recorder sent it and the suite replays it.
 */
export function resolvedRequest(
  parityCase: ParityCase,
  legacyAnswer: (name: string) => ParityAnswer | undefined,
): ParityRequest {
  if (parityCase.bodyFrom === undefined) return parityCase.request;
  const served = legacyAnswer(parityCase.bodyFrom)?.body;
  if (served === undefined)
    throw new Error(`${parityCase.name}: no body from ${parityCase.bodyFrom}`);
  const contentType = parityCase.request.headers['Content-Type'];
  const body = contentType === FORM ? formOf(membersOf(JSON.parse(served) as JsonRecord)) : served;
  return { ...parityCase.request, body };
}

// ------------------------------------------------------------------------------------------------
// The catalogue
// ------------------------------------------------------------------------------------------------

const ACCEPTS = [
  undefined,
  '*/*',
  'application/json',
  'text/json',
  'application/xml',
  'text/xml',
  'application/xml;q=0.5, application/json;q=0.9',
  'application/json;q=0.5, application/xml',
  'text/*',
  'application/*',
  'text/html',
  'image/png',
  'application/json;q=0, */*',
  'application/problem+json',
  'TEXT/XML',
];

const MORE_ACCEPTS = [
  'application/xml;q=abc, application/json;q=0.5',
  'application/xml;q=1.5, application/json',
  'application/xml;q=, application/json;q=0.9',
  'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
  'application/json; charset=utf-8',
  'application/xml; charset=utf-8',
  '',
  'application/json, application/xml',
  'application/xml, application/json',
  '*/*;q=0.1, application/xml;q=0.2',
  'text/plain',
  'application/xhtml+xml',
  'application/xml;q=0.9, application/json;q=0.9',
  'text/xml;q=0.5, text/json;q=0.5',
  'application/xml;q=0',
  'garbage',
  'application/json;q=0.001',
  'application/xml; q=0.8; charset=utf-8, text/json; q=0.7',
];

// Imported here, after the builders: the case files build their cases from them as they load.
import { FORM_CASES } from './cases-forms';
import { JSON_CLIENT_CASES } from './cases-json';
import { XML_NEGOTIATION_CASES } from './cases-xml-negotiation';

export const PARITY_CASES: readonly ParityCase[] = [
  // Read before anything changed them: the stored records as the legacy serves them, posted back below.
  ...inGroup('stored records', [
    ...[1001, 1002, 1003, 1004, 1005, 1006].map((id): Case => ({
      ...get(`GetTransaction ${id} as JSON`, `${GET_TRANSACTION}/${id}`, {
        Accept: 'application/json',
      }),
      record: 'as stored',
    })),
    get(STORED_XML, `${GET_TRANSACTION}/1006`, { Accept: 'application/xml' }),
  ]),
  ...inGroup('GetRequirements negotiation', [
    ...ACCEPTS.flatMap((accept) =>
      [undefined, 'application/xml', 'text/xml', 'text/json'].map((contentType) =>
        get(
          `GetRequirements, Accept ${accept ?? '(none)'}, Content-Type ${contentType ?? '(none)'}`,
          GET_REQUIREMENTS,
          {
            ...(accept !== undefined && { Accept: accept }),
            ...(contentType !== undefined && { 'Content-Type': contentType }),
          },
        ),
      ),
    ),
    ...MORE_ACCEPTS.map((accept) =>
      get(`GetRequirements, Accept ${accept}`, GET_REQUIREMENTS, { Accept: accept }),
    ),
    get('GetRequirements, Accept-Charset utf-16', GET_REQUIREMENTS, {
      'Accept-Charset': 'utf-16',
    }),
    get('GetRequirements, Accept-Charset iso-8859-1', GET_REQUIREMENTS, {
      'Accept-Charset': 'iso-8859-1',
    }),
    get('GetRequirements, Accept-Charset utf-16;q=0.1, utf-8', GET_REQUIREMENTS, {
      'Accept-Charset': 'utf-16;q=0.1, utf-8',
    }),
  ]),
  ...inGroup('conditional requests', [
    get('GetRequirements, If-None-Match *', GET_REQUIREMENTS, { 'If-None-Match': '*' }),
    get('GetRequirements, If-None-Match * and no-cache', GET_REQUIREMENTS, {
      'If-None-Match': '*',
      'Cache-Control': 'no-cache',
      Pragma: 'no-cache',
    }),
    get('GetRequirements, If-None-Match another ETag and no-cache', GET_REQUIREMENTS, {
      'If-None-Match': '"another"',
      'Cache-Control': 'no-cache',
      Pragma: 'no-cache',
    }),
    get('GetRequirements, If-None-Match a weak ETag', GET_REQUIREMENTS, {
      'If-None-Match': 'W/"another"',
    }),
    get('GetRequirements, If-Modified-Since', GET_REQUIREMENTS, {
      'If-Modified-Since': 'Tue, 02 Jan 2024 10:00:00 GMT',
    }),
    get('GetRequirements, Cache-Control no-cache', GET_REQUIREMENTS, {
      'Cache-Control': 'no-cache',
    }),
  ]),
  ...inGroup('routes and methods', [
    ...[
      '/api/Requirement/GetRequirements/5',
      '/api/Requirement/GetRequirements/x',
      '/api/requirement/getrequirements',
      '/API/REQUIREMENT/GETREQUIREMENTS/7',
      '/api/Requirement/GetRequirements/',
      '/api/Requirement/GetRequirements?x=1',
      '/api/Requirement/GetRequirements/5/6',
      '/api/Requirement/Nothing',
      '/api/Nothing/GetRequirements',
      '/api/Transaction/UpdateAgents',
      '/api/Transaction/UpdateAgents/1',
      '/api/Requirement/GetRequirements/5?id=6',
      '/api/Requirement/GetRequirements?id=5',
      '/api/Requirement',
      '/api',
      '/',
      '/api/Requirement/GetRequirements/%20',
      '/%61pi/Requirement/GetRequirements',
      '/api/Requirement/Get%52equirements/x',
      '/api/Requirement/GetRequirements%2F5',
      '/api/Requirement/GetRequirements%2f',
      '/api/Requirement/GetRequirements%2F5%2F6',
      '/api/Requirement/GetRequirements/5/..',
      '/api/Requirement/GetRequirements/..',
      '/api/x/../Requirement/GetRequirements',
      '/api/Requirement/GetRequirements/./',
      '/api\\Requirement\\GetRequirements',
      '/api/Requirement/GetRequirements%5C5',
    ].map((path) => get(`GET ${path}`, path, { Accept: 'application/json' })),
    ...[
      '/api/Transaction/UpdateAgents/1',
      '/api/Transaction/UpdateAgents/abc',
      '/api/Transaction/UpdateAgents/a%20b',
      '/api/transaction/updateagents',
      '/api/Transaction/UpdateAgents/',
      '/api/Transaction/UpdateAgents/1/2',
      '/api/Requirement/GetRequirements',
      '/api/Requirement/GetRequirements/5',
      '/api/Transaction/UpdateAgents?transaction_id=1',
      '/api/Transaction/Update%41gents',
      '/api/Transaction/UpdateAgents/1%2F',
      '/api/Transaction/x/../UpdateAgents',
    ].map((path) =>
      post(`POST ${path}`, 'application/json', jsonText(''), { Accept: 'application/json' }, path),
    ),
    ...(
      [
        ['HEAD', GET_REQUIREMENTS],
        ['HEAD', `${GET_REQUIREMENTS}/5`],
        ['HEAD', UPDATE_AGENTS],
        ['DELETE', UPDATE_AGENTS],
        ['PUT', UPDATE_AGENTS],
        ['PATCH', UPDATE_AGENTS],
        ['OPTIONS', UPDATE_AGENTS],
        ['DELETE', GET_REQUIREMENTS],
        ['PUT', GET_REQUIREMENTS],
        ['OPTIONS', GET_REQUIREMENTS],
      ] as const
    ).map(([method, path]): Case => ({
      name: `${method} ${path}`,
      request: { method, path, headers: { Accept: 'application/json' } },
    })),
    post('POST UpdateAgents, X-HTTP-Method-Override GET', 'application/json', jsonText(''), {
      'X-HTTP-Method-Override': 'GET',
    }),
    get('GET /api/Nothing, Accept application/xml', '/api/Nothing', { Accept: 'application/xml' }),
    get('GET /api/Nothing, Content-Type text/xml', '/api/Nothing', { 'Content-Type': 'text/xml' }),
    get('GET UpdateAgents, Accept text/xml', UPDATE_AGENTS, { Accept: 'text/xml' }),
    get('GET UpdateAgents, Content-Type application/xml', UPDATE_AGENTS, {
      'Content-Type': 'application/xml',
    }),
    get('GET /api/Transaction/GetAgentHistory/1004', '/api/Transaction/GetAgentHistory/1004', {
      Accept: 'application/json',
    }),
  ]),
  ...inGroup('request content types', [
    ...[
      'application/json',
      'application/json; charset=utf-8',
      'text/json',
      'text/json; charset=UTF-8',
      'Application/JSON',
    ].map((contentType) => post(`an empty Transaction as ${contentType}`, contentType, '{}')),
    ...[
      'application/xml',
      'application/xml; charset=utf-8',
      'text/xml',
      'text/xml; charset=utf-8',
      'APPLICATION/XML',
      'text/xml;charset="utf-8"',
    ].map((contentType) => post(`a valid Transaction as ${contentType}`, contentType, xmlOf(BASE))),
    ...[FORM, `${FORM}; charset=utf-8`, 'Application/X-WWW-Form-URLEncoded'].map((contentType) =>
      post(`a valid Transaction as ${contentType}`, contentType, formOf(BASE)),
    ),
    ...[
      'application/json;charset=utf-8',
      'application/json; charset="utf-8"',
      'application/json; charset=UTF8',
      'application/json; charset=foo',
      'application/json; odata=verbose',
      'text/json; v=2',
      'application/json; charset',
      'application / json',
      'application/json; charset=utf-8; charset=utf-16',
    ].map((contentType) =>
      post(`a valid Transaction as ${contentType}`, contentType, jsonText('')),
    ),
    post('a valid Transaction as text/xml; charset=foo', 'text/xml; charset=foo', xmlOf(BASE)),
    ...[
      'text/plain',
      'application/octet-stream',
      'multipart/form-data; boundary=x',
      'application/problem+json',
      'application/javascript',
      'text/html',
      'application/merge-patch+json',
      'application/soap+xml',
      'application/x-json',
    ].map((contentType) => post(`a body as ${contentType}`, contentType, jsonText(''))),
    post('a text/plain body, Accept application/xml', 'text/plain', 'x', {
      Accept: 'application/xml',
    }),
    post('a JSON body as application/xml', 'application/xml', jsonText('')),
    post('an XML body as application/json', 'application/json', xmlOf(BASE)),
    post('a form body as application/json', 'application/json', formOf(BASE)),
    ...['*/*', 'text/*', 'application/*'].map((contentType) =>
      post(`a JSON body as ${contentType}`, contentType, jsonText('')),
    ),
    post('an XML body as */*', '*/*', xmlOf(BASE)),
    post('a body with an empty Content-Type', '', jsonText('')),
    post('a body with no Content-Type header at all', undefined, jsonText('')),
    post('JSON with Expect: 100-continue', 'application/json', jsonText(''), {
      Expect: '100-continue',
    }),
  ]),
  ...inGroup('body encodings', [
    post('JSON a byte order mark', 'application/json', `\uFEFF${jsonText('')}`),
    post('XML a byte order mark', 'application/xml', `\uFEFF${xmlOf(BASE)}`),
    post('form a byte order mark', FORM, `\uFEFF${formOf(BASE)}`),
    encoded(
      'JSON in UTF-16 with a byte order mark, charset utf-16',
      'application/json; charset=utf-16',
      `\uFEFF${jsonText('')}`,
      'utf16le',
    ),
    encoded(
      'JSON in UTF-16 with a byte order mark, no charset',
      'application/json',
      `\uFEFF${jsonText('')}`,
      'utf16le',
    ),
    encoded(
      'JSON in UTF-16 without a byte order mark, charset utf-16',
      'application/json; charset=utf-16',
      jsonText(''),
      'utf16le',
    ),
    encoded(
      'XML in UTF-16, declared',
      'application/xml; charset=utf-16',
      `\uFEFF<?xml version="1.0" encoding="utf-16"?>${xmlOf(BASE)}`,
      'utf16le',
    ),
    post(
      'XML declared UTF-16, sent as UTF-8',
      'application/xml',
      `<?xml version="1.0" encoding="utf-16"?>${xmlOf(BASE)}`,
    ),
    ...writeAndReadBack(
      encoded(
        'JSON in ISO-8859-1, charset iso-8859-1',
        'application/json; charset=iso-8859-1',
        chainJson(1002, 'José Müller'),
        'latin1',
      ),
      1002,
    ),
    ...writeAndReadBack(
      post('JSON non-ASCII names in UTF-8', 'application/json', chainJson(1002, 'José 日本 😀')),
      1002,
    ),
    ...writeAndReadBack(
      post(
        'form non-ASCII names in UTF-8',
        FORM,
        formOf({ ...BASE, transaction_id: '1002', ...CHAIN, brokername: 'José 日本' }),
      ),
      1002,
    ),
    ...writeAndReadBack(
      post(
        'form a Latin-1 escape, charset iso-8859-1',
        `${FORM}; charset=iso-8859-1`,
        formOf({ ...BASE, transaction_id: '1002', ...CHAIN }).replace(
          'brokername=Parity%20Broker',
          'brokername=Jos%E9',
        ),
      ),
      1002,
    ),
  ]),
  ...inGroup('error negotiation', [
    ...[undefined, '*/*', 'application/json', 'text/json', 'application/xml', 'text/html'].flatMap(
      (accept) =>
        ['application/json', 'text/json', 'application/xml', FORM].map((contentType) =>
          post(
            `an invalid ${contentType} body, Accept ${accept ?? '(none)'}`,
            contentType,
            contentType.endsWith('xml')
              ? xmlOf({ transaction_id: '1004' })
              : contentType.endsWith('json')
                ? '{"transaction_id":1004}'
                : 'transaction_id=1004',
            accept === undefined ? {} : { Accept: accept },
          ),
        ),
    ),
    post('an invalid text/xml body, Accept (none)', 'text/xml', xmlOf({ transaction_id: '1004' })),
    post(
      'JSON an invalid body, Accept application/problem+json',
      'application/json',
      '{"transaction_id":1004}',
      { Accept: 'application/problem+json' },
    ),
  ]),
  ...inGroup(
    'JSON values',
    JSON_VALUES.flatMap(([member, values]) =>
      values.map((value) =>
        post(`JSON ${member} ${value}`, 'application/json', jsonText(`"${member}":${value}`)),
      ),
    ),
  ),
  ...inGroup('JSON syntax', [
    post(
      'JSON member names in any case',
      'application/json',
      '{"Transaction_ID":1004,"FINANCETYPE":"Cash","LoanTerm":5}',
    ),
    post('JSON TotalPayments in lower case', 'application/json', jsonText('"totalpayments":"x"')),
    post(
      'JSON a member given twice: the later wins',
      'application/json',
      '{"transaction_id":1004,"financetype":"","FinanceType":"Cash"}',
    ),
    post(
      'JSON a member given twice: the later is invalid',
      'application/json',
      '{"transaction_id":1004,"financetype":"Cash","FINANCETYPE":""}',
    ),
    post(
      'JSON a member given twice: the earlier is invalid',
      'application/json',
      jsonText('"loanterm":"abc","LoanTerm":5'),
    ),
    post(
      'JSON a member given twice in a requirements item',
      'application/json',
      jsonText('"requirements":[{"requirement_id":"x","requirement_id":101}]'),
    ),
    post(
      'JSON a dotless I in a member name',
      'application/json',
      '{"transaction_id":1004,"FİNANCETYPE":"Cash"}',
    ),
    post(
      'JSON an escaped member name',
      'application/json',
      '{"transaction_id":1004,"fin\\u0061ncetype":"Cash"}',
    ),
    post(
      'JSON comments',
      'application/json',
      '{/* a */"transaction_id":1004, // b\n"financetype":"Cash"}',
    ),
    post(
      'JSON comments inside values',
      'application/json',
      jsonText('"requirements":[/* none */],"loanterm":/* five */5'),
    ),
    post(
      'JSON trailing commas',
      'application/json',
      '{"transaction_id":1004,"financetype":"Cash","requirements":[],}',
    ),
    post(
      'JSON a trailing comma in the object',
      'application/json',
      `${jsonText('').slice(0, -1)},}`,
    ),
    post('JSON single quotes', 'application/json', "{'transaction_id':1004,'financetype':'Cash'}"),
    post(
      'JSON single quotes with an escaped quote',
      'application/json',
      jsonText("'brokername':'O\\'Brien'"),
    ),
    post('JSON unquoted names', 'application/json', '{transaction_id:1004,financetype:"Cash"}'),
    post('JSON unquoted names with $ and _', 'application/json', jsonText('$x:1,_y:2')),
    post('JSON text after the object', 'application/json', `${jsonText('')} garbage`),
    post('JSON a second object after the first', 'application/json', `${jsonText('')}{}`),
    post('JSON a closing bracket after the object', 'application/json', `${jsonText('')}]`),
    post(
      'JSON indented with CR LF and tabs',
      'application/json',
      '\r\n{\r\n\t"transaction_id" : 1004 ,\r\n\t"financetype" : "Cash"\r\n}\r\n',
    ),
    post(
      'JSON unknown members, nested',
      'application/json',
      jsonText('"extra":{"a":[1,{"b":null}]},"Agent":"x"'),
    ),
    post('JSON undefined', 'application/json', jsonText('"loanterm":undefined')),
    post(
      'JSON a Date constructor',
      'application/json',
      jsonText('"stamp":new Date(1245398693390)'),
    ),
    post('JSON $id metadata', 'application/json', `{"$id":"1",${jsonText('').slice(1)}`),
    post('JSON a $ref', 'application/json', '{"$ref":"1"}'),
    post(
      'JSON $type metadata',
      'application/json',
      `{"$type":"System.Object",${jsonText('').slice(1)}`,
    ),
    post('JSON an empty member name', 'application/json', jsonText('"":1')),
    post(
      'JSON a member name with spaces around it',
      'application/json',
      '{"transaction_id":1004," financetype ":"Cash"}',
    ),
    post(
      'JSON wrapped in the parameter name',
      'application/json',
      `{"transaction":${jsonText('')}}`,
    ),
    post('JSON an array', 'application/json', '[1,2]'),
    post('JSON a transaction in an array', 'application/json', `[${jsonText('')}]`),
    post('JSON a string', 'application/json', '"transaction"'),
    post('JSON a number', 'application/json', '5'),
    post('JSON cut off', 'application/json', '{"transaction_id":1004,'),
    post(
      'JSON a missing comma',
      'application/json',
      '{"transaction_id":1004 "financetype":"Cash"}',
    ),
    post(
      'JSON an unterminated string',
      'application/json',
      '{"transaction_id":1004,"financetype":"Cash',
    ),
    post('JSON null', 'application/json', 'null'),
    post('JSON an empty body', 'application/json', ''),
    post('JSON white space only', 'application/json', ' \r\n '),
    post('JSON transaction_id absent', 'application/json', '{"financetype":"Cash"}'),
    post(
      'JSON Microsoft dates inside requirements',
      'application/json',
      jsonText(
        '"requirements":[{"requirement_id":101,"stamp":"/Date(1245398693390)/","submitted":true}]',
      ),
    ),
    post(
      'JSON Microsoft dates with an offset inside requirements',
      'application/json',
      jsonText(
        '"requirements":[{"requirement_id":101,"stamp":"/Date(1245398693390+0800)/","submitted":true}]',
      ),
    ),
    post(
      'JSON 255 levels deep in an unknown member',
      'application/json',
      jsonText(`"x":${'['.repeat(255)}${']'.repeat(255)}`),
    ),
    post(
      'JSON 256 levels deep in an unknown member',
      'application/json',
      jsonText(`"x":${'['.repeat(256)}${']'.repeat(256)}`),
    ),
    post(
      'JSON empty array elements',
      'application/json',
      jsonText('"requirements":[{},,{}],"x":[1,,2]'),
    ),
    ...['0xFFFFFFFF', '0x80000000', '037777777777', '0x1FFFFFFFF'].map((value) =>
      post(`JSON client_id ${value}`, 'application/json', jsonText(`"client_id":${value}`)),
    ),
    post(
      'JSON a 401-digit sellingprice',
      'application/json',
      jsonText(`"sellingprice":1${'0'.repeat(400)}`),
    ),
    post('JSON brokername 1e400', 'application/json', jsonText('"brokername":1e400')),
    post(
      'JSON 5.0 and 1e2 on integers',
      'application/json',
      jsonText('"loanterm":5.0,"dp_payableinmonths":1e2'),
    ),
    post(
      'JSON a member after one the reader failed on',
      'application/json',
      jsonText('"sellingprice":1e30,"loanterm":500'),
    ),
    post('JSON loanterm 0xFFFFFFFF', 'application/json', jsonText('"loanterm":0xFFFFFFFF')),
    post(
      'JSON stamp 1/2/2024 22:00:00 PM',
      'application/json',
      jsonText('"stamp":"1/2/2024 22:00:00 PM"'),
    ),
  ]),
  ...inGroup('text length', [
    post(
      'JSON a 5000-character submitted_requirements',
      'application/json',
      jsonText(`"submitted_requirements":"${LONG(5000)}"`),
    ),
    post(
      'XML a 5000-character submitted_requirements',
      'application/xml',
      xmlWith('submitted_requirements', LONG(5000)),
    ),
    post(
      'form a 5000-character submitted_requirements',
      FORM,
      formWith('submitted_requirements', LONG(5000)),
    ),
    post(
      'JSON a 1500-character brokername',
      'application/json',
      jsonText(`"brokername":"${LONG(1500)}"`),
    ),
    post('XML a 1500-character brokername', 'application/xml', xmlWith('brokername', LONG(1500))),
    post('form a 1500-character brokername', FORM, formWith('brokername', LONG(1500))),
    post(
      'JSON a 4000-character brokername',
      'application/json',
      jsonText(`"brokername":"${LONG(4000)}"`),
    ),
    post(
      'JSON a 4001-character brokername',
      'application/json',
      jsonText(`"brokername":"${LONG(4001)}"`),
    ),
    post(
      'JSON a 5000-character clientname',
      'application/json',
      jsonText(`"clientname":"${LONG(5000)}"`),
    ),
    post(
      'JSON a lone surrogate in brokername',
      'application/json',
      jsonText('"brokername":"\\ud800"'),
    ),
    post(
      'JSON a range past Int32 on sellingprice',
      'application/json',
      jsonText('"sellingprice":3000000000'),
    ),
  ]),
  ...inGroup('XML values', [
    ...XML_VALUES.flatMap(([member, values]) =>
      values.map((value) =>
        post(`XML ${member} '${value}'`, 'application/xml', xmlWith(member, value)),
      ),
    ),
    post(
      'XML nil members',
      'application/xml',
      xmlOf({ ...BASE, loanterm: null, brokername: null }),
    ),
    post(
      'XML i:nil="1"',
      'application/xml',
      xmlOf(BASE).replace('<financetype>', '<brokername i:nil="1" /><financetype>'),
    ),
    post(
      'XML i:nil="false" with a value',
      'application/xml',
      xmlOf(BASE).replace('<financetype>', '<brokername i:nil="false">x</brokername><financetype>'),
    ),
    post(
      'XML i:nil="true" with content',
      'application/xml',
      xmlOf(BASE).replace('<financetype>', '<brokerid i:nil="true">5</brokerid><financetype>'),
    ),
    post(
      'XML an i:type attribute',
      'application/xml',
      xmlOf(BASE).replace(
        '<transaction_id>',
        '<loanterm i:type="x:int" xmlns:x="http://www.w3.org/2001/XMLSchema">5</loanterm><transaction_id>',
      ),
    ),
    post('XML a nil financetype', 'application/xml', xmlOf({ ...BASE, financetype: null })),
  ]),
  ...inGroup('XML shape', [
    post('XML an empty requirements list', 'application/xml', xmlOf({ ...BASE, requirements: [] })),
    post(
      'XML a requirements item',
      'application/xml',
      xmlOf({ ...BASE, requirements: [{ requirement_id: '101', submitted: 'true' }] }),
    ),
    post(
      'XML a requirements item, children out of order',
      'application/xml',
      xmlOf(BASE).replace(
        '<transaction_id>',
        '<requirements><RequirementAcquisition><submitted>true</submitted><requirement_id>x</requirement_id></RequirementAcquisition></requirements><transaction_id>',
      ),
    ),
    post(
      'XML a requirements item of another name',
      'application/xml',
      xmlOf(BASE).replace(
        '<transaction_id>',
        '<requirements><Item><requirement_id>x</requirement_id></Item></requirements><transaction_id>',
      ),
    ),
    post(
      'XML a requirements item with a Microsoft date',
      'application/xml',
      xmlOf({ ...BASE, requirements: [{ stamp: '/Date(1245398693390)/' }] }),
    ),
    post(
      'XML a nil requirements item',
      'application/xml',
      xmlOf(BASE).replace(
        '<transaction_id>',
        '<requirements><RequirementAcquisition i:nil="true" /></requirements><transaction_id>',
      ),
    ),
    post(
      'XML a declaration',
      'application/xml',
      `<?xml version="1.0" encoding="utf-8"?>${xmlOf(BASE)}`,
    ),
    post('XML no namespace', 'application/xml', xmlOf(BASE, null)),
    post(
      'XML no namespace and no i prefix',
      'application/xml',
      `<Transaction><financetype>Cash</financetype><transaction_id>1004</transaction_id></Transaction>`,
    ),
    post('XML another namespace', 'application/xml', xmlOf(BASE, 'urn:other')),
    post(
      'XML the namespace in another case',
      'application/xml',
      xmlOf(BASE, XML_NAMESPACE.toLowerCase()),
    ),
    post(
      'XML the namespace with a trailing slash',
      'application/xml',
      xmlOf(BASE, `${XML_NAMESPACE}/`),
    ),
    post(
      'XML a prefixed root and children',
      'application/xml',
      `<a:Transaction xmlns:a="${XML_NAMESPACE}"><a:financetype>Cash</a:financetype><a:transaction_id>1004</a:transaction_id></a:Transaction>`,
    ),
    post(
      'XML children in no namespace under a namespaced root',
      'application/xml',
      `<a:Transaction xmlns:a="${XML_NAMESPACE}"><financetype>Cash</financetype><transaction_id>1004</transaction_id></a:Transaction>`,
    ),
    post(
      'XML xsi instead of i',
      'application/xml',
      `<Transaction xmlns:xsi="${XML_INSTANCE}" xmlns="${XML_NAMESPACE}"><brokername xsi:nil="true" /><financetype>Cash</financetype><transaction_id>1004</transaction_id></Transaction>`,
    ),
    post(
      'XML members out of order',
      'application/xml',
      `<Transaction xmlns="${XML_NAMESPACE}"><transaction_id>1004</transaction_id><financetype>Cash</financetype></Transaction>`,
    ),
    post(
      'XML a ranged member out of order',
      'application/xml',
      `<Transaction xmlns="${XML_NAMESPACE}"><financetype>Cash</financetype><transaction_id>1004</transaction_id><loanterm>500</loanterm></Transaction>`,
    ),
    post(
      'XML a member given twice',
      'application/xml',
      xmlOf(BASE).replace(
        '<financetype>Cash</financetype>',
        '<financetype>Cash</financetype><financetype></financetype>',
      ),
    ),
    post(
      'XML unknown elements first and last',
      'application/xml',
      xmlOf({ ...BASE, AAA: 'x', zzz: '<y>1</y>' }),
    ),
    post(
      'XML an unknown attribute on the root',
      'application/xml',
      xmlOf(BASE).replace('<Transaction ', '<Transaction version="2" '),
    ),
    post(
      'XML pretty-printed',
      'application/xml',
      xmlOf({ ...BASE, requirements: [{ requirement_id: '101' }] }).replace(/></g, '>\r\n  <'),
    ),
    post(
      'XML a comment between members',
      'application/xml',
      xmlOf(BASE).replace('<financetype>', '<!-- note --><financetype>'),
    ),
    post(
      'XML a processing instruction between members',
      'application/xml',
      xmlOf(BASE).replace('<financetype>', '<?pi x?><financetype>'),
    ),
    post('XML an empty root', 'application/xml', xmlOf({})),
    post('XML a comment after the root', 'application/xml', `${xmlOf(BASE)}<!-- end -->`),
    post('XML a nil requirements list', 'application/xml', xmlOf({ ...BASE, requirements: null })),
    post(
      'XML two requirements items',
      'application/xml',
      xmlOf({
        ...BASE,
        requirements: [
          { requirement_id: '101', submitted: 'true' },
          { requirement_id: '102', stamp: '2024-01-02T10:00:00Z' },
        ],
      }),
    ),
    post(
      'XML another root',
      'application/xml',
      `<Requirement xmlns="${XML_NAMESPACE}"><financetype>Cash</financetype></Requirement>`,
    ),
    post(
      'XML the root in lower case',
      'application/xml',
      xmlOf(BASE).replaceAll('Transaction', 'transaction'),
    ),
    post('XML a DTD', 'application/xml', `<!DOCTYPE Transaction>${xmlOf(BASE)}`),
    post('XML trailing text', 'application/xml', `${xmlOf(BASE)}trailing`),
    post('XML not well-formed', 'application/xml', '<Transaction><financetype>'),
    post('XML an empty body', 'application/xml', ''),
    post(
      'XML member names in another case',
      'application/xml',
      `<Transaction xmlns="${XML_NAMESPACE}"><FinanceType>Cash</FinanceType><transaction_id>1004</transaction_id></Transaction>`,
    ),
    post(
      'XML 250 levels deep in an unknown element',
      'application/xml',
      xmlOf({ ...BASE, x: `${'<a>'.repeat(250)}${'</a>'.repeat(250)}` }),
    ),
  ]),
  ...inGroup('form values', [
    ...FORM_VALUES.flatMap(([member, values]) =>
      values.map((value) => post(`form ${member} '${value}'`, FORM, formWith(member, value))),
    ),
    post(
      'form stamp 1/2/2024 22:00:00 PM',
      FORM,
      `${formOf(BASE)}&stamp=1%2F2%2F2024%2022%3A00%3A00%20PM`,
    ),
  ]),
  ...inGroup('form shape', [
    post('form keys in any case', FORM, 'TRANSACTION_ID=1004&FinanceType=Cash'),
    post(
      'form a repeated key: the first wins',
      FORM,
      'transaction_id=1004&financetype=&financetype=Cash',
    ),
    post(
      'form a repeated key: the later is empty',
      FORM,
      'transaction_id=1004&financetype=Cash&financetype=',
    ),
    post('form a checkbox pair', FORM, `${formOf(BASE)}&locked=true&locked=false`),
    post(
      'form requirements in brackets',
      FORM,
      `${formOf(BASE)}&requirements%5B0%5D%5Brequirement_id%5D=abc`,
    ),
    post(
      'form requirements with dots',
      FORM,
      `${formOf(BASE)}&requirements%5B0%5D.requirement_id=abc`,
    ),
    post(
      'form requirements after a gap',
      FORM,
      `${formOf(BASE)}&requirements%5B1%5D.requirement_id=abc`,
    ),
    post(
      'form requirements, brackets unescaped',
      FORM,
      `${formOf(BASE)}&requirements[0][requirement_id]=abc`,
    ),
    post(
      'form requirements, an empty index',
      FORM,
      `${formOf(BASE)}&requirements%5B%5D%5Brequirement_id%5D=abc`,
    ),
    post(
      'form requirements, a named index',
      FORM,
      `${formOf(BASE)}&requirements%5Bx%5D%5Brequirement_id%5D=abc`,
    ),
    post('form requirements, an empty value', FORM, `${formOf(BASE)}&requirements=`),
    post('form requirements, a value for an item', FORM, `${formOf(BASE)}&requirements%5B0%5D=x`),
    post(
      'form requirements, both syntaxes for one item',
      FORM,
      `${formOf(BASE)}&requirements%5B0%5D%5Brequirement_id%5D=101&requirements%5B0%5D.submitted=x`,
    ),
    post(
      'form requirements, a Microsoft date and on',
      FORM,
      `${formOf(BASE)}&requirements%5B0%5D%5Bstamp%5D=%2FDate(1245398693390%2B0800)%2F&requirements%5B0%5D%5Bsubmitted%5D=on`,
    ),
    post(
      'form two requirements items',
      FORM,
      formOf({
        ...BASE,
        requirements: [
          { requirement_id: '101', submitted: 'true' },
          { requirement_id: '102', stamp: '2024-01-02T10:00:00Z' },
        ],
      }),
    ),
    post(
      'form an index written 00',
      FORM,
      `${formOf(BASE)}&requirements%5B00%5D%5Brequirement_id%5D=x`,
    ),
    post(
      'form members prefixed with the parameter name',
      FORM,
      'transaction.transaction_id=1004&transaction.financetype=Cash',
    ),
    post('form a key without =', FORM, `${formOf(BASE)}&brokername`),
    post('form empty pairs', FORM, `&&${formOf(BASE)}&&`),
    post('form ; between pairs', FORM, 'transaction_id=1004;financetype=Cash'),
    post('form + for a space', FORM, `${formOf(BASE)}&brokername=a+b`),
    post('form an invalid escape', FORM, `${formOf(BASE)}&brokername=%zz`),
    post('form an empty key', FORM, `${formOf(BASE)}&=x`),
    post('form a key with brackets only', FORM, `${formOf(BASE)}&financetype%5B%5D=x`),
    post('form an empty body', FORM, ''),
  ]),
  // Every rule alone, all together and at their bounds, in every format.
  ...inGroup(
    'validation rules',
    RULE_CASES.flatMap(([name, members]) => [
      post(`JSON ${name}`, 'application/json', JSON.stringify(members)),
      post(`XML ${name}`, 'text/xml', xmlOf(members)),
      post(`form ${name}`, FORM, formOf(members)),
    ]),
  ),
  ...inGroup('effects', [
    ...writeAndReadBack(
      post(
        'JSON the whole agent chain',
        'application/json',
        JSON.stringify({ ...BASE, transaction_id: 1002, ...CHAIN }),
      ),
      1002,
    ),
    ...writeAndReadBack(
      post(
        'XML the whole agent chain',
        'application/xml',
        xmlOf({ ...BASE, transaction_id: '1002', ...CHAIN, brokername: 'Parity XML' }),
      ),
      1002,
    ),
    ...writeAndReadBack(
      post(
        'form the whole agent chain, brackets',
        FORM,
        formOf({
          ...BASE,
          transaction_id: '1002',
          ...CHAIN,
          brokername: 'Parity Form',
          requirements: [{ requirement_id: '101' }],
        }),
      ),
      1002,
    ),
    ...writeAndReadBack(
      post(
        'form the whole agent chain, dots',
        FORM,
        formOf(
          {
            ...BASE,
            transaction_id: '1002',
            ...CHAIN,
            brokername: 'Parity Dots',
            requirements: [{ requirement_id: '101' }],
          },
          true,
        ),
      ),
      1002,
    ),
    ...writeAndReadBack(
      post(
        'JSON the whole agent chain with nothing else',
        'application/json',
        JSON.stringify({ ...CHAIN, transaction_id: 1002, financetype: 'x', brokername: 'Only' }),
      ),
      1002,
    ),
    ...postBack('JSON a stored record posted back whole', 'application/json', STORED, 1006),
    ...postBack('XML a stored record posted back whole', 'application/xml', STORED_XML, 1006),
    ...postBack('form a stored record posted back whole', FORM, STORED, 1006),
    ...writeAndReadBack(
      post(
        'JSON only two agent members',
        'application/json',
        jsonText('"brokerid":77,"brokername":"Two"', '"transaction_id":1006,"financetype":"Cash"'),
      ),
      1006,
    ),
  ]),
  ...inGroup('a .NET client of the legacy era (the twin’s LegacyClient.exe)', [
    ...(legacyClientRequests as Case[]).flatMap((parityCase) =>
      parityCase.name.includes('FormUrlEncodedContent')
        ? writeAndReadBack(parityCase, 1001)
        : [parityCase],
    ),
    readBack('LegacyClient, after every call', 1001),
  ]),
  ...inGroup('UpdateAgents preconditions', [
    post('JSON If-Match that matches nothing', 'application/json', jsonText(''), {
      'If-Match': '"junk"',
    }),
    post('JSON If-Match *', 'application/json', jsonText(''), { 'If-Match': '*' }),
    post(
      'JSON an unknown transaction',
      'application/json',
      jsonText('', '"transaction_id":9999,"financetype":"Cash"'),
    ),
    post(
      'JSON a locked transaction',
      'application/json',
      jsonText('', '"transaction_id":1003,"financetype":"Cash"'),
    ),
    post(
      'XML an unknown transaction',
      'application/xml',
      xmlOf({ ...BASE, transaction_id: '9999' }),
    ),
    post('form a locked transaction', FORM, formOf({ ...BASE, transaction_id: '1005' })),
  ]),
  ...FORM_CASES,
  ...JSON_CLIENT_CASES,
  ...XML_NEGOTIATION_CASES,
];
