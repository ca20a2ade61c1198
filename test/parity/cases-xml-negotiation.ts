import {
  type Case,
  CHAIN,
  encoded,
  FORM,
  formOf,
  get,
  GET_REQUIREMENTS,
  inGroup,
  type ParityCase,
  post,
  readBack,
  writeAndReadBack,
  XML_INSTANCE,
  xmlOf,
} from './cases';

/**
 * DataContractSerializer's reading of XML bodies (nil, white space, attributes, encodings) and Web
 * API's negotiation of `Accept` and `Accept-Charset`, as the clients of the legacy's era sent them:
 * .NET's HttpClient and WebClient, Java's HttpURLConnection, PHP's curl, Python 2's requests, jQuery
 * and browsers. Writes go to transaction 1001 and carry the whole agent chain, which the legacy wrote
 * whole; reads are GetRequirements, which no write changes.
 */

const ID = 1001;
const XML = 'application/xml';
const XML_SCHEMA = 'http://www.w3.org/2001/XMLSchema';

/** An UpdateAgents body in DataContractSerializer's shape carrying the whole chain. */
const chainXml = () => xmlOf({ transaction_id: String(ID), financetype: 'Cash', ...CHAIN });

/** The chain's body with one member's element written as given, raw. */
const withElement = (member: 'brokername' | 'brokerid', element: string) =>
  chainXml().replace(
    member === 'brokername' ? '<brokername>Parity Broker</brokername>' : '<brokerid>501</brokerid>',
    element,
  );

const CHAIN_MEMBERS = ['transaction_id', 'financetype', ...Object.keys(CHAIN)].sort();

/**
 * The chain's body with a member's element added where DataContractSerializer expects it, in ordinal
 * order: it dropped a member out of order, and the members before it that came after.
 */
const withMember = (member: string, element: string) => {
  const next = CHAIN_MEMBERS.find((name) => name > member) ?? 'transaction_id';
  const body = chainXml();
  const at = Math.max(body.indexOf(`<${next}>`), body.indexOf(`<${next} `));
  return `${body.slice(0, at)}${element}${body.slice(at)}`;
};

const xmlWrite = (name: string, body: string, headers: Record<string, string> = {}): Case[] =>
  writeAndReadBack(post(`XML body: ${name}`, XML, body, headers), ID);

/** A member element as written, then what DataContractSerializer stored for it. */
const BROKER_NAMES: readonly [string, string][] = [
  ['white space under xml:space', '<brokername xml:space="preserve">   </brokername>'],
  ['white space beside a namespace declaration', '<brokername xmlns:x="urn:x"> \t </brokername>'],
  ['white space beside another attribute', '<brokername note="x">  </brokername>'],
  ['text with white space beside an attribute', '<brokername note="x">  Ana  </brokername>'],
  ['white space with i:nil="false"', '<brokername i:nil="false">  </brokername>'],
  [
    'white space with xsi:type string',
    `<brokername i:type="x:string" xmlns:x="${XML_SCHEMA}">  </brokername>`,
  ],
  ['nil="true" without a prefix is text', '<brokername nil="true">NN</brokername>'],
  [
    'i:nil with i bound to another namespace is text',
    '<brokername xmlns:i="urn:other" i:nil="true">NN</brokername>',
  ],
  [
    'nil under another prefix for the instance namespace',
    `<brokername xmlns:x="${XML_INSTANCE}" x:nil="true">NN</brokername>`,
  ],
  ['i:nil=" true " with white space', '<brokername i:nil=" true ">NN</brokername>'],
  ['i:nil="1" with text', '<brokername i:nil="1">NN</brokername>'],
  ['i:nil="0" with text', '<brokername i:nil="0">Zero</brokername>'],
  ['entity-encoded spaces', '<brokername>&#32;&#32;</brokername>'],
  ['an entity-encoded line feed', '<brokername>&#10;</brokername>'],
  ['CR LF inside text', '<brokername>a\r\nb</brokername>'],
  ['an entity-encoded CR', '<brokername>a&#13;b</brokername>'],
  ['white space around a comment', '<brokername> <!-- c --> </brokername>'],
  ['text split by a comment', '<brokername>Ana<!-- c -->Cruz</brokername>'],
  ['white space in CDATA', '<brokername><![CDATA[   ]]></brokername>'],
  ['CDATA between white space', '<brokername>  <![CDATA[ a ]]>  </brokername>'],
  ['an empty element', '<brokername />'],
  ['an empty element pair', '<brokername></brokername>'],
];

/** Elements DataContractSerializer refused, each failing the whole body. */
const REFUSED: readonly [string, string][] = [
  ['i:nil="TRUE"', withElement('brokername', '<brokername i:nil="TRUE">NN</brokername>')],
  ['i:nil="yes"', withElement('brokername', '<brokername i:nil="yes">NN</brokername>')],
  ['an empty i:nil', withElement('brokername', '<brokername i:nil="">NN</brokername>')],
  ['i:nil="TRUE" on an integer', withElement('brokerid', '<brokerid i:nil="TRUE">5</brokerid>')],
  ['an empty integer', withElement('brokerid', '<brokerid />')],
  ['an integer of white space', withElement('brokerid', '<brokerid>  </brokerid>')],
  ['an empty integer with i:nil="false"', withElement('brokerid', '<brokerid i:nil="false" />')],
  ['an empty boolean', withMember('locked', '<locked></locked>')],
  ['an empty date with i:nil="false"', withMember('stamp', '<stamp i:nil="false"></stamp>')],
  ['i:nil="TRUE" on a decimal', withMember('sellingprice', '<sellingprice i:nil="TRUE" />')],
  ['i:nil="TRUE" on requirements', withMember('requirements', '<requirements i:nil="TRUE" />')],
  [
    'i:nil="TRUE" on a requirements item',
    withMember(
      'requirements',
      '<requirements><RequirementAcquisition i:nil="TRUE" /></requirements>',
    ),
  ],
  [
    'white space alone for financetype beside xml:space',
    chainXml().replace(
      '<financetype>Cash</financetype>',
      '<financetype xml:space="preserve">  </financetype>',
    ),
  ],
];

/** Other members' elements the legacy read, to no stored effect but the body's validity. */
const READ: readonly [string, string][] = [
  [
    'an integer with white space and an attribute',
    withElement('brokerid', '<brokerid note="x"> 7 </brokerid>'),
  ],
  ['an integer split by a comment', withElement('brokerid', '<brokerid>1<!-- c -->2</brokerid>')],
  [
    'an integer with i:nil="false"',
    withElement('brokerid', '<brokerid i:nil="false">6</brokerid>'),
  ],
  ['a boolean with white space', withMember('locked', '<locked> true </locked>')],
  ['a boolean with i:nil="1"', withMember('locked', '<locked i:nil="1" />')],
  ['a date with white space', withMember('stamp', '<stamp> 2024-01-02T10:00:00 </stamp>')],
  [
    'a decimal with i:nil="false"',
    withMember('sellingprice', '<sellingprice i:nil="false">5</sellingprice>'),
  ],
  [
    'requirements of white space beside an attribute',
    withMember('requirements', '<requirements note="x">  </requirements>'),
  ],
  [
    'a requirements item with nil="true" without a prefix',
    withMember(
      'requirements',
      '<requirements><RequirementAcquisition nil="true" /></requirements>',
    ),
  ],
  [
    'financetype with nil="true" without a prefix',
    chainXml().replace('<financetype>', '<financetype nil="true">'),
  ],
];

const declared = (encoding: string, body: string) =>
  `<?xml version="1.0" encoding="${encoding}"?>${body}`;

/** Encodings of XML bodies the legacy read, and ones it refused; an error answered in UTF-16. */
const XML_ENCODINGS: Case[] = [
  ...writeAndReadBack(
    encoded(
      'XML body: UTF-16 without a byte order mark, charset utf-16, declared',
      'application/xml; charset=utf-16',
      declared('utf-16', withElement('brokername', '<brokername>José UTF-16</brokername>')),
      'utf16le',
    ),
    ID,
  ),
  ...writeAndReadBack(
    encoded(
      'XML body: UTF-16, charset UTF-16 in capitals',
      'text/xml; charset=UTF-16',
      `\uFEFF${withElement('brokername', '<brokername>Zoë</brokername>')}`,
      'utf16le',
    ),
    ID,
  ),
  ...writeAndReadBack(
    post(
      'XML body: UTF-8 sent as charset iso-8859-1',
      'application/xml; charset=iso-8859-1',
      withElement('brokername', '<brokername>José Latin</brokername>'),
    ),
    ID,
  ),
  post(
    'XML body: ISO-8859-1 declared and sent',
    'application/xml; charset=iso-8859-1',
    declared('iso-8859-1', chainXml()),
  ),
  post('XML body: us-ascii declared', XML, declared('us-ascii', chainXml())),
  post('XML body: UTF8 without the hyphen declared', XML, declared('UTF8', chainXml())),
  encoded(
    'XML body: an invalid body in UTF-16 with charset utf-16, the error in UTF-16',
    'application/xml; charset=utf-16',
    `\uFEFF${xmlOf({ transaction_id: String(ID) })}`,
    'utf16le',
  ),
];

/** A chain write in each era client's format, the brokername naming the client. */
const clientChainXml = (brokername: string) =>
  withElement('brokername', `<brokername>${brokername}</brokername>`);
const clientChainForm = (brokername: string) =>
  formOf({ transaction_id: String(ID), financetype: 'Cash', ...CHAIN, brokername });
const clientChainJson = (brokername: string) =>
  JSON.stringify({ transaction_id: ID, financetype: 'Cash', ...CHAIN, brokername });

const JAVA = {
  Accept: 'text/html, image/gif, image/jpeg, *; q=.2, */*; q=.2',
  'User-Agent': 'Java/1.7.0_80',
};
const PHP_CURL = { Accept: '*/*' };
const PYTHON_REQUESTS = {
  Accept: '*/*',
  'Accept-Encoding': 'gzip, deflate',
  'User-Agent': 'python-requests/2.7.0 CPython/2.7.10 Windows/7',
};
const JQUERY_XML = {
  Accept: 'application/xml, text/xml, */*; q=0.01',
  'X-Requested-With': 'XMLHttpRequest',
};
const JQUERY_JSON = {
  Accept: 'application/json, text/javascript, */*; q=0.01',
  'X-Requested-With': 'XMLHttpRequest',
};
const FIREFOX = {
  Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
  'Accept-Charset': 'ISO-8859-1,utf-8;q=0.7,*;q=0.7',
};
const INVALID_XML = xmlOf({ transaction_id: String(ID) });
const INVALID_FORM = `transaction_id=${ID}`;

const ERA_CLIENTS: Case[] = [
  ...writeAndReadBack(
    post(
      'HttpClient PostAsXmlAsync',
      'application/xml; charset=utf-8',
      clientChainXml('HttpClient'),
    ),
    ID,
  ),
  get('HttpClient ReadAsAsync, Accept application/xml', GET_REQUIREMENTS, { Accept: XML }),
  post('HttpClient PostAsXmlAsync, invalid', 'application/xml; charset=utf-8', INVALID_XML),
  get('WebClient DownloadString, no Accept', GET_REQUIREMENTS),
  post('WebClient UploadString text/xml, invalid', 'text/xml', INVALID_XML),
  ...writeAndReadBack(post('Java HttpURLConnection XML', XML, clientChainXml('Java'), JAVA), ID),
  get('Java HttpURLConnection GET', GET_REQUIREMENTS, JAVA),
  post('Java HttpURLConnection XML, invalid', XML, INVALID_XML, JAVA),
  post('Java HttpURLConnection form, invalid', FORM, INVALID_FORM, JAVA),
  get('Java HttpURLConnection GET, Content-Type text/xml', GET_REQUIREMENTS, {
    ...JAVA,
    'Content-Type': 'text/xml',
  }),
  ...writeAndReadBack(post('PHP curl XML', XML, clientChainXml('PHP curl'), PHP_CURL), ID),
  post('PHP curl XML, invalid', XML, INVALID_XML, PHP_CURL),
  get('PHP curl GET', GET_REQUIREMENTS, PHP_CURL),
  ...writeAndReadBack(
    post('Python requests JSON', 'application/json', clientChainJson('Python'), PYTHON_REQUESTS),
    ID,
  ),
  post('Python requests XML, invalid', XML, INVALID_XML, PYTHON_REQUESTS),
  get('Python requests GET', GET_REQUIREMENTS, PYTHON_REQUESTS),
  ...writeAndReadBack(
    post(
      'jQuery dataType xml, form',
      `${FORM}; charset=UTF-8`,
      clientChainForm('jQuery'),
      JQUERY_XML,
    ),
    ID,
  ),
  post('jQuery dataType xml, form, invalid', `${FORM}; charset=UTF-8`, INVALID_FORM, JQUERY_XML),
  get('jQuery dataType xml GET', GET_REQUIREMENTS, JQUERY_XML),
  get('jQuery dataType json GET', GET_REQUIREMENTS, JQUERY_JSON),
  get('Firefox GET', GET_REQUIREMENTS, FIREFOX),
  post('Firefox form, invalid', FORM, INVALID_FORM, FIREFOX),
  get('Internet Explorer 8 GET', GET_REQUIREMENTS, {
    Accept:
      'image/gif, image/jpeg, image/pjpeg, application/x-ms-application, application/xaml+xml, application/x-ms-xbap, */*',
  }),
  get('Opera GET, Accept-Charset with utf-16', GET_REQUIREMENTS, {
    Accept: 'text/html, application/xml;q=0.9, */*;q=0.1',
    'Accept-Charset': 'iso-8859-1, utf-8, utf-16, *;q=0.1',
  }),
];

/** Accept headers .NET's parser refused whole, and ones it read. */
const ACCEPTS: readonly string[] = [
  'application/xml, foo/bar/baz',
  'application/xml, *; q=.2',
  'application/xml;',
  'application/xml;foo="bar',
  'application/xml;=bar',
  'application/xml, @/json',
  'application/json;q=, application/xml;q=0.9',
  'application/json;q=.2, application/xml;q=0.3',
  'application/xml;q=0.5;q=0.1, application/json;q=0.3',
  'application /xml',
  'application/xml; foo',
  'application/xml;foo="a\\"b, c"',
  'application/json;q=-1, application/xml;q=0.2',
];

/** Accept-Charset headers, on a JSON read. */
const ACCEPT_CHARSETS: readonly string[] = [
  'UTF-16',
  'utf-8;q=0.1, utf-16',
  '*;q=0.5, utf-16;q=0.5',
  '*;q=0.6, utf-16;q=0.5',
  'utf-8;q=0, *',
  'utf-16;q=0',
  'utf-16;q=.5, utf-8;q=0.4',
  'utf-16;q=1.5',
  'utf-16, foo/bar',
  'unicodeFFFE',
  'utf-16be',
  'utf-16;Q=0.5, utf-8;q=0.4',
];

const CHARSET_ANSWERS: Case[] = [
  get('GetRequirements as XML, Accept-Charset utf-16', GET_REQUIREMENTS, {
    Accept: XML,
    'Accept-Charset': 'utf-16',
  }),
  get('GetRequirements as text/json, Accept-Charset utf-16', GET_REQUIREMENTS, {
    Accept: 'text/json',
    'Accept-Charset': 'utf-16',
  }),
  get('GetRequirements, Content-Type application/xml; charset=utf-16', GET_REQUIREMENTS, {
    'Content-Type': 'application/xml; charset=utf-16',
  }),
  get('GetRequirements, Content-Type charset utf-16 and Accept-Charset utf-8', GET_REQUIREMENTS, {
    'Content-Type': 'application/json; charset=utf-16',
    'Accept-Charset': 'utf-8',
  }),
  get('GetRequirements, Content-Type charset "utf-16" quoted', GET_REQUIREMENTS, {
    'Content-Type': 'application/json; charset="utf-16"',
  }),
  post('JSON invalid, Accept-Charset utf-16', 'application/json', `{"transaction_id":${ID}}`, {
    'Accept-Charset': 'utf-16',
  }),
  post('XML invalid, Accept-Charset utf-16', XML, INVALID_XML, { 'Accept-Charset': 'utf-16' }),
  encoded(
    'JSON invalid in UTF-16, charset utf-16',
    'application/json; charset=utf-16',
    `{"transaction_id":${ID}}`,
    'utf16le',
  ),
  post('text/plain, Accept-Charset utf-16', 'text/plain', 'x', { 'Accept-Charset': 'utf-16' }),
  {
    name: 'DELETE GetRequirements, Accept-Charset utf-16',
    request: { method: 'DELETE', path: GET_REQUIREMENTS, headers: { 'Accept-Charset': 'utf-16' } },
  },
  get('an unknown route, Accept-Charset utf-16', '/api/Nothing/Here', {
    'Accept-Charset': 'utf-16',
  }),
];

export const XML_NEGOTIATION_CASES: readonly ParityCase[] = [
  ...inGroup('XML white space and nil, each read back', [
    ...BROKER_NAMES.flatMap(([name, element]) =>
      xmlWrite(`brokername ${name}`, withElement('brokername', element)),
    ),
  ]),
  ...inGroup('XML values DataContractSerializer refused', [
    ...REFUSED.map(([name, body]) => post(`XML body refused: ${name}`, XML, body)),
    readBack('XML body refused, all of them', ID),
  ]),
  ...inGroup('XML values DataContractSerializer read', [
    ...READ.map(([name, body]) => post(`XML body read: ${name}`, XML, body)),
    readBack('XML body read, all of them', ID),
  ]),
  ...inGroup('XML body encodings', XML_ENCODINGS),
  ...inGroup('clients of the legacy era: Accept and Accept-Charset', ERA_CLIENTS),
  ...inGroup('Accept headers .NET could not parse', [
    ...ACCEPTS.map((accept) =>
      get(`GetRequirements, Accept ${accept} (parsed as .NET did)`, GET_REQUIREMENTS, {
        Accept: accept,
      }),
    ),
    get('GetRequirements, Accept unparsable, Content-Type text/xml', GET_REQUIREMENTS, {
      Accept: 'application/json, foo/bar/baz',
      'Content-Type': 'text/xml',
    }),
    post('XML invalid, Accept unparsable', XML, INVALID_XML, { Accept: 'application/json, *' }),
  ]),
  ...inGroup('Accept-Charset', [
    ...ACCEPT_CHARSETS.map((acceptCharset) =>
      get(`GetRequirements, Accept-Charset ${acceptCharset}`, GET_REQUIREMENTS, {
        'Accept-Charset': acceptCharset,
      }),
    ),
    ...CHARSET_ANSWERS,
  ]),
];
