import {
  type Case,
  CHAIN,
  encoded,
  inGroup,
  type ParityCase,
  post,
  writeAndReadBack,
} from './cases';

/**
 * JSON as the clients of the legacy's era sent it, each write read back: jQuery's `JSON.stringify`,
 * .NET's HttpClient, WebClient and HttpWebRequest, PowerShell, Python 2's `json.dumps`, PHP's
 * `json_encode` and Java's Jackson and Gson, with their default headers and their spelling of numbers,
 * escapes and empty values. Then Json.NET 6's reading of them under Web API: a number in a text member
 * as .NET wrote the number it read, a lone surrogate escape kept (read back as U+FFFD), `""` as a null
 * list or list item, and bytes that are not text after a byte order mark replaced as .NET's decoders
 * did. Every write carries the whole agent chain, which the legacy wrote whole.
 */

/** A JSON client: how it labels and frames a body, and the separators its serializer writes. */
interface Client {
  readonly name: string;
  readonly contentType: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly chunked?: boolean;
  /** Between members, and between a name and its value. */
  readonly separators?: readonly [string, string];
}

const JQUERY: Client = {
  name: 'jQuery $.ajax with JSON.stringify',
  contentType: 'application/json; charset=utf-8',
  headers: {
    Accept: 'application/json, text/javascript, */*; q=0.01',
    'X-Requested-With': 'XMLHttpRequest',
  },
};
const HTTP_CLIENT: Client = {
  name: '.NET HttpClient PostAsJsonAsync',
  contentType: 'application/json; charset=utf-8',
  chunked: true,
};
const WEB_CLIENT: Client = {
  name: '.NET WebClient.UploadString',
  contentType: 'application/json',
};
const HTTP_WEB_REQUEST: Client = {
  name: '.NET HttpWebRequest with a StreamWriter in Encoding.UTF8',
  contentType: 'application/json; charset=utf-8',
};
const POWERSHELL: Client = {
  name: 'PowerShell 5 Invoke-RestMethod',
  contentType: 'application/json',
  headers: {
    'User-Agent': 'Mozilla/5.0 (Windows NT; Windows NT 10.0; en-US) WindowsPowerShell/5.1',
  },
};
const PYTHON: Client = {
  name: 'Python 2 requests with json.dumps',
  contentType: 'application/json',
  headers: {
    Accept: '*/*',
    'Accept-Encoding': 'gzip, deflate',
    'User-Agent': 'python-requests/2.18.4',
  },
  separators: [', ', ': '],
};
const PHP: Client = {
  name: 'PHP curl with json_encode',
  contentType: 'application/json',
  headers: { Accept: '*/*' },
};
const JACKSON: Client = {
  name: 'Java RestTemplate with Jackson',
  contentType: 'application/json;charset=UTF-8',
  headers: { Accept: 'application/json, application/*+json', 'User-Agent': 'Java/1.8.0_151' },
};
const GSON: Client = {
  name: 'Java HttpURLConnection with Gson',
  contentType: 'application/json; charset=UTF-8',
  headers: { 'User-Agent': 'Java/1.7.0_80' },
};
const NODE: Client = {
  name: 'a Node script writing UTF-16 with a byte order mark',
  contentType: 'application/json',
};
const JAVA_UTF16: Client = {
  name: 'Java HttpURLConnection writing getBytes("UTF-16")',
  contentType: 'application/json; charset=utf-16',
};

/** The agent chain as JSON values: ids as numbers, names as strings. */
const CHAIN_JSON: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(CHAIN).map(([name, value]) => [
    name,
    typeof value !== 'string'
      ? 'null'
      : /id(?:_recruit)?$/.test(name)
        ? value
        : JSON.stringify(value),
  ]),
);

/**
 * An UpdateAgents body for a transaction, with the client's separators: its id, its finance type and
 * the whole agent chain, then `changes` (raw JSON text) in place of chain members or after them.
 */
function bodyOf(client: Client, id: number, changes: Readonly<Record<string, string>>): string {
  const [between, nameValue] = client.separators ?? [',', ':'];
  const members = { transaction_id: String(id), financetype: '"Cash"', ...CHAIN_JSON, ...changes };
  return `{${Object.entries(members)
    .map(([name, value]) => `"${name}"${nameValue}${value}`)
    .join(between)}}`;
}

/** A client's write of these changes, then the record read back. */
function write(
  client: Client,
  what: string,
  id: number,
  changes: Readonly<Record<string, string>>,
): Case[] {
  const { name, request } = post(
    `${client.name}: ${what}`,
    client.contentType,
    bodyOf(client, id, changes),
    client.headers,
  );
  return writeAndReadBack({ name, request: { ...request, chunked: client.chunked } }, id);
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);
/** Where the raw bytes go in a body's text. */
const BYTES_HERE = '@@';

/** A client's write of these bytes (sent as they are), then the record read back. */
function writeRaw(client: Client, what: string, id: number, bytes: Buffer): Case[] {
  const { name, request } = encoded(
    `${client.name}: ${what}`,
    client.contentType,
    bytes.toString('latin1'),
    'latin1',
  );
  return writeAndReadBack(
    { name, request: { ...request, headers: { ...request.headers, ...client.headers } } },
    id,
  );
}

/**
 * A client's write whose brokername holds raw bytes (hexadecimal) between `before` and `after`, the
 * body after `prefix` (a byte order mark, or nothing); then the record read back.
 */
function writeBytes(
  client: Client,
  what: string,
  id: number,
  prefix: Buffer,
  brokername: readonly [before: string, hex: string, after: string],
): Case[] {
  const [before, hex, after] = brokername;
  const [head, tail] = bodyOf(client, id, {
    brokername: `"${before}${BYTES_HERE}${after}"`,
  }).split(BYTES_HERE);
  return writeRaw(
    client,
    what,
    id,
    Buffer.concat([prefix, Buffer.from(head), Buffer.from(hex, 'hex'), Buffer.from(tail)]),
  );
}

/** A body in UTF-16 after its byte order mark, lone surrogates kept as written. */
const utf16 = (text: string, bigEndian = false) => {
  const littleEndian = Buffer.from(`\uFEFF${text}`, 'utf16le');
  return bigEndian ? littleEndian.swap16() : littleEndian;
};

export const JSON_CLIENT_CASES: readonly ParityCase[] = [
  ...inGroup('JSON clients: numbers in text members', [
    ...write(JQUERY, 'numbers in names, as JavaScript writes them', 1002, {
      brokername: '123456789012345680000',
      directorname: '1e-7',
      managername: '1e+21',
      managername_recruit: '5e-324',
      salesagentname: '0.30000000000000004',
      salesagentname_recruit: '1.7976931348623157e+308',
    }),
    ...write(PYTHON, "numbers in names, as Python's repr writes them", 1006, {
      brokername: '1e+16',
      directorname: '1e-07',
      managername: '123456789012345678',
      managername_recruit: 'true',
      salesagentname: '1000000000000000.0',
      salesagentname_recruit: '0.1',
    }),
    ...write(PHP, 'JSON_PRESERVE_ZERO_FRACTION and escaped slashes', 1002, {
      brokername: '1.0',
      directorname: '1.0e+25',
      managername: '0.30000000000000004',
      managername_recruit: '"A\\/B Realty"',
      salesagentname: '-0.0',
      salesagentname_recruit: '"Jos\\u00e9"',
    }),
    ...write(PHP, 'PHP 5 floats at precision 14, and false', 1006, {
      brokername: '1.2345678901235e+22',
      directorname: '0.3',
      managername: '100',
      salesagentname: 'false',
    }),
    ...write(JACKSON, "numbers in names, as Java's Double.toString writes them", 1002, {
      brokername: '1.0E21',
      directorname: '1.0E-5',
      managername: '12345678901234567890123',
      managername_recruit: '4.9E-324',
      salesagentname: '-0.0',
      salesagentname_recruit: '9.223372036854776E18',
    }),
    ...write(GSON, "Gson's HTML-safe escapes and 5.0", 1006, {
      brokername: '"O\\u0027Neil \\u0026 Sons"',
      directorname: '"a\\u003db\\u003cc\\u003e"',
      managername: '5.0',
      salesagentname: '1.0E16',
    }),
    ...write(HTTP_CLIENT, 'an object model of numbers, booleans and dates as text', 1002, {
      brokername: '1E+21',
      directorname: '0.1',
      managername: 'true',
      managername_recruit: '"\\/Date(1245398693390)\\/"',
      salesagentname: '"2024-01-02T10:00:00Z"',
      salesagentname_recruit: '"2024-01-02T10:00:00+08:00"',
    }),
    ...write(WEB_CLIENT, 'a string.Format template with zero-padded codes (octal)', 1006, {
      brokername: '007',
      directorname: '010',
      managername: '0x1F',
      managername_recruit: '-012',
      salesagentname: '00',
      salesagentname_recruit: '0xFFFFFFFFFFFFFFFF',
    }),
    // Json.NET's reader, once it failed, also failed on the member after and lost it, or, after
    // the last member, on the whole record.
    ...write(WEB_CLIENT, 'a zero-padded 08, not octal', 1006, { directorname: '08' }),
    ...write(WEB_CLIENT, 'a zero-padded 08 last', 1006, { salesagentname_recruit: '08' }),
    ...write(WEB_CLIENT, 'a hexadecimal code past 64 bits', 1006, {
      managername: '0x10000000000000000',
    }),
    ...write(WEB_CLIENT, 'a zero-padded 08, then a member the service does not know', 1006, {
      directorname: '08,"branch":"North"',
    }),
    ...write(WEB_CLIENT, 'a zero-padded 08 in a checklist item', 1006, {
      requirements: '[{"requirement_id":08,"submitted":true}]',
    }),
    ...write(WEB_CLIENT, 'a zero-padded 08 last in the checklist', 1006, {
      requirements: '[{"requirement_id":08}]',
    }),
    ...write(WEB_CLIENT, 'a zero-padded 08 in the last item, another after it', 1006, {
      requirements: '[{"requirement_id":08},{"requirement_id":401}]',
    }),
    ...write(HTTP_CLIENT, 'Json.NET 4.5 writing NaN and the infinities bare', 1002, {
      brokername: 'NaN',
      directorname: 'Infinity',
      managername: '-Infinity',
    }),
    ...write(JQUERY, 'digits past a double, rounded by .NET to 15', 1002, {
      brokername: '9927186.9457828850',
      directorname: '639318843965096.50',
      managername: '99999999999999999999.5',
      salesagentname: '123456789.123456789',
    }),
  ]),
  ...inGroup('JSON clients: text that is not Unicode', [
    ...write(PYTHON, 'an emoji cut in half, escaped by ensure_ascii', 1002, {
      brokername: '"Jos\\u00e9 \\ud83d"',
      directorname: '"\\ude00 Reyes"',
      managername: '"\\ud83d\\ud83d"',
      salesagentname: '"\\ud83d\\ude00 ok"',
    }),
    ...write(PYTHON, 'a cut emoji in a member the service does not store', 1006, {
      clientname: '"\\ud83d"',
      brokername: '"Python Broker"',
    }),
    ...write(JQUERY, 'a cut emoji an old browser sent as U+FFFD', 1002, {
      brokername: '"Jos\u00e9 \uFFFD"',
    }),
    ...writeBytes(
      HTTP_WEB_REQUEST,
      'a Windows-1252 name after the byte order mark',
      1006,
      UTF8_BOM,
      ['Jos', 'e9', ''],
    ),
    ...writeBytes(WEB_CLIENT, 'a Windows-1252 name in Encoding.Default', 1006, Buffer.alloc(0), [
      'Jos',
      'e9',
      '',
    ]),
    ...writeBytes(POWERSHELL, 'a body sent as ISO-8859-1', 1006, Buffer.alloc(0), [
      'M',
      'fc',
      'ller',
    ]),
    ...writeBytes(
      HTTP_WEB_REQUEST,
      'an emoji cut short after the byte order mark',
      1002,
      UTF8_BOM,
      ['Ana ', 'f09f98', ''],
    ),
    ...writeBytes(HTTP_WEB_REQUEST, 'CESU-8 from an Oracle UTF8 export', 1002, UTF8_BOM, [
      'x',
      'eda0bdedb880',
      'y',
    ]),
    ...writeBytes(HTTP_WEB_REQUEST, 'overlong forms of a slash', 1006, UTF8_BOM, [
      'a',
      'c0afe080af',
      'b',
    ]),
    ...writeBytes(HTTP_WEB_REQUEST, 'bytes past U+10FFFF', 1002, UTF8_BOM, [
      'a',
      'f4908080f5',
      'b',
    ]),
    ...writeBytes(HTTP_WEB_REQUEST, 'a sequence restarted before it ended', 1006, UTF8_BOM, [
      'a',
      'e2e282acc2c3a9',
      'b',
    ]),
    ...writeRaw(
      NODE,
      'a lone surrogate',
      1002,
      utf16(bodyOf(NODE, 1002, { brokername: '"Ana \uD83D"', directorname: '"\uDE00"' })),
    ),
    ...writeRaw(
      JAVA_UTF16,
      'a body in big-endian UTF-16',
      1006,
      utf16(bodyOf(JAVA_UTF16, 1006, { brokername: '"José 日本"' }), true),
    ),
  ]),
  ...inGroup('JSON clients: empty values for lists', [
    ...write(PHP, 'an empty string for the checklist', 1002, { requirements: '""' }),
    ...write(PHP, 'an empty string in the checklist', 1006, { requirements: '[""]' }),
    ...write(PHP, 'empty strings among the items and in them', 1002, {
      requirements:
        '["",{"requirement_id":"401","requirement_type_id":"","stamp":"","submitted":"","description":""}]',
    }),
    ...write(JQUERY, 'an empty string and a null in the checklist', 1006, {
      requirements: '["",null]',
    }),
    ...write(PYTHON, 'a blank string for the checklist', 1002, { requirements: '" "' }),
    ...write(PHP, 'a checklist with gaps, written as an object', 1006, {
      requirements: '{"0":{"requirement_id":401},"2":{"requirement_id":402}}',
    }),
    ...write(JQUERY, 'requirement ids where the items belong', 1002, {
      requirements: '[401,"402",{"requirement_id":403},[404],true]',
    }),
    ...write(PYTHON, 'an empty object for the checklist', 1006, { requirements: '{}' }),
    ...write(JACKSON, 'a map for the checklist, keyed by names Json.NET quoted', 1002, {
      requirements: '{"Signed form (copy)":{"requirement_id":401}}',
    }),
  ]),
];
