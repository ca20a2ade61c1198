import { SaxesParser } from 'saxes';
import { type BoundRecord, type WireModel, wireModelOf } from '../model/wire-model';
import {
  type DocumentQuotas,
  IMPORT_QUOTAS,
  REQUEST_QUOTAS,
  type PlainRecord,
  type WireErrorBody,
  type WireReader,
  type WireWriter,
} from './wire-codec';
import { formatWireDate } from '../values/wire-date';
import { UnreadableValue } from '../values/unreadable-value';
import { XML_DIALECT } from './wire-dialects';
import { MalformedBodyError } from '../model/wire-errors';
import {
  bindListNow,
  bindWithListsInSteps,
  type ListBinder,
  runSteps,
  type Steps,
} from '../model/steps';
import { describeValue } from '../model/wire-fields';
import { encodeLocalName } from './xml-names';
import { trimXmlSpace } from '../values/white-space';

export const XML_MEDIA_TYPES = ['application/xml', 'text/xml'] as const;
export const XML_SCHEMA_INSTANCE = 'http://www.w3.org/2001/XMLSchema-instance';

/**
 * Whether an element is nil, as DataContractSerializer read its `nil` attribute in the XML Schema
 * instance namespace: `true` or `1`; `false`, `0` or no such attribute is not; any other value (`TRUE`,
 * `yes`) failed the read, and is kept here to be reported.
 */
type Nil = boolean | { readonly unreadable: string };

/** One parsed element: its text, whether it is nil, and its child elements in order. */
interface XmlElement {
  readonly name: string;
  readonly text: string;
  readonly nil: Nil;
  readonly children: readonly XmlElement[];
}

/** A `nil` attribute as written, its prefix resolved once the element's declarations are all read. */
interface NilAttribute {
  readonly prefix: string;
  readonly value: string;
}

/** An element being read, which becomes the XmlElement itself once closed. */
interface OpenElement {
  readonly name: string;
  text: string;
  attributes: number;
  nil: Nil;
  nilAttribute?: NilAttribute;
  /** The namespace prefixes it declares, when it declares any. */
  prefixes?: Map<string, string>;
  /** Whether its declarations are in scope, which they are from its first child on. */
  inScope?: boolean;
  children?: XmlElement[];
}

/** The children of every element without any: elements are only ever added to open ones. */
const NO_CHILDREN: XmlElement[] = [];

const localName = (name: string) => name.slice(name.indexOf(':') + 1);
/** Text is handed to the parser in slices: the points where reading may pause. */
const WRITE_SLICE = 16 * 1024;
const BLANK = /^\s*$/;
const XSD_BOOLEAN: Readonly<Record<string, boolean>> = {
  true: true,
  '1': true,
  false: false,
  '0': false,
};

/** An `i:nil` value read as XmlConvert.ToBoolean read it. */
function nilOf(value: string): Nil {
  const word = trimXmlSpace(value);
  return Object.hasOwn(XSD_BOOLEAN, word) ? XSD_BOOLEAN[word] : { unreadable: value };
}

const unreadableNil = (element: XmlElement, nil: { readonly unreadable: string }) =>
  `The value '${nil.unreadable}' is not valid for the i:nil of ${element.name}.`;

type ParserOptions = { xmlns: false; position: true };
const NUMERIC_REFERENCE = /^#(?:x([0-9a-f]+)|([0-9]+))$/i;

/**
 * saxes, reading a character reference to any code point as the legacy's text reader did: XML 1.0
 * forbids `&#0;`, `&#1;` or `&#xD800;`, and the legacy took them (its twin answers 204). What the
 * value may hold is then validation's to say, as for any other text.
 */
class LegacyCharacterParser extends SaxesParser<ParserOptions> {}
const saxesEntity = Reflect.get(SaxesParser.prototype, 'parseEntity') as (
  this: SaxesParser<ParserOptions>,
  entity: string,
) => string;
// saxes keeps parseEntity private: replaced on this subclass's prototype, never on an instance,
// which would add a property to every parser (see the handler count below).
Object.defineProperty(LegacyCharacterParser.prototype, 'parseEntity', {
  value(this: SaxesParser<ParserOptions>, entity: string): string {
    const match = NUMERIC_REFERENCE.exec(entity);
    const code = match ? parseInt(match[1] ?? match[2], match[1] ? 16 : 10) : undefined;
    return code !== undefined && code <= 0x10ffff
      ? String.fromCodePoint(code)
      : saxesEntity.call(this, entity);
  },
});

/** Takes each child of a collection's root as it closes. */
type RecordHandler = (record: XmlElement, rootName: string) => void;

const refuse = (reason: string): never => {
  throw new MalformedBodyError(reason);
};

/**
 * Reads a document in one pass into its element tree, refusing, as soon as they are met and before
 * anything is built from them: a DTD (no entity expansion, internal or external, ever happens),
 * anything that is not well-formed XML, and anything past the quotas. Given `onRecord`, each child of
 * the root is handed on as it closes instead of being kept: a collection read record by record.
 */
class XmlTreeReader {
  private readonly parser = new LegacyCharacterParser({
    xmlns: false,
    position: true,
  });
  private readonly open: OpenElement[] = [];
  /** The namespaces each declared prefix names, innermost last, among the open elements. */
  private readonly bindings = new Map<string, string[]>();
  private elements = 0;
  private root: XmlElement | undefined;

  constructor(
    private readonly quotas: DocumentQuotas,
    private readonly onRecord?: RecordHandler,
  ) {
    // Seven handlers at most: saxes stores each as a property added by name at run time, and V8 turns
    // a parser with more into a slow dictionary object (a megabyte of text then costs 50 ms, not 6).
    const { parser, open } = this;
    parser.on('doctype', () =>
      refuse('The request body must not contain a document type declaration.'),
    );
    parser.on('opentagstart', ({ name }) => {
      if (open.length === quotas.maxDepth)
        refuse(`The request body is nested deeper than ${quotas.maxDepth} levels.`);
      if (++this.elements > quotas.maxElements)
        refuse(`The request body holds more than ${quotas.maxElements} elements.`);
      this.checkName(name);
      // The parent's start tag is whole now: its declarations scope this element.
      if (open.length > 0) this.enterScope(open[open.length - 1]);
      open.push({ name: localName(name), text: '', attributes: 0, nil: false });
    });
    parser.on('attribute', ({ name, value }) => {
      const element = open[open.length - 1];
      if (++element.attributes > quotas.maxAttributes)
        refuse(
          `The request body has an element with more than ${quotas.maxAttributes} attributes.`,
        );
      this.checkName(name);
      // Read without namespace processing (any prefix may be left undeclared), the declarations and
      // a prefixed nil are kept for the element's close, when its prefix can be resolved.
      const colon = name.indexOf(':');
      if (colon < 0) return;
      const prefix = name.slice(0, colon);
      const local = name.slice(colon + 1);
      if (prefix === 'xmlns') (element.prefixes ??= new Map()).set(local, value);
      else if (local === 'nil') element.nilAttribute = { prefix, value };
    });
    parser.on('closetag', () => this.close(open.pop() as OpenElement));
    parser.on('text', (text) => {
      const element = open[open.length - 1];
      if (element) element.text += text;
      else if (!BLANK.test(text)) refuse('The request body has text outside its root element.');
    });
    parser.on('cdata', (text) => {
      open[open.length - 1].text += text;
    });
    parser.on('error', (error) =>
      refuse(`The request body is not well-formed XML: ${error.message}`),
    );
  }

  /** Reads the next piece of a document that arrives in pieces (a file read as a stream). */
  write(piece: string): void {
    this.parser.write(piece);
  }

  /** Ends a document written in pieces: its root element, or the reason it is incomplete. */
  end(): XmlElement {
    this.parser.close();
    return this.root ?? refuse('The request body holds no XML element.');
  }

  /** Reads the whole document, pausing after each slice. */
  *read(text: string): Steps<XmlElement> {
    for (let at = 0; at < text.length; at += WRITE_SLICE) {
      this.parser.write(text.slice(at, at + WRITE_SLICE));
      yield;
    }
    this.parser.close();
    return this.root ?? refuse('The request body holds no XML element.');
  }

  private checkName(name: string): void {
    if (name.length > this.quotas.maxNameLength)
      refuse(`The request body has a name longer than ${this.quotas.maxNameLength} characters.`);
  }

  /** Brings an element's declarations into scope, once: each is bound and unbound once. */
  private enterScope(element: OpenElement): void {
    if (!element.prefixes || element.inScope) return;
    element.inScope = true;
    for (const [prefix, namespace] of element.prefixes) {
      const bound = this.bindings.get(prefix);
      if (bound) bound.push(namespace);
      else this.bindings.set(prefix, [namespace]);
    }
  }

  private leaveScope(element: OpenElement): void {
    if (!element.inScope) return;
    for (const prefix of element.prefixes?.keys() ?? []) this.bindings.get(prefix)?.pop();
  }

  /**
   * The element as DataContractSerializer read it: its text, CDATA and white space as sent, and nil
   * only by a `nil` attribute whose prefix names the XML Schema instance namespace (`nil="true"`
   * alone, or `i:nil` with `i` bound elsewhere, is no nil).
   */
  private close(open: OpenElement): void {
    const { nilAttribute } = open;
    this.enterScope(open);
    if (nilAttribute && this.bindings.get(nilAttribute.prefix)?.at(-1) === XML_SCHEMA_INSTANCE)
      open.nil = nilOf(nilAttribute.value);
    this.leaveScope(open);
    open.children ??= NO_CHILDREN;
    const element = open as XmlElement;
    const parent = this.open[this.open.length - 1];
    if (!parent) {
      this.root = element;
    } else if (this.onRecord && this.open.length === 1) {
      this.onRecord(element, parent.name);
    } else {
      (parent.children ??= []).push(element);
    }
  }
}

// The encodings an XML declaration may name, as the legacy's text reader knew them.
const DECLARED_ENCODINGS: Readonly<Record<string, readonly string[]>> = {
  'utf-8': ['utf-8'],
  'utf-16': ['utf-16le', 'utf-16be'],
  'utf-16le': ['utf-16le'],
};
const DECLARED_ENCODING = /^\s*<\?xml\s[^?]*?\bencoding\s*=\s*(["'])(.*?)\1/;

/** The legacy refused a declaration naming another encoding than the one the body was sent in. */
function checkDeclaredEncoding(text: string, encoding: string): void {
  const declared = DECLARED_ENCODING.exec(text)?.[2];
  if (declared === undefined) return;
  const readAs = DECLARED_ENCODINGS[declared.toLowerCase()];
  if (!readAs)
    throw new MalformedBodyError(`The XML declaration names an unsupported encoding, ${declared}.`);
  if (!readAs.includes(encoding)) {
    throw new MalformedBodyError(
      `The XML declaration names ${declared}, but the body was sent in ${encoding.toUpperCase()}.`,
    );
  }
}

function* parseRoot(
  text: string,
  quotas: DocumentQuotas,
  encoding = 'utf-8',
  onRecord?: RecordHandler,
): Steps<XmlElement> {
  checkDeclaredEncoding(text, encoding);
  return yield* new XmlTreeReader(quotas, onRecord).read(text);
}

/**
 * What XmlConvert could not read, in document order: a message, or the messages of a list's items, which
 * may be bound after the members that follow it.
 */
type Unreadable = (string | Unreadable)[];

const memberIndexes = new WeakMap<WireModel, ReadonlyMap<string, number>>();

/** The first child element of each member, by member position: one pass, however many children. */
function firstOfEachMember(model: WireModel, element: XmlElement): (XmlElement | undefined)[] {
  let indexes = memberIndexes.get(model);
  if (!indexes) {
    indexes = new Map(model.readMembers.map((member, index) => [member.name, index]));
    memberIndexes.set(model, indexes);
  }
  const found: (XmlElement | undefined)[] = new Array<XmlElement | undefined>(
    model.readMembers.length,
  );
  for (const child of element.children) {
    const index = indexes.get(child.name);
    if (index !== undefined) found[index] ??= child;
  }
  return found;
}

const inOrder = (unreadable: Unreadable): string[] =>
  unreadable.flatMap((entry) => (typeof entry === 'string' ? entry : inOrder(entry)));

/**
 * Binds an element to a model, as a superset of DataContractSerializer: any namespace, children in any
 * order, unknown elements ignored, `i:nil="true"` as null, values read as XmlConvert reads them. A
 * value XmlConvert could not read failed the whole record there, so it is collected in `unreadable`.
 */
function bind(
  model: WireModel,
  element: XmlElement,
  unreadable: Unreadable,
  bindList: ListBinder = bindListNow,
): BoundRecord {
  const bound: BoundRecord = {};
  const found = firstOfEachMember(model, element);
  model.readMembers.forEach((member, index) => {
    const child = found[index];
    if (!child) return;
    if (child.nil === true) bound[member.name] = null;
    else if (child.nil !== false) unreadable.push(unreadableNil(child, child.nil));
    else if (member.kind === 'list' && child.text.trim() === '') {
      const itemModel = wireModelOf(member.item());
      const itemsUnreadable: Unreadable = [];
      unreadable.push(itemsUnreadable);
      const items = child.children.filter((child) => child.name === itemModel.name);
      bound[member.name] = bindList(member.name, items, (item) => {
        const { nil } = item as XmlElement;
        if (nil === false) return bind(itemModel, item as XmlElement, itemsUnreadable);
        if (nil !== true) itemsUnreadable.push(unreadableNil(item as XmlElement, nil));
        return null;
      });
    } else if (member.kind === 'list' || child.children.length > 0) {
      // Markup where a value belongs, or text where a list belongs.
      unreadable.push(`The element '${member.name}' is not valid for ${member.name}.`);
    } else {
      const value = XML_DIALECT[member.kind](child.text);
      if (value instanceof UnreadableValue)
        unreadable.push(`The value '${describeValue(value)}' is not valid for ${member.name}.`);
      else bound[member.name] = value;
    }
  });
  return bound;
}

/**
 * Binds one record, pausing between the items of its lists; any value XmlConvert could not read
 * refuses the record, as DataContractSerializer did.
 */
function* bindRecord(model: WireModel, element: XmlElement): Steps<BoundRecord> {
  const unreadable: Unreadable = [];
  const bound = yield* bindWithListsInSteps((bindList) =>
    bind(model, element, unreadable, bindList),
  );
  const messages = inOrder(unreadable);
  if (messages.length > 0) throw new MalformedBodyError(...messages);
  return bound;
}

/**
 * An element's children as plain members, as a body parser reads XML without explicit arrays: an element
 * without children is its text, `i:nil` is null, one with children a record, and a name repeated a
 * list. Attributes, and text beside child elements, are ignored.
 */
function plainMembers(element: XmlElement): PlainRecord {
  const byName = new Map<string, unknown[]>();
  for (const child of element.children) {
    const values = byName.get(child.name);
    if (values) values.push(plainValue(child));
    else byName.set(child.name, [plainValue(child)]);
  }
  const members: PlainRecord = {};
  for (const [name, values] of byName) {
    // Assigned, it would replace the record's prototype instead of adding a member.
    if (name === '__proto__') continue;
    members[name] = values.length === 1 ? values[0] : values;
  }
  return members;
}

function plainValue(element: XmlElement): unknown {
  if (element.nil === true) return null;
  if (element.nil !== false) refuse(unreadableNil(element, element.nil));
  return element.children.length === 0 ? element.text : plainMembers(element);
}

/**
 * A collection document (`ArrayOfTransaction`) read in pieces, for data import: each record is bound
 * as its element closes, by the rules of `XmlCodec.decodeList`, so memory holds a piece and a record
 * whatever the document's size. Errors are MalformedBodyError; `failedRecord` tells whether one
 * was a record's (its number, from 1) or the document's.
 */
export class XmlCollectionReader {
  private readonly reader: XmlTreeReader;
  private ready: BoundRecord[] = [];
  private started = false;
  private recordsRead = 0;
  private binding = false;

  constructor(private readonly model: WireModel) {
    this.reader = new XmlTreeReader(IMPORT_QUOTAS, (element, rootName) => {
      this.checkRoot(rootName);
      if (element.name !== model.name) return;
      this.recordsRead++;
      this.binding = true;
      if (element.nil !== false) throw new MalformedBodyError('The record is nil.');
      this.ready.push(runSteps(bindRecord(model, element)));
      this.binding = false;
    });
  }

  /** The number of the record whose binding failed, if that is what failed. */
  get failedRecord(): number | undefined {
    return this.binding ? this.recordsRead : undefined;
  }

  /** The records that the piece completes, in document order. */
  write(piece: string): BoundRecord[] {
    if (!this.started) {
      this.started = true;
      checkDeclaredEncoding(piece, 'utf-8');
    }
    this.reader.write(piece);
    const records = this.ready;
    this.ready = [];
    return records;
  }

  /** Ends the document; throws when it is not a whole collection document. */
  end(): void {
    this.checkRoot(this.reader.end().name);
  }

  private checkRoot(name: string): void {
    if (name !== this.model.collectionName)
      throw new MalformedBodyError(`The root element must be ${this.model.collectionName}.`);
  }
}

const TEXT_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '\r': '&#xD;',
};
// Characters XML 1.0 cannot carry at all. Validation keeps them out of stored text; whatever else
// reaches the writer (a message quoting a client) gets U+FFFD rather than an ill-formed document.
// eslint-disable-next-line no-control-regex
const NON_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;
const escapeText = (text: string) =>
  text
    .toWellFormed()
    .replace(NON_XML, '\uFFFD')
    .replace(/[&<>\r]/g, (character) => TEXT_ESCAPES[character]);

function scalarText(value: unknown): string {
  if (value instanceof Date) return formatWireDate(value);
  return escapeText(String(value));
}

/** DataContractSerializer's output: no declaration, ordinal member order, `i:nil`, wrapped lists. */
export class XmlCodec implements WireReader, WireWriter {
  readonly requestTypes = XML_MEDIA_TYPES;
  readonly strictEncodings = true;
  readonly singleItemListsLookScalar = true;
  readonly responseTypes = XML_MEDIA_TYPES;
  private readonly rootAttributes: string;

  constructor(namespace: string) {
    this.rootAttributes = ` xmlns:i="${XML_SCHEMA_INSTANCE}" xmlns="${escapeText(namespace).replace(/"/g, '&quot;')}"`;
  }

  decode(text: string, model: WireModel, encoding?: string): BoundRecord {
    return runSteps(this.decodeSteps(text, model, encoding));
  }

  *decodeSteps(text: string, model: WireModel, encoding?: string): Steps<BoundRecord> {
    const root = yield* parseRoot(text, REQUEST_QUOTAS, encoding);
    if (root.name !== model.name)
      throw new MalformedBodyError(`The root element must be ${model.name}.`);
    return yield* bindRecord(model, root);
  }

  /** The root element is named after the DTO's class, in any namespace; any, for an untyped body. */
  decodePlain(text: string, rootName?: string, encoding?: string): PlainRecord {
    const root = runSteps(parseRoot(text, REQUEST_QUOTAS, encoding));
    if (rootName !== undefined && root.name !== rootName)
      throw new MalformedBodyError(`The root element must be ${rootName}.`);
    return plainMembers(root);
  }

  /** Binds each record as its element closes: the document's tree is never held whole. */
  decodeList(text: string, model: WireModel): BoundRecord[] {
    const records: BoundRecord[] = [];
    const checkRoot = (name: string) => {
      if (name !== model.collectionName)
        throw new MalformedBodyError(`The root element must be ${model.collectionName}.`);
    };
    const root = runSteps(
      parseRoot(text, IMPORT_QUOTAS, undefined, (element, rootName) => {
        checkRoot(rootName);
        if (element.name !== model.name) return;
        if (element.nil !== false)
          throw new MalformedBodyError(`Record ${records.length + 1} is nil.`);
        records.push(runSteps(bindRecord(model, element)));
      }),
    );
    checkRoot(root.name);
    return records;
  }

  encode(model: WireModel, value: object | readonly object[]): string {
    const out: string[] = [];
    if (!Array.isArray(value)) {
      this.writeRecord(model, value, model.name, this.rootAttributes, out);
    } else if (value.length === 0) {
      out.push(`<${model.collectionName}${this.rootAttributes} />`);
    } else {
      out.push(`<${model.collectionName}${this.rootAttributes}>`);
      for (const record of value as readonly object[])
        this.writeRecord(model, record, model.name, '', out);
      out.push(`</${model.collectionName}>`);
    }
    return out.join('');
  }

  /** Web API's HttpError, which carries no namespace. */
  encodeError(error: WireErrorBody): string {
    const out = [`<Error><Message>${escapeText(error.message)}</Message>`];
    if (error.modelState) {
      out.push('<ModelState>');
      for (const [key, messages] of Object.entries(error.modelState)) {
        const name = encodeLocalName(key);
        out.push(`<${name}>${escapeText(messages.join(' '))}</${name}>`);
      }
      out.push('</ModelState>');
    }
    out.push('</Error>');
    return out.join('');
  }

  private writeRecord(
    model: WireModel,
    record: object,
    name: string,
    attributes: string,
    out: string[],
  ): void {
    const source = record as Record<string, unknown>;
    out.push(`<${name}${attributes}>`);
    for (const member of model.xmlMembers) {
      const value = source[member.name];
      if (value === null || value === undefined) {
        out.push(`<${member.name} i:nil="true" />`);
      } else if (member.kind === 'list') {
        const items = value as readonly (object | null)[];
        if (items.length === 0) {
          out.push(`<${member.name} />`);
          continue;
        }
        const itemModel = wireModelOf(member.item());
        out.push(`<${member.name}>`);
        for (const item of items) {
          if (item === null) out.push(`<${itemModel.name} i:nil="true" />`);
          else this.writeRecord(itemModel, item, itemModel.name, '', out);
        }
        out.push(`</${member.name}>`);
      } else {
        out.push(`<${member.name}>${scalarText(value)}</${member.name}>`);
      }
    }
    out.push(`</${name}>`);
  }
}
