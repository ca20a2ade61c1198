import fc from 'fast-check';
import { TransactionDto } from '../../src/transaction/dto/transaction.dto';
import { formatWireDate, wireModelOf, XML_SCHEMA_INSTANCE } from '../../src/wire';
import { encodeForm, encodeXml, type FormListStyle } from './client-encoding';
import { validRecord } from './wire-arbitraries';

/*
 * Request bodies as a client might send them, well-formed or not: valid Transactions mutated as
 * members, as text and as bytes; random text and bytes; deep nesting; prototype-polluting members;
 * documents of other shapes; a body over the limit. The fuzzing suite sends them to the service, and
 * the wire validation's unit spec reads them: one corpus for both.
 */

const TRANSACTION_MODEL = wireModelOf(TransactionDto);
export const DATA_CONTRACT_NAMESPACE =
  'http://schemas.datacontract.org/2004/07/PropertySales.Models';

export type BodyFormat = 'json' | 'xml' | 'form';

/** What the bodies are made for. */
export interface BodySettings {
  /** Ids of stored transactions, which a mutated record names every other time. */
  readonly transactionIds: readonly number[];
  /** The service's body limit: one body of each format is just over it. */
  readonly bodyLimitBytes: number;
}

/** A body sent as bytes that need not be UTF-8; a counterexample shows it as text with `\xNN` escapes. */
export class RawBytes {
  constructor(readonly bytes: Uint8Array) {}

  [fc.toStringMethod](): string {
    const text = [...this.bytes]
      .map((byte) =>
        byte >= 0x20 && byte < 0x7f && byte !== 0x5c && byte !== 0x60
          ? String.fromCharCode(byte)
          : `\\x${byte.toString(16).padStart(2, '0')}`,
      )
      .join('');
    return `bytes\`${text}\``;
  }
}

/** What is sent of a body: its UTF-8 text, or its bytes; nothing at all for `undefined`. */
export const bodyBytes = (body: string | RawBytes | undefined): Buffer =>
  body === undefined
    ? Buffer.alloc(0)
    : typeof body === 'string'
      ? Buffer.from(body, 'utf8')
      : Buffer.from(body.bytes);

// prettier-ignore
const ODD_MEMBER_NAMES = [
  'FinanceType', 'FINANCETYPE', 'transaction_ID', 'requirements[0]',
  'requirements[0][requirement_id]', 'requirements.0', '', ' ', 'a:b', 'i:nil', 'xmlns',
  'financetype ', '1', 'requirements[]',
];
// prettier-ignore
const POLLUTING_VALUES: unknown[] = [
  JSON.parse('{"polluted":"yes"}'), JSON.parse('{"prototype":{"polluted":"yes"}}'),
  JSON.parse('{"__proto__":{"polluted":"yes"}}'), JSON.parse('[{"__proto__":{"polluted":"yes"}}]'),
];
// prettier-ignore
const ODD_VALUES: unknown[] = [
  '', ' ', 'NaN', 'Infinity', '1e400', '-1', '2147483648', '-2147483649', 'true', 'TRUE', 'yes',
  '1.00001', '0x1F', '2026-13-45', '9999-12-31T23:59:59.999-14:00', '0000-01-01T00:00:00Z', '1e-7',
  '١٢', '\u0000', '\ud800', -0, 1e308, -1e-308, 2 ** 53 + 1, 0.1 + 0.2, 100000000.00001, [], {},
  [null], [[]], [1, 2],
];
// prettier-ignore
const INSERTIONS = [
  '<', '>', '&', '&amp;', '&#0;', '&#xD800;', '&lt', '<!--', '-->', '<![CDATA[', ']]>',
  '<?xml version="1.0"?>', '<!DOCTYPE x>', '<!ENTITY e "x">', '&e;', '"', "'", '{', '}', '[', ']',
  ',', ':', '\\', '\\u0000', '\\ud800', '%', '%FF', '=', '+', '\u0000', '\ufeff', '\ufffe',
  '\ud800', 'i:nil="true"', '</Transaction>', '[0]', '&&',
];
// prettier-ignore
const FOREIGN_ROOTS = [
  'Transaction', 'transaction', 'Requirement', 'ArrayOfTransaction', 'Error', 'x:Transaction',
];

export type CaseStyle = 'as-is' | 'lower' | 'upper' | 'mixed';
export const caseStyle = fc.constantFrom<CaseStyle>('as-is', 'lower', 'upper', 'mixed');
export function recase(text: string, style: CaseStyle): string {
  if (style === 'lower') return text.toLowerCase();
  if (style === 'upper') return text.toUpperCase();
  if (style === 'mixed')
    return [...text]
      .map((char, index) => (index % 2 ? char.toUpperCase() : char.toLowerCase()))
      .join('');
  return text;
}

// prettier-ignore
const PROTOTYPE_NAMES = [
  '__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', '__defineGetter__', '__lookupSetter__', 'then', 'length', '_', '$',
];
export const memberName = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...PROTOTYPE_NAMES) },
  fc.constantFrom(...ODD_MEMBER_NAMES),
  fc.string({ maxLength: 12 }),
);

const pollutingValue = fc.constantFrom(...POLLUTING_VALUES);
const oddValue = fc.constantFrom(...ODD_VALUES);
export const anyValue = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: oddValue },
  pollutingValue,
  fc.string({ unit: 'binary', maxLength: 30 }),
);

export type Entry = [string, unknown];
export type Edit =
  | { kind: 'rename'; at: number; name: string }
  | { kind: 'replace'; at: number; value: unknown }
  | { kind: 'remove'; at: number }
  | { kind: 'add'; name: string; value: unknown }
  | { kind: 'duplicate'; at: number };

export const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant('rename' as const), at: fc.nat(), name: memberName }),
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), value: anyValue }),
  },
  fc.record({ kind: fc.constant('remove' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('add' as const),
    name: memberName,
    value: fc.oneof(anyValue, pollutingValue),
  }),
  fc.record({ kind: fc.constant('duplicate' as const), at: fc.nat() }),
);

function applyEdits(entries: Entry[], edits: readonly Edit[]): Entry[] {
  const out = [...entries];
  for (const change of edits) {
    if (change.kind === 'add') {
      out.push([change.name, change.value]);
      continue;
    }
    if (out.length === 0) continue;
    const at = change.at % out.length;
    if (change.kind === 'rename') out[at] = [change.name, out[at][1]];
    else if (change.kind === 'replace') out[at] = [out[at][0], change.value];
    else if (change.kind === 'remove') out.splice(at, 1);
    else out.splice(at, 0, out[at]);
  }
  return out;
}

function scalarText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return formatWireDate(value);
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value) ?? '';
}

/** JSON, XML and form writers that take anything, duplicate and prototype-named members included. */
export function jsonOfEntries(entries: readonly Entry[]): string {
  return `{${entries.map(([name, value]) => `${JSON.stringify(name)}:${JSON.stringify(value) ?? 'null'}`).join(',')}}`;
}

const escapeXmlText = (text: string) =>
  text.replace(
    /[&<>\r]/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '\r': '&#xD;' })[char]!,
  );

function xmlElementOf(name: string, value: unknown, itemName: string): string {
  if (value === null || value === undefined) return `<${name} i:nil="true"/>`;
  if (Array.isArray(value))
    return `<${name}>${value.map((item) => xmlElementOf(itemName, item, 'item')).join('')}</${name}>`;
  if (typeof value === 'object' && !(value instanceof Date))
    return `<${name}>${Object.entries(value)
      .map(([child, inner]) => xmlElementOf(child, inner, 'item'))
      .join('')}</${name}>`;
  return `<${name}>${escapeXmlText(scalarText(value))}</${name}>`;
}

export function xmlOfEntries(entries: readonly Entry[]): string {
  const children = entries.map(([name, value]) =>
    xmlElementOf(name, value, 'RequirementAcquisition'),
  );
  return `<Transaction xmlns:i="${XML_SCHEMA_INSTANCE}" xmlns="${DATA_CONTRACT_NAMESPACE}">${children.join('')}</Transaction>`;
}

export function formOfEntries(entries: readonly Entry[], style: FormListStyle): string {
  const form = new URLSearchParams();
  const add = (key: string, value: unknown): void => {
    if (Array.isArray(value)) {
      value.forEach((item, index) => {
        if (
          item !== null &&
          typeof item === 'object' &&
          !Array.isArray(item) &&
          !(item instanceof Date)
        ) {
          for (const [member, inner] of Object.entries(item))
            add(
              style === 'brackets' ? `${key}[${index}][${member}]` : `${key}[${index}].${member}`,
              inner,
            );
        } else add(`${key}[${index}]`, item);
      });
    } else if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
      for (const [member, inner] of Object.entries(value)) add(`${key}[${member}]`, inner);
    } else form.append(key, scalarText(value));
  };
  for (const [name, value] of entries) add(name, value);
  return form.toString();
}

type TextEdit =
  | { kind: 'truncate'; at: number }
  | { kind: 'insert'; at: number; text: string }
  | { kind: 'replace'; at: number; length: number; text: string }
  | { kind: 'repeat'; at: number; length: number };

const insertion = fc.oneof(
  fc.constantFrom(...INSERTIONS),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
);
const textEdit: fc.Arbitrary<TextEdit> = fc.oneof(
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), text: insertion }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('replace' as const),
      at: fc.nat(),
      length: fc.nat({ max: 40 }),
      text: insertion,
    }),
  },
  fc.record({ kind: fc.constant('repeat' as const), at: fc.nat(), length: fc.nat({ max: 200 }) }),
);

function applyTextEdits(text: string, edits: readonly TextEdit[]): string {
  let out = text;
  for (const change of edits) {
    const at = change.at % (out.length + 1);
    if (change.kind === 'truncate') out = out.slice(0, at);
    else if (change.kind === 'insert') out = out.slice(0, at) + change.text + out.slice(at);
    else if (change.kind === 'replace')
      out = out.slice(0, at) + change.text + out.slice(at + change.length);
    else
      out =
        out.slice(0, at + change.length) +
        out.slice(at, at + change.length) +
        out.slice(at + change.length);
  }
  return out;
}

/** Bytes overwritten after encoding: invalid UTF-8, stray NULs. */
const byteEdit = fc.record({ at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) });

/** A valid Transaction, often naming a seeded transaction, then mutated as members, as text and as bytes. */
export const mutatedRecord = (
  format: BodyFormat,
  transactionIds: readonly number[],
): fc.Arbitrary<string | RawBytes> =>
  fc
    .record({
      record: validRecord(TransactionDto),
      transactionId: fc.option(fc.constantFrom(...transactionIds), { freq: 2 }),
      edits: fc.array(edit, { maxLength: 4 }),
      textEdits: fc.oneof(
        { weight: 2, arbitrary: fc.constant([]) },
        fc.array(textEdit, { minLength: 1, maxLength: 3 }),
      ),
      byteEdits: fc.oneof(
        { weight: 4, arbitrary: fc.constant([]) },
        fc.array(byteEdit, { minLength: 1, maxLength: 3 }),
      ),
      style: fc.constantFrom<FormListStyle>('brackets', 'dots'),
    })
    .map(({ record, transactionId, edits, textEdits, byteEdits, style }) => {
      const base = transactionId === null ? record : { ...record, transaction_id: transactionId };
      let text: string;
      if (edits.length === 0) {
        text =
          format === 'json'
            ? JSON.stringify(base)
            : format === 'xml'
              ? encodeXml(base, TRANSACTION_MODEL)
              : encodeForm(base, TRANSACTION_MODEL, style);
      } else {
        const entries = applyEdits(Object.entries(base), edits);
        text =
          format === 'json'
            ? jsonOfEntries(entries)
            : format === 'xml'
              ? xmlOfEntries(entries)
              : formOfEntries(entries, style);
      }
      text = applyTextEdits(text, textEdits);
      if (byteEdits.length === 0) return text;
      const bytes = Buffer.from(text);
      for (const { at, byte } of byteEdits) if (bytes.length > 0) bytes[at % bytes.length] = byte;
      return new RawBytes(bytes);
    });

/** Nesting far past any member, within the body limit. */
export const deepBody = (format: BodyFormat): fc.Arbitrary<string> =>
  fc
    .record({ depth: fc.integer({ min: 1, max: 20_000 }), shape: fc.constantFrom(0, 1, 2) })
    .map(({ depth, shape }) => {
      const levels = (bytesPerLevel: number) => Math.min(depth, Math.floor(60_000 / bytesPerLevel));
      if (format === 'json') {
        if (shape === 0) {
          const n = levels(2);
          return `{"transaction_id":1001,"financetype":"Cash","requirements":${'['.repeat(n)}${']'.repeat(n)}}`;
        }
        if (shape === 1) return `${'['.repeat(levels(2))}${']'.repeat(levels(2))}`;
        const n = levels(6);
        return `{"financetype":${'{"a":'.repeat(n)}1${'}'.repeat(n)}}`;
      }
      if (format === 'xml') {
        if (shape === 0) {
          const n = levels(7);
          return `<Transaction><financetype>Cash</financetype>${'<a>'.repeat(n)}${'</a>'.repeat(n)}</Transaction>`;
        }
        if (shape === 1) {
          const n = levels(50);
          return `<Transaction><requirements>${'<RequirementAcquisition>'.repeat(n)}${'</RequirementAcquisition>'.repeat(n)}</requirements></Transaction>`;
        }
        const n = levels(28);
        return `${'<Transaction>'.repeat(n)}${'</Transaction>'.repeat(n)}`;
      }
      if (shape === 0) return `financetype=Cash&requirements${'[0]'.repeat(levels(3))}=1`;
      if (shape === 1) return `requirements[0]${'[a]'.repeat(levels(3))}=1`;
      return Array.from({ length: levels(8) }, (_, index) => `k${index}=1`).join('&');
    });

export const POLLUTING_BODIES: Record<BodyFormat, string[]> = {
  json: [
    '{"__proto__":{"polluted":"yes"},"transaction_id":1001,"financetype":"Cash"}',
    '{"constructor":{"prototype":{"polluted":"yes"}},"transaction_id":1001,"financetype":"Cash"}',
    '{"requirements":[{"__proto__":{"polluted":"yes"}}],"transaction_id":1001,"financetype":"Cash"}',
    '{"requirements":{"__proto__":[1]},"financetype":"x"}',
    '{"requirements":{"length":1000000000},"financetype":"x"}',
    '{"__proto__":null,"transaction_id":1002,"financetype":"Cash"}',
    '{"brokername":{"toString":"x"},"transaction_id":1002,"financetype":"Cash"}',
  ],
  xml: [
    '<Transaction><__proto__><polluted>yes</polluted></__proto__><transaction_id>1001</transaction_id><financetype>Cash</financetype></Transaction>',
    '<Transaction><constructor><prototype><polluted>yes</polluted></prototype></constructor><financetype>Cash</financetype></Transaction>',
    '<Transaction><requirements><__proto__><polluted>yes</polluted></__proto__><RequirementAcquisition><__proto__>x</__proto__></RequirementAcquisition></requirements><financetype>Cash</financetype></Transaction>',
    '<Transaction xmlns:__proto__="urn:x" __proto__:polluted="yes" $="x" _="y"><_>text</_><$><polluted>yes</polluted></$><financetype>Cash</financetype></Transaction>',
    '<Transaction><toString>1</toString><hasOwnProperty>1</hasOwnProperty><transaction_id>1002</transaction_id><financetype>Cash</financetype></Transaction>',
    '<__proto__><polluted>yes</polluted></__proto__>',
  ],
  form: [
    '__proto__[polluted]=yes&transaction_id=1001&financetype=Cash',
    'constructor[prototype][polluted]=yes&transaction_id=1001&financetype=Cash',
    '__proto__.polluted=yes&financetype=Cash',
    'requirements[0][__proto__]=yes&requirements[__proto__][polluted]=yes&financetype=Cash',
    'requirements[0].__proto__=x&requirements[0][polluted]=yes&transaction_id=1002&financetype=Cash',
    'toString=1&valueOf=2&hasOwnProperty=3&transaction_id=1002&financetype=Cash',
    'requirements[999999][requirement_id]=1&transaction_id=1002&financetype=Cash',
    'requirements[0][requirement_id]=1&requirements[1000000][x]=1&transaction_id=1002&financetype=Cash',
  ],
};

/** A document of some other shape: arbitrary JSON, foreign XML, arbitrary form keys. */
export const foreignDocument = (format: BodyFormat): fc.Arbitrary<string> => {
  if (format === 'json') return fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value));
  if (format === 'xml')
    return fc
      .tuple(
        fc.constantFrom(...FOREIGN_ROOTS),
        fc.array(
          fc.tuple(
            fc.oneof(memberName, fc.constantFrom(...TRANSACTION_MODEL.members.map((m) => m.name))),
            anyValue,
          ),
          {
            maxLength: 6,
          },
        ),
      )
      .map(
        ([root, children]) =>
          `<${root}>${children.map(([name, value]) => xmlElementOf(name, value, 'RequirementAcquisition')).join('')}</${root}>`,
      );
  return fc
    .array(
      fc.tuple(
        fc.oneof(
          memberName,
          fc
            .constantFrom(...TRANSACTION_MODEL.members.map((m) => m.name))
            .chain((name) => caseStyle.map((style) => recase(name, style))),
        ),
        fc.string({ maxLength: 20 }),
      ),
      { maxLength: 8 },
    )
    .map((pairs) => new URLSearchParams(pairs).toString());
};

export const oversizeBody = (format: BodyFormat, bodyLimitBytes: number): string => {
  const padding = 'x'.repeat(bodyLimitBytes + 1000);
  if (format === 'json') return `{"transaction_id":1001,"financetype":"${padding}"}`;
  if (format === 'xml') return `<Transaction><financetype>${padding}</financetype></Transaction>`;
  return `transaction_id=1001&financetype=${padding}`;
};

/** Any body of a format: mostly mutated records, weighted towards what breaks readers. */
export const bodyFor = (
  format: BodyFormat,
  { transactionIds, bodyLimitBytes }: BodySettings,
): fc.Arbitrary<string | RawBytes | undefined> =>
  fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom<string | undefined>(undefined, '') },
    { weight: 12, arbitrary: mutatedRecord(format, transactionIds) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 300 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 200 }) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((bytes) => new RawBytes(bytes)) },
    { weight: 2, arbitrary: deepBody(format) },
    { weight: 2, arbitrary: fc.constantFrom(...POLLUTING_BODIES[format]) },
    { weight: 2, arbitrary: foreignDocument(format) },
    { weight: 1, arbitrary: fc.constant(oversizeBody(format, bodyLimitBytes)) },
  );
