import { RequirementAcquisitionDto } from '../../requirement/dto/requirement-acquisition.dto';
import { RequirementDto } from '../../requirement/dto/requirement.dto';
import { TransactionDto } from '../../transaction/dto/transaction.dto';
import { IMPORT_QUOTAS, MAX_DOCUMENT_DEPTH, REQUEST_QUOTAS } from './wire-codec';
import { MalformedBodyError } from '../model/wire-errors';
import { wireModelOf } from '../model/wire-model';
import { describeValue } from '../model/wire-fields';
import { XmlCodec } from './xml.codec';
import { encodeLocalName } from './xml-names';

const NAMESPACE = 'http://schemas.datacontract.org/2004/07/PropertySales.Models';
const ROOT_ATTRIBUTES = `xmlns:i="http://www.w3.org/2001/XMLSchema-instance" xmlns="${NAMESPACE}"`;
const xml = new XmlCodec(NAMESPACE);
const transaction = wireModelOf(TransactionDto);
const requirement = wireModelOf(RequirementDto);

describe('XmlCodec writing', () => {
  it('writes a Requirement collection as DataContractSerializer does', () => {
    const text = xml.encode(requirement, [
      {
        Acquisition: [
          {
            requirement_id: 11,
            requirement_type_id: 1,
            required: 'Required',
            requirement_description: 'Valid ID & TIN <copy>',
            stamp: new Date('2026-03-01T10:11:12.500Z'),
            submitted: true,
          },
        ],
        requirement_type_id: 1,
        description: 'Cash',
        stamp: null,
      },
      { Acquisition: [], requirement_type_id: 2, description: 'Bank', stamp: null },
    ]);
    expect(text).toBe(
      `<ArrayOfRequirement ${ROOT_ATTRIBUTES}>` +
        '<Requirement><description>Cash</description><requirement_type_id>1</requirement_type_id>' +
        '<stamp i:nil="true" /><Acquisition><RequirementAcquisition><required>Required</required>' +
        '<requirement_description>Valid ID &amp; TIN &lt;copy&gt;</requirement_description>' +
        '<requirement_id>11</requirement_id><requirement_type_id>1</requirement_type_id>' +
        '<stamp>2026-03-01T10:11:12.5+00:00</stamp><submitted>true</submitted></RequirementAcquisition>' +
        '</Acquisition></Requirement>' +
        '<Requirement><description>Bank</description><requirement_type_id>2</requirement_type_id>' +
        '<stamp i:nil="true" /><Acquisition /></Requirement>' +
        '</ArrayOfRequirement>',
    );
  });

  it('writes an empty collection as an empty root, with no XML declaration', () => {
    expect(xml.encode(requirement, [])).toBe(`<ArrayOfRequirement ${ROOT_ATTRIBUTES} />`);
  });

  it('writes Transaction members in ordinal order, TotalPayments first, every member present', () => {
    const text = xml.encode(transaction, {
      financetype: 'Cash',
      TotalPayments: 1500.25,
      requirements: [],
    });
    const names = [...text.matchAll(/<(\w+)[ >/]/g)].map((match) => match[1]).slice(1);
    expect(names).toEqual(
      transaction.members.map((member) => member.name).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
    );
    expect(names[0]).toBe('TotalPayments');
    expect(text).toContain('<TotalPayments>1500.25</TotalPayments>');
    expect(text).toContain('<coborrowername i:nil="true" />');
    expect(text).toContain('<requirements />');
    expect(text.startsWith(`<Transaction ${ROOT_ATTRIBUTES}>`)).toBe(true);
  });

  it('writes legacy errors without a namespace, ModelState keys encoded as XmlConvert does', () => {
    const text = xml.encodeError({
      status: 400,
      code: 'invalid_request',
      title: 'Invalid request',
      message: 'The request is invalid.',
      modelState: {
        'transaction.financetype': ['The financetype field is required.'],
        'transaction.requirements[0].requirement_id': [
          "The value 'x' is not valid for requirement_id.",
        ],
      },
    });
    expect(text).toBe(
      '<Error><Message>The request is invalid.</Message><ModelState>' +
        '<transaction.financetype>The financetype field is required.</transaction.financetype>' +
        "<transaction.requirements_x005B_0_x005D_.requirement_id>The value 'x' is not valid for requirement_id." +
        '</transaction.requirements_x005B_0_x005D_.requirement_id></ModelState></Error>',
    );
  });

  it('keeps an error well-formed when its message quotes characters XML cannot carry', () => {
    const message = `The value '${describeValue('a\u0000b\u0001\ud800')}' is not valid for brokerid.`;
    expect(message).toBe("The value 'a\\u0000b\\u0001\ufffd' is not valid for brokerid.");
    const text = xml.encodeError({
      status: 400,
      code: 'invalid_request',
      title: 'Invalid request',
      message: 'x\u0002y\udc00',
    });
    expect(text).toBe('<Error><Message>x\ufffdy\ufffd</Message></Error>');
  });

  it.each([
    ['transaction.requirements[12].stamp', 'transaction.requirements_x005B_12_x005D_.stamp'],
    ['1st', '_x0031_st'],
    ['a b:c', 'a_x0020_b_x003A_c'],
    ['_x0041_', '_x005F_x0041_'],
  ])('encodes the local name %s as %s', (name, encoded) => {
    expect(encodeLocalName(name)).toBe(encoded);
  });
});

describe('XmlCodec reading', () => {
  const decode = (text: string) => xml.decode(text, transaction);

  it('reads any namespace or none, children in any order, nil as null, unknown elements ignored', () => {
    expect(
      decode(
        '<Transaction xmlns:x="http://www.w3.org/2001/XMLSchema-instance" xmlns="urn:other">' +
          '<unknown>1</unknown><financetype>Cash</financetype><brokername x:nil="true"/>' +
          '<brokerid> 12 </brokerid><requirements><RequirementAcquisition><requirement_id>5</requirement_id>' +
          '</RequirementAcquisition></requirements></Transaction>',
      ),
    ).toEqual({
      financetype: 'Cash',
      brokername: null,
      brokerid: 12,
      requirements: [{ requirement_id: 5 }],
    });
    expect(decode('<Transaction><financetype>Cash</financetype></Transaction>')).toEqual({
      financetype: 'Cash',
    });
  });

  // Each element below was sent to the legacy service (its twin), and the value is what it stored.
  const XSI = 'http://www.w3.org/2001/XMLSchema-instance';
  const brokername = (element: string) =>
    decode(`<Transaction xmlns:i="${XSI}">${element}<financetype>Cash</financetype></Transaction>`)
      .brokername;

  it.each([
    ['<brokername xml:space="preserve">   </brokername>', '   '],
    ['<brokername xmlns:x="urn:x"> \t </brokername>', ' \t '],
    ['<brokername note="x">  </brokername>', '  '],
    ['<brokername i:nil="false">  </brokername>', '  '],
    [
      '<brokername i:type="x:string" xmlns:x="http://www.w3.org/2001/XMLSchema">  </brokername>',
      '  ',
    ],
    ['<brokername>   </brokername>', '   '],
    ['<brokername>&#32;&#10;</brokername>', ' \n'],
    ['<brokername>a\r\nb</brokername>', 'a\nb'],
    ['<brokername>a&#13;b</brokername>', 'a\rb'],
    ['<brokername> <!-- c --> </brokername>', '  '],
    ['<brokername>  <![CDATA[ a ]]>  </brokername>', '   a   '],
    ['<brokername />', ''],
    ['<brokername></brokername>', ''],
    ['<brokername nil="true">NN</brokername>', 'NN'],
    ['<brokername xmlns:i="urn:other" i:nil="true">NN</brokername>', 'NN'],
    ['<brokername x:nil="true">NN</brokername>', 'NN'],
    ['<brokername i:nil="0">NN</brokername>', 'NN'],
    [`<brokername xmlns:x="${XSI}" x:nil="true">NN</brokername>`, null],
    ['<brokername i:nil=" true ">NN</brokername>', null],
    ['<brokername i:nil="1">NN</brokername>', null],
  ])('reads %j as %j', (element, value) => {
    expect(brokername(element)).toBe(value);
  });

  it('resolves a nil prefix in the scope of the element, not of a sibling or a closed one', () => {
    expect(
      decode(
        `<Transaction><a xmlns:x="${XSI}"><b x:nil="true" /></a>` +
          '<brokername x:nil="true">NN</brokername><financetype>Cash</financetype></Transaction>',
      ),
    ).toEqual({ brokername: 'NN', financetype: 'Cash' });
    expect(
      decode(
        `<Transaction xmlns:x="${XSI}"><brokername x:nil="true">NN</brokername>` +
          '<requirements xmlns:x="urn:other"><RequirementAcquisition x:nil="true" /></requirements>' +
          '<financetype>Cash</financetype></Transaction>',
      ),
    ).toEqual({ brokername: null, requirements: [{}], financetype: 'Cash' });
  });

  it.each(['TRUE', 'yes', '', 'True'])('refuses i:nil="%s", which is no xsd:boolean', (nil) => {
    expect(() => brokername(`<brokername i:nil="${nil}">NN</brokername>`)).toThrow(
      MalformedBodyError,
    );
    expect(() =>
      decode(
        `<Transaction xmlns:i="${XSI}"><financetype>Cash</financetype><requirements>` +
          `<RequirementAcquisition i:nil="${nil}" /></requirements></Transaction>`,
      ),
    ).toThrow(MalformedBodyError);
  });

  it('reads a character reference to any code point, as the legacy did, and no further', () => {
    expect(decode('<Transaction><brokername>a&#1;b&#0;c&#x1F;</brokername></Transaction>')).toEqual(
      { brokername: 'a\u0001b\u0000c\u001f' },
    );
    expect(() => decode('<Transaction><brokername>&#x110000;</brokername></Transaction>')).toThrow(
      /not well-formed XML/,
    );
  });

  it('reads member names case-sensitively', () => {
    expect(decode('<Transaction><FinanceType>Cash</FinanceType></Transaction>')).toEqual({});
  });

  it('refuses the whole record, as DataContractSerializer did, when a value cannot be read', () => {
    const refusal = (text: string) => {
      try {
        decode(text);
      } catch (error) {
        return (error as MalformedBodyError).reasons;
      }
      throw new Error('decoded');
    };
    expect(refusal('<Transaction><brokerid><a/></brokerid></Transaction>')).toEqual([
      "The element 'brokerid' is not valid for brokerid.",
    ]);
    expect(
      refusal(
        '<Transaction><loanterm>5.0</loanterm><locked>True</locked><requirements>' +
          '<RequirementAcquisition><stamp>01/02/2024</stamp></RequirementAcquisition></requirements></Transaction>',
      ),
    ).toEqual([
      "The value '5.0' is not valid for loanterm.",
      "The value '01/02/2024' is not valid for stamp.",
      "The value 'True' is not valid for locked.",
    ]);
  });

  it.each([
    [
      'a DOCTYPE with entities',
      '<!DOCTYPE Transaction [<!ENTITY x "yyyy">]><Transaction>&x;</Transaction>',
    ],
    ['an external entity', '<!DOCTYPE Transaction SYSTEM "file:///etc/passwd"><Transaction/>'],
    ['an undeclared entity', '<Transaction><financetype>&x;</financetype></Transaction>'],
    ['a second root', '<Transaction/><Transaction/>'],
    ['trailing text', '<Transaction/>garbage'],
    ['no root', '   '],
    ['an empty body', ''],
    ['an unclosed root', '<Transaction>'],
    ['another root', '<Requirement/>'],
    [
      'nesting past the limit',
      `${'<a>'.repeat(MAX_DOCUMENT_DEPTH + 1)}${'</a>'.repeat(MAX_DOCUMENT_DEPTH + 1)}`,
    ],
  ])('refuses %s', (_, text) => {
    expect(() => decode(text)).toThrow(MalformedBodyError);
  });

  it('refuses a deep document quickly', () => {
    const depth = 200_000;
    const started = Date.now();
    expect(() => decode(`${'<a>'.repeat(depth)}${'</a>'.repeat(depth)}`)).toThrow(
      MalformedBodyError,
    );
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('treats tags named like Object.prototype members, or `_`, as unknown elements', () => {
    const bound = decode(
      '<Transaction><__proto__><polluted>yes</polluted></__proto__><constructor>1</constructor>' +
        '<toString>x</toString><hasOwnProperty>y</hasOwnProperty><_>z</_><financetype>Cash</financetype></Transaction>',
    );
    expect(bound).toEqual({ financetype: 'Cash' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('reads ArrayOf documents for import', () => {
    const items = xml.decodeList(
      `<ArrayOfRequirementAcquisition ${ROOT_ATTRIBUTES}><RequirementAcquisition><requirement_id>1</requirement_id>` +
        '</RequirementAcquisition><RequirementAcquisition><requirement_id>2</requirement_id></RequirementAcquisition>' +
        '</ArrayOfRequirementAcquisition>',
      wireModelOf(RequirementAcquisitionDto),
    );
    expect(items).toEqual([{ requirement_id: 1 }, { requirement_id: 2 }]);
    expect(() => xml.decodeList('<Transaction/>', transaction)).toThrow(MalformedBodyError);
  });
});

describe('XmlCodec quotas', () => {
  const { maxElements, maxAttributes, maxNameLength } = REQUEST_QUOTAS;
  const decode = (text: string) => xml.decode(text, transaction);
  const root = (children: string, attributes = '') =>
    `<Transaction${attributes}>${children}</Transaction>`;
  const attributes = (count: number) =>
    Array.from({ length: count }, (_, n) => ` a${n}="${n}"`).join('');

  it.each([
    [
      'elements',
      root('<a/>'.repeat(maxElements - 1)),
      root('<a/>'.repeat(maxElements)),
      `holds more than ${maxElements} elements`,
    ],
    [
      'attributes on one element',
      root('<a/>', attributes(maxAttributes)),
      root(`<a${attributes(maxAttributes + 1)}/>`),
      `has an element with more than ${maxAttributes} attributes`,
    ],
    [
      'characters in an element name',
      root(`<${'a'.repeat(maxNameLength)}/>`),
      root(`<${'a'.repeat(maxNameLength + 1)}/>`),
      `has a name longer than ${maxNameLength} characters`,
    ],
    [
      'characters in an attribute name',
      root('', ` ${'a'.repeat(maxNameLength)}="1"`),
      root('', ` ${'a'.repeat(maxNameLength + 1)}="1"`),
      `has a name longer than ${maxNameLength} characters`,
    ],
    [
      'levels of nesting',
      `${'<a>'.repeat(MAX_DOCUMENT_DEPTH)}${'</a>'.repeat(MAX_DOCUMENT_DEPTH)}`,
      `${'<a>'.repeat(MAX_DOCUMENT_DEPTH + 1)}${'</a>'.repeat(MAX_DOCUMENT_DEPTH + 1)}`,
      `is nested deeper than ${MAX_DOCUMENT_DEPTH} levels`,
    ],
  ])('reads a body at its quota of %s and refuses one past it', (_, atQuota, pastQuota, reason) => {
    // The root element counts towards the quotas; decodePlain reads any root.
    expect(() => xml.decodePlain(atQuota)).not.toThrow();
    expect(() => decode(pastQuota)).toThrow(new MalformedBodyError(`The request body ${reason}.`));
  });

  it.each([
    ['an attribute value', root('', ` a="${'x'.repeat(200_000)}"`)],
    ['a comment', root(`<!--${'x'.repeat(200_000)}-->`)],
  ])('reads past %s of 200,000 characters, as the legacy read any length', (_, body) => {
    expect(decode(body)).toEqual({});
  });

  it('reads text and CDATA past 65,536 characters whole', () => {
    const text = 'x'.repeat(200_000);
    expect(decode(root(`<financetype>${text}</financetype>`))).toEqual({ financetype: text });
    expect(decode(root(`<financetype><![CDATA[${text}]]></financetype>`))).toEqual({
      financetype: text,
    });
  });

  it('refuses a body past a quota where it passes it, before reading the rest', () => {
    const pastQuota = root('<a/>'.repeat(maxElements)).replace('</Transaction>', '');
    expect(() => decode(`${pastQuota}<unclosed`)).toThrow(/more than \d+ elements/);
  });

  it('reads import documents past the request quotas, with the same limit on nesting', () => {
    const acquisition = wireModelOf(RequirementAcquisitionDto);
    const count = maxElements + 1;
    const items = xml.decodeList(
      `<ArrayOfRequirementAcquisition>${'<RequirementAcquisition/>'.repeat(count)}</ArrayOfRequirementAcquisition>`,
      acquisition,
    );
    expect(items).toHaveLength(count);
    expect(IMPORT_QUOTAS.maxDepth).toBe(MAX_DOCUMENT_DEPTH);
  });
});

describe('XmlCodec.decodePlain', () => {
  it('reads children as members: text, i:nil as null, records, repeated names as lists', () => {
    expect(
      xml.decodePlain(
        `<CreateCatDto xmlns="urn:any" xmlns:i="http://www.w3.org/2001/XMLSchema-instance" kind="x">` +
          '<name a="ignored">Tom</name><age>3</age><owner i:nil="true"/><toy><name>ball</name></toy>' +
          '<tags>a</tags><tags>b</tags><empty/></CreateCatDto>',
        'CreateCatDto',
      ),
    ).toEqual({
      name: 'Tom',
      age: '3',
      owner: null,
      toy: { name: 'ball' },
      tags: ['a', 'b'],
      empty: '',
    });
  });

  it('refuses another root, and adds nothing from an element named __proto__', () => {
    expect(() => xml.decodePlain('<Dog/>', 'CreateCatDto')).toThrow(
      new MalformedBodyError('The root element must be CreateCatDto.'),
    );
    const plain = xml.decodePlain(
      '<CreateCatDto><__proto__><polluted>yes</polluted></__proto__><n>1</n></CreateCatDto>',
      'CreateCatDto',
    );
    expect(plain).toEqual({ n: '1' });
    expect(Object.getPrototypeOf(plain)).toBe(Object.prototype);
  });
});
