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
 * Forms as the client libraries of the legacy's era sent them, each write read back: jQuery's
 * `$.param`, .NET's WebClient and HttpClient, PHP's `http_build_query` (curl, Guzzle), Python 2's
 * requests and Java's HttpURLConnection; then Web API's rules for jQuery keys, for percent-escapes and
 * bytes that are not UTF-8, and for charsets, one by one. Every write carries the whole agent chain,
 * which the legacy wrote whole.
 */

const FORM = 'application/x-www-form-urlencoded';

/** A form's pairs in the order a client wrote them, keys and values as the client held them. */
type Pairs = readonly (readonly [string, string])[];

/** The pairs of an UpdateAgents body: the record's id, its finance type and the whole agent chain. */
const chainPairs = (id: number, changes: Readonly<Record<string, string>> = {}): Pairs =>
  Object.entries({
    transaction_id: String(id),
    financetype: 'Cash',
    ...Object.fromEntries(Object.entries(CHAIN).map(([name, value]) => [name, value ?? ''])),
    ...changes,
  });

const hex = (byte: number, lower = false) => {
  const text = `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return lower ? text.toLowerCase() : text;
};

/**
 * A percent-encoder of the kind each library used: `safe` characters as they are, a space as `+`, any
 * other byte of the text's UTF-8 (or Latin-1) as `%XX`.
 */
const escaper =
  (safe: RegExp, { lower = false, latin1 = false } = {}) =>
  (text: string): string =>
    [...Buffer.from(text, latin1 ? 'latin1' : 'utf8')]
      .map((byte) => {
        const char = String.fromCharCode(byte);
        if (char === ' ') return '+';
        return byte < 0x80 && safe.test(char) ? char : hex(byte, lower);
      })
      .join('');

/** jQuery's `$.param`: encodeURIComponent, then `%20` as `+`. */
const jQueryEscape = (text: string) => encodeURIComponent(text).replace(/%20/g, '+');
/** .NET's Uri.EscapeDataString (HttpClient's FormUrlEncodedContent), RFC 3986's unreserved kept. */
const dataEscape = escaper(/[\w.~-]/);
/** .NET Framework's HttpUtility.UrlEncode (WebClient.UploadValues): lower-case hex. */
const webClientEscape = escaper(/[\w.!*()-]/, { lower: true });
/** PHP's urlencode (http_build_query, RFC 1738). */
const phpEscape = escaper(/[\w.-]/);
/** Python 2's urllib.quote_plus, which `~` did not escape until Python 3.7 kept it. */
const pythonEscape = escaper(/[\w.-]/);
/** Java's URLEncoder.encode(text, "UTF-8"). */
const javaEscape = escaper(/[\w.*-]/);

const encodeWith = (escape: (text: string) => string, pairs: Pairs) =>
  pairs.map(([key, value]) => `${escape(key)}=${escape(value)}`).join('&');

/** jQuery 1.x's headers for `$.ajax({ type: 'POST', data })`. */
const JQUERY_HEADERS = {
  Accept: '*/*',
  'X-Requested-With': 'XMLHttpRequest',
};
const JQUERY_FORM = `${FORM}; charset=UTF-8`;
const GUZZLE_HEADERS = { 'User-Agent': 'GuzzleHttp/6.2.1 curl/7.47.0 PHP/7.0.8' };
const PHP_CURL_HEADERS = { Accept: '*/*' };
const PYTHON_HEADERS = {
  'User-Agent': 'python-requests/2.18.4',
  'Accept-Encoding': 'gzip, deflate',
  Accept: '*/*',
};
/** What HttpURLConnection sends by itself once output is on: its Content-Type and Accept. */
const JAVA_HEADERS = {
  'User-Agent': 'Java/1.8.0_151',
  Accept: 'text/html, image/gif, image/jpeg, *; q=.2, */*; q=.2',
};

/** A checklist of `count` items, as a page's form of checkboxes serializes it. */
const checklist = (count: number, invalidAt = -1): Pairs =>
  Array.from({ length: count }, (_, index): [string, string] => [
    `requirements[${index}][submitted]`,
    index === invalidAt ? 'checked' : 'true',
  ]);

const clientCases: Case[] = [
  ...writeAndReadBack(
    post(
      'jQuery $.post of a flat object',
      JQUERY_FORM,
      encodeWith(jQueryEscape, chainPairs(1001, { brokername: 'Niño & Sons (Makati)' })),
      JQUERY_HEADERS,
    ),
    1001,
  ),
  ...writeAndReadBack(
    post(
      'jQuery $.ajax, arrays as name[] (traditional false)',
      JQUERY_FORM,
      encodeWith(jQueryEscape, [
        ...chainPairs(1001).filter(([name]) => name !== 'brokername'),
        ['brokername[]', 'Php2'],
        ['brokername[]', 'Other'],
      ]),
      JQUERY_HEADERS,
    ),
    1001,
  ),
  ...writeAndReadBack(
    post(
      'jQuery serialize() of a form whose inputs are all named name[]',
      FORM,
      chainPairs(1004, { brokername: 'Php' })
        .map(([name, value]) => `${name}[]=${jQueryEscape(value)}`)
        .join('&'),
    ),
    1004,
  ),
  ...writeAndReadBack(
    post(
      'jQuery the brackets of name[] unescaped, one key repeated',
      FORM,
      `transaction_id[]=1004&financetype[]=Cash&${encodeWith(
        jQueryEscape,
        chainPairs(1004).slice(2),
      ).replace('brokername=Parity+Broker', 'brokername[]=Php2&brokername[]=Other')}`,
    ),
    1004,
  ),
  ...writeAndReadBack(
    post(
      'jQuery $.ajax, arrays as repeated names (traditional true)',
      JQUERY_FORM,
      encodeWith(jQueryEscape, [...chainPairs(1002), ['brokername', 'Second']]),
      JQUERY_HEADERS,
    ),
    1002,
  ),
  ...writeAndReadBack(
    post(
      'jQuery $.param of requirements, an array of objects',
      JQUERY_FORM,
      encodeWith(jQueryEscape, [
        ...chainPairs(1002, { brokername: 'With Checklist' }),
        ['requirements[0][requirement_id]', '101'],
        ['requirements[0][submitted]', 'true'],
        ['requirements[1][requirement_id]', '102'],
        ['requirements[1][stamp]', '2024-01-02T10:00:00Z'],
      ]),
      JQUERY_HEADERS,
    ),
    1002,
  ),
  ...writeAndReadBack(
    post(
      'jQuery $.param of requirements, the second item invalid',
      JQUERY_FORM,
      encodeWith(jQueryEscape, [
        ...chainPairs(1002),
        ['requirements[0][requirement_id]', '101'],
        ['requirements[1][requirement_id]', 'abc'],
      ]),
      JQUERY_HEADERS,
    ),
    1002,
  ),
  ...writeAndReadBack(
    post(
      'jQuery $.param of requirements with traditional true ([object Object])',
      JQUERY_FORM,
      encodeWith(jQueryEscape, [
        ...chainPairs(1002, { brokername: 'Traditional' }),
        ['requirements', '[object Object]'],
        ['requirements', '[object Object]'],
      ]),
      JQUERY_HEADERS,
    ),
    1002,
  ),
  ...writeAndReadBack(
    post(
      'jQuery $.param of a nested object the record does not have',
      JQUERY_FORM,
      encodeWith(jQueryEscape, [
        ...chainPairs(1006, { brokername: 'Nested' }),
        ['agent[broker][id]', '5'],
        ['agent[broker][names][]', 'a'],
      ]),
      JQUERY_HEADERS,
    ),
    1006,
  ),
  ...writeAndReadBack(
    post(
      'jQuery $.param of the record nested under its parameter name',
      JQUERY_FORM,
      encodeWith(
        jQueryEscape,
        chainPairs(1006).map(([name, value]) => [`transaction[${name}]`, value]),
      ),
      JQUERY_HEADERS,
    ),
    1006,
  ),
  ...writeAndReadBack(
    post(
      'jQuery serialize() of a checklist of 1,500 checkboxes',
      FORM,
      encodeWith(jQueryEscape, [
        ...chainPairs(1006, { brokername: 'Long Checklist' }),
        ...checklist(1500),
      ]),
    ),
    1006,
  ),
  ...writeAndReadBack(
    post(
      'jQuery serialize() of a checklist of 1,500 checkboxes, one unreadable',
      FORM,
      encodeWith(jQueryEscape, [...chainPairs(1006), ...checklist(1500, 1200)]),
    ),
    1006,
  ),
  ...writeAndReadBack(
    post(
      'jQuery $.param of a Date object (its toString)',
      JQUERY_FORM,
      encodeWith(jQueryEscape, [
        ...chainPairs(1006),
        ['stamp', 'Tue Jan 02 2024 10:00:00 GMT+0800 (China Standard Time)'],
      ]),
      JQUERY_HEADERS,
    ),
    1006,
  ),
  ...writeAndReadBack(
    post(
      'jQuery $.param of dates as JSON.stringify writes them',
      JQUERY_FORM,
      encodeWith(jQueryEscape, [
        ...chainPairs(1006, { brokername: 'ISO Dates' }),
        ['stamp', '2024-01-02T02:00:00.000Z'],
        ['requirements[0][stamp]', '2024-01-02T02:00:00.000Z'],
        ['requirements[0][submitted]', 'false'],
      ]),
      JQUERY_HEADERS,
    ),
    1006,
  ),
  ...writeAndReadBack(
    post(
      'WebClient.UploadValues of a NameValueCollection, lists in dots',
      FORM,
      encodeWith(webClientEscape, [
        ...chainPairs(1001, { brokername: "O'Brien-Díaz (Jr.)" }),
        ['requirements[0].requirement_id', '101'],
        ['requirements[0].submitted', 'True'],
      ]),
    ),
    1001,
  ),
  ...writeAndReadBack(
    post(
      'WebClient.UploadValues of a NameValueCollection given one name twice (joined by a comma)',
      FORM,
      encodeWith(webClientEscape, chainPairs(1001, { brokername: 'Php2,Other' })),
    ),
    1001,
  ),
  ...writeAndReadBack(
    post(
      'HttpClient FormUrlEncodedContent of pairs, one name twice',
      FORM,
      encodeWith(dataEscape, [...chainPairs(1004, { brokername: 'First!' }), ['brokername', 'x']]),
    ),
    1004,
  ),
  ...writeAndReadBack(
    post(
      'HttpClient FormUrlEncodedContent of non-ASCII names',
      FORM,
      encodeWith(dataEscape, chainPairs(1004, { brokername: 'José Müller 日本 😀 *(~)' })),
    ),
    1004,
  ),
  ...writeAndReadBack(
    post(
      'HttpClient FormUrlEncodedContent with CharSet set to utf-8',
      `${FORM}; charset=utf-8`,
      encodeWith(dataEscape, chainPairs(1004, { brokername: 'Ünïcode' })),
    ),
    1004,
  ),
  ...writeAndReadBack(
    post(
      'PHP curl with http_build_query of a flat array',
      FORM,
      encodeWith(phpEscape, chainPairs(1002, { brokername: 'Smith & Sons + Co. ~ 100%' })),
      PHP_CURL_HEADERS,
    ),
    1002,
  ),
  ...writeAndReadBack(
    post(
      'PHP curl with http_build_query of requirements, nested arrays',
      FORM,
      encodeWith(phpEscape, [
        ...chainPairs(1002, { brokername: 'PHP Checklist' }),
        ['requirements[0][requirement_id]', '101'],
        ['requirements[0][submitted]', '1'],
      ]),
      PHP_CURL_HEADERS,
    ),
    1002,
  ),
  ...writeAndReadBack(
    post(
      'PHP curl with http_build_query of a list value (name[0]=…)',
      FORM,
      encodeWith(phpEscape, [
        ...chainPairs(1002).filter(([name]) => name !== 'brokername'),
        ['brokername[0]', 'Php'],
      ]),
      PHP_CURL_HEADERS,
    ),
    1002,
  ),
  ...writeAndReadBack(
    post(
      'PHP curl, a string from a Latin-1 source file, charset ISO-8859-1',
      `${FORM}; charset=ISO-8859-1`,
      encodeWith(escaper(/[\w.-]/, { latin1: true }), chainPairs(1002, { brokername: 'José' })),
      PHP_CURL_HEADERS,
    ),
    1002,
  ),
  ...writeAndReadBack(
    post(
      'Guzzle form_params with a nested array',
      FORM,
      encodeWith(phpEscape, [
        ...chainPairs(1006, { brokername: 'Guzzle' }),
        ['requirements[0][requirement_id]', '101'],
        ['meta[source][app]', 'crm'],
      ]),
      GUZZLE_HEADERS,
    ),
    1006,
  ),
  ...writeAndReadBack(
    post(
      'Guzzle form_params with PHP booleans (true as 1, false as 0)',
      FORM,
      encodeWith(phpEscape, [
        ...chainPairs(1006),
        ['reservation_paid', '1'],
        ['requirements_complete', '0'],
      ]),
      GUZZLE_HEADERS,
    ),
    1006,
  ),
  ...writeAndReadBack(
    post(
      'Python 2 requests data= a dict with a list (repeated keys)',
      FORM,
      encodeWith(pythonEscape, [
        ['brokername', 'Py First'],
        ['brokername', 'Py Second'],
        ...chainPairs(1001).filter(([name]) => name !== 'brokername'),
      ]),
      PYTHON_HEADERS,
    ),
    1001,
  ),
  ...writeAndReadBack(
    post(
      'Python 2 requests data= a dict of unicode values',
      FORM,
      encodeWith(pythonEscape, chainPairs(1001, { brokername: 'Peña ~ Ñandú' })),
      PYTHON_HEADERS,
    ),
    1001,
  ),
  ...writeAndReadBack(
    post(
      'Python 2 requests data= a Latin-1 str',
      FORM,
      encodeWith(escaper(/[\w.-]/, { latin1: true }), chainPairs(1001, { brokername: 'Peña' })),
      PYTHON_HEADERS,
    ),
    1001,
  ),
  ...writeAndReadBack(
    post(
      'Python 2 requests data= pairs with requirements in dots',
      FORM,
      encodeWith(pythonEscape, [
        ...chainPairs(1001, { brokername: 'Py Dots' }),
        ['requirements[0].requirement_id', '101'],
        ['requirements[1].requirement_id', '102'],
      ]),
      PYTHON_HEADERS,
    ),
    1001,
  ),
  ...writeAndReadBack(
    post(
      'Java HttpURLConnection with URLEncoder (UTF-8)',
      FORM,
      encodeWith(javaEscape, chainPairs(1004, { brokername: 'Javá * Client' })),
      JAVA_HEADERS,
    ),
    1004,
  ),
  ...writeAndReadBack(
    post(
      'Java HttpURLConnection with URLEncoder of the platform encoding (windows-1252)',
      FORM,
      encodeWith(escaper(/[\w.*-]/, { latin1: true }), chainPairs(1004, { brokername: 'Javá' })),
      JAVA_HEADERS,
    ),
    1004,
  ),
  ...writeAndReadBack(
    post(
      'Java HttpURLConnection, an invalid body',
      FORM,
      encodeWith(javaEscape, chainPairs(1004, { financetype: '', loanterm: '500' })),
      JAVA_HEADERS,
    ),
    1004,
  ),
];

/** The legacy's reading of a jQuery key, each beside the whole agent chain of 1004. */
const KEYS: readonly [string, string][] = [
  ['[] before the name', '%5B%5Dbrokername=Before'],
  ['[][] after the name', 'brokername%5B%5D%5B%5D=Twice'],
  ['a named bracket', 'brokername%5Bx%5D=Named&brokername=Plain'],
  ['an index on a scalar', 'brokername%5B0%5D=Indexed&brokername=Plain'],
  ['a dotted member of a scalar', 'brokername.x=Dotted&brokername=Plain'],
  ['a ] alone', 'brokername%5D=Closed&brokername=Plain'],
  ['a [ left open in an unknown key', 'x%5B=1&brokername=Open'],
  ['a [ left open in a member', 'brokername%5B=Open'],
  ['a [ left open in a requirements item', 'requirements%5B0%5D%5Bx=1&brokername=Items'],
  ['a name in another case with []', 'BrokerName%5B%5D=First&brokername=Second'],
  ['a key without =', 'brokername'],
  ['an empty key and empty pairs', '=x&&brokername=Empty&'],
  ['+ in a key', 'broker+name=Plus&brokername=Plain'],
  ['%20 in a key', 'broker%20name=Space&brokername=Plain'],
  ['an escaped letter in a key', '%62rokername=Escaped'],
  [
    'an item member with [] after it',
    'requirements%5B0%5D%5Brequirement_id%5D%5B%5D=abc&brokername=Items',
  ],
  [
    'an item member with a name after it',
    'requirements%5B0%5D%5Brequirement_id%5D%5Bx%5D=abc&brokername=Items',
  ],
  [
    'an item present by a deeper key',
    'requirements%5B0%5D.requirement_id.x=1&requirements%5B1%5D.requirement_id=abc&brokername=Items',
  ],
  [
    'an item present by its value alone',
    'requirements%5B0%5D=x&requirements%5B1%5D%5Brequirement_id%5D=abc&brokername=Items',
  ],
  [
    'an index starting with a digit',
    'requirements%5B0x%5D%5Brequirement_id%5D=abc&requirements%5B0%5D%5Brequirement_id%5D=def&brokername=Items',
  ],
  [
    'an item member given twice',
    'requirements%5B0%5D%5Brequirement_id%5D=abc&requirements%5B0%5D%5Brequirement_id%5D=5&brokername=Items',
  ],
  ['requirements[] members', 'requirements%5B%5D%5Brequirement_id%5D=abc&brokername=Items'],
];

/** Percent-escapes and raw bytes in a value, as the legacy's decoder read them. */
const VALUES: readonly [string, string][] = [
  ['%FF', 'a%FFb'],
  ['%C3 at the end', 'a%C3'],
  ['%E2%82, a sequence cut short', 'a%E2%82b'],
  ['%F0%9F%98, a four-byte sequence cut short', 'a%F0%9F%98b'],
  ['%C0%80, overlong', 'a%C0%80b'],
  ['%E0%80%80, overlong', 'a%E0%80%80b'],
  ['%ED%A0%80, a surrogate', 'a%ED%A0%80b'],
  ['%F4%90%80%80, past U+10FFFF', 'a%F4%90%80%80b'],
  ['%F8%88%80%80%80, five bytes', 'a%F8%88%80%80%80b'],
  ['%80%80, continuations alone', 'a%80%80b'],
  ['%E2 x %82%AC, a sequence broken by a letter', 'a%E2x%82%ACb'],
  ['%u00e9', 'a%u00e9b'],
  ['a lone %', 'a%'],
  ['% and one digit', 'a%4'],
  ['%zz', 'a%zzb'],
  ['%%41', 'a%%41b'],
  ['%C3%A9 in lower case', 'a%c3%a9b'],
  ['%E0%9F%80, overlong', 'a%E0%9F%80b'],
  ['%F0%8F%80%80, overlong', 'a%F0%8F%80%80b'],
  ['%C1%BF, overlong', 'a%C1%BFb'],
  ['%F5%80, a lead byte past U+10FFFF', 'a%F5%80b'],
  ['%ED%BF%BF, a surrogate', 'a%ED%BF%BFb'],
  ['%E0%A0, cut short', 'a%E0%A0b'],
  ['%C3%C3%A9, a lead byte before a whole sequence', 'a%C3%C3%A9b'],
  ['%EF%BF%BF, a noncharacter', 'a%EF%BF%BFb'],
  ['%F0%90%80%80%F0, a lead byte after a whole sequence', 'a%F0%90%80%80%F0b'],
];

/** Bytes sent raw, written as Latin-1 text (one character a byte). */
const RAW: readonly [string, string][] = [
  ['C3 A9, UTF-8', 'a\u00c3\u00a9b'],
  ['E9, Latin-1', 'a\u00e9b'],
  ['C3 then %A9', 'a\u00c3%A9b'],
  ['%C3 then A9', 'a%C3\u00a9b'],
  ['E2 82, cut short', 'a\u00e2\u0082b'],
  ['C0 80, overlong', 'a\u00c0\u0080b'],
];

const chainForm = (id: number, own: string) =>
  `${encodeWith(
    jQueryEscape,
    chainPairs(id).filter(([name]) => name !== 'brokername'),
  )}&${own}`;

const ruleCases: Case[] = [
  ...KEYS.flatMap(([name, own]) =>
    writeAndReadBack(post(`form key ${name}`, FORM, chainForm(1004, own)), 1004),
  ),
  ...VALUES.flatMap(([name, value]) =>
    writeAndReadBack(
      post(`form value ${name}`, FORM, chainForm(1006, `brokername=${value}`)),
      1006,
    ),
  ),
  ...RAW.flatMap(([name, value]) =>
    writeAndReadBack(
      encoded(`form raw bytes ${name}`, FORM, chainForm(1006, `brokername=${value}`), 'latin1'),
      1006,
    ),
  ),
  ...writeAndReadBack(
    encoded(
      'form raw bytes C3 A9 in a key',
      FORM,
      chainForm(1006, 'broker\u00c3\u00a9name=x&brokername=Key'),
      'latin1',
    ),
    1006,
  ),
  ...(
    [
      ['iso-8859-1, an escape', 'iso-8859-1', 'Jos%E9', undefined],
      ['iso-8859-1, a raw byte', 'iso-8859-1', 'Jos\u00e9', 'latin1'],
      ['windows-1252, a raw byte', 'windows-1252', 'Euro\u0080', 'latin1'],
      ['windows-1252, an escape', 'windows-1252', 'Euro%80', undefined],
      ['utf-16, an ASCII body', 'utf-16', 'Sixteen', undefined],
      ['an unknown name', 'x-unknown', 'Unknown%C3%A9', undefined],
      ['utf-8, a raw Latin-1 byte', 'utf-8', 'Jos\u00e9', 'latin1'],
    ] as const
  ).flatMap(([name, charset, value, encoding]) =>
    writeAndReadBack(
      encoding === undefined
        ? post(
            `form charset ${name}`,
            `${FORM}; charset=${charset}`,
            chainForm(1002, `brokername=${value}`),
          )
        : encoded(
            `form charset ${name}`,
            `${FORM}; charset=${charset}`,
            chainForm(1002, `brokername=${value}`),
            encoding,
          ),
      1002,
    ),
  ),
];

export const FORM_CASES: readonly ParityCase[] = [
  ...inGroup('forms of the legacy era’s clients', clientCases),
  ...inGroup('form keys, escapes and charsets', ruleCases),
];
