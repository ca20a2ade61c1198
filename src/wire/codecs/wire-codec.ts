import { type Steps } from '../model/steps';
import { type ModelState } from '../model/wire-errors';
import { type BoundRecord, type WireModel } from '../model/wire-model';

/** What an error response carries, whatever the format. */
export interface WireErrorBody {
  readonly status: number;
  /** A stable code, the tail of the problem `type`. */
  readonly code: string;
  readonly title: string;
  /** The legacy `Message`. */
  readonly message: string;
  readonly modelState?: ModelState;
  /** The request's X-Request-Id, so a client's report can be found in the logs. */
  readonly requestId?: string;
}

export interface WireResponseFormat {
  /** The media type written, e.g. `text/json`. */
  readonly mediaType: string;
  readonly writer: WireWriter;
}

/** Reads request bodies of its media types into bound records; it knows the shape only from a WireModel. */
export interface WireReader {
  /** Request media types it reads, lower case. */
  readonly requestTypes: readonly string[];
  /**
   * Bodies are read as the legacy formatter's supported encodings only, UTF-8 and UTF-16, and bytes
   * that are not text in them refuse the body; otherwise as the legacy form parser read them: UTF-8
   * whatever the charset, replacing what does not decode.
   */
  readonly strictEncodings?: boolean;
  /**
   * A body that starts with a byte order mark is read as .NET's StreamReader read it: by that
   * encoding's replacing decoder, each sequence of bytes that is not text becoming U+FFFD; except
   * a UTF-16 mark under `charset=utf-16`, the preamble of the formatter's own (strict) UTF-16.
   */
  readonly replacesAfterByteOrderMark?: boolean;
  /**
   * Parses and binds a body decoded from `encoding` (a WHATWG encoding name, `utf-8` when read from
   * elsewhere); throws MalformedBodyError when it cannot.
   */
  decode(text: string, model: WireModel, encoding?: string): BoundRecord;
  /**
   * The same, in steps that pause between slices of the document and items of its lists, for formats
   * whose bodies may hold many records; the others are read at once.
   */
  decodeSteps?(text: string, model: WireModel, encoding?: string): Steps<BoundRecord>;
  /** Parses and binds a collection document (`ArrayOf…` in XML, an array in JSON), for data import. */
  decodeList?(text: string, model: WireModel): BoundRecord[];
  /**
   * Parses a body for a plain class-validator DTO, which has no wire model: its members as sent, values
   * as the format carries them (text, in XML and forms) for class-transformer to convert. `rootName`,
   * the DTO's class name, is the root element of an XML body; without it (an untyped body), any root
   * is read. Throws MalformedBodyError.
   */
  decodePlain(text: string, rootName?: string, encoding?: string): PlainRecord;
  /**
   * The format writes a list as its items repeated, so a list of one reads as a single value: a DTO
   * member declared as an array then takes a single value as a list of one.
   */
  readonly singleItemListsLookScalar?: boolean;
}

/** A body read without a model: members by name as sent, nested records and lists as plain values. */
export type PlainRecord = Record<string, unknown>;

/** Writes records, collections of records and errors in its media types. */
export interface WireWriter {
  /** Response media types it writes, in the order they win ties. */
  readonly responseTypes: readonly string[];
  /** Media types it writes errors in only, when an Accept header names them. */
  readonly errorOnlyTypes?: readonly string[];
  encode(model: WireModel, value: object | readonly object[]): string;
  encodeError(error: WireErrorBody): string;
}

/**
 * Deep documents are refused before anything recurses through them, past the depth Web API's
 * formatters read (their MaxDepth, 256).
 */
export const MAX_DOCUMENT_DEPTH = 256;

/**
 * What one document may hold, counted while it is read, before anything is built from it (the idea of
 * .NET's XmlDictionaryReaderQuotas): past any of them the document is refused as malformed, so the
 * CPU and memory a body costs stay bounded by its quotas, whatever its shape.
 */
export interface DocumentQuotas {
  /** Nesting of elements, objects and arrays. */
  readonly maxDepth: number;
  /**
   * Elements in the whole document: in XML, elements; in JSON, object members and array items, which
   * .NET's JSON reader read as elements.
   */
  readonly maxElements: number;
  /** XML attributes on one element, namespace declarations included. */
  readonly maxAttributes: number;
  /** Characters in one XML element or attribute name, prefix included. */
  readonly maxNameLength: number;
}

/**
 * Request bodies. The element quota stops floods (a megabyte of empty elements or members) while every
 * body the legacy accepted in practice fits: it took any count, and 1 MB of requirements in JSON is
 * about 50,000 members and items. Refused early, a flood costs a few milliseconds; a body that
 * fits is read in one pass. Constants, not settings: the size limit is the setting. DataContract
 * bodies carry two namespace declarations and an `i:nil` at most per element.
 */
export const REQUEST_QUOTAS: DocumentQuotas = {
  maxDepth: MAX_DOCUMENT_DEPTH,
  maxElements: 65_536,
  maxAttributes: 16,
  maxNameLength: 1024,
};

/**
 * Collection documents for data import: an operator's own files, as large as the data they carry, so
 * the counts are unbounded; nesting and names are not, since no record needs more.
 */
export const IMPORT_QUOTAS: DocumentQuotas = {
  ...REQUEST_QUOTAS,
  maxElements: Number.POSITIVE_INFINITY,
};
