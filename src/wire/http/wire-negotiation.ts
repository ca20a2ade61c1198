import { type WireReader, type WireResponseFormat, type WireWriter } from '../codecs/wire-codec';
import { type MediaRange, parseAccept, parseAcceptCharset } from './header-lists';

/** The request headers a response's format depends on, for `Vary`. */
export const NEGOTIATED_BY = 'Accept, Content-Type';
/** The same for the legacy's routes, whose encoding also follows `Accept-Charset`. */
export const NEGOTIATED_WITH_CHARSET_BY = 'Accept, Accept-Charset, Content-Type';

/** The encodings Web API's JSON and XML formatters wrote, by .NET's WebName; the first by default. */
const RESPONSE_CHARSETS = ['utf-8', 'utf-16'] as const;
export type ResponseCharset = (typeof RESPONSE_CHARSETS)[number];

const supportedCharset = (label: string | undefined): ResponseCharset | undefined =>
  RESPONSE_CHARSETS.find((charset) => charset === label?.toLowerCase());

/**
 * The response's encoding, as Web API's negotiator chose it: the Accept-Charset items by q (on a tie,
 * in header order, `*` last) and the first that names a supported encoding, or `*` for the default,
 * unless its q is 0; else the request Content-Type's charset when it names one (quotes are not
 * taken off: `"utf-16"` names none), on a GET too; else UTF-8. An unreadable header counts as absent.
 */
export function responseCharset(
  acceptCharset: string | undefined,
  requestCharset: string | undefined,
): ResponseCharset {
  const ranges = acceptCharset === undefined ? [] : (parseAcceptCharset(acceptCharset) ?? []);
  const sorted = ranges
    .map((range, index) => ({ ...range, index, any: range.charset === '*' }))
    .sort((a, b) => b.q - a.q || Number(a.any) - Number(b.any) || a.index - b.index);
  for (const { charset, q, any } of sorted) {
    if (q === 0) continue;
    const chosen = any ? RESPONSE_CHARSETS[0] : supportedCharset(charset);
    if (chosen) return chosen;
  }
  return supportedCharset(requestCharset) ?? RESPONSE_CHARSETS[0];
}

const UTF16_BYTE_ORDER_MARK = Buffer.from([0xff, 0xfe]);

/** A response body's bytes: UTF-16 as .NET's UnicodeEncoding wrote it, little-endian after a BOM. */
export function encodeResponse(text: string, charset: ResponseCharset): Buffer {
  return charset === 'utf-8'
    ? Buffer.from(text)
    : Buffer.concat([UTF16_BYTE_ORDER_MARK, Buffer.from(text, 'utf16le')]);
}

/** How closely a range names a media type: 2 exactly, 1 by `type/*`, 0 by `*\/*`, -1 not at all. */
function specificity(range: MediaRange, mediaType: string): number {
  const [type, subtype] = mediaType.split('/');
  if (range.type === type && range.subtype === subtype) return 2;
  if (range.type === type && range.subtype === '*') return 1;
  if (range.type === '*' && range.subtype === '*') return 0;
  return -1;
}

/** A request's media type read as a range: itself, or for `type/*` and `*\/*` the types it names. */
function asRange(mediaType: string): MediaRange {
  const [type, subtype] = mediaType.split('/');
  return { type, subtype, q: 1 };
}

/** A range's own specificity: `*\/*` 0, `type/*` 1, a media type 2. */
const rangeSpecificity = (range: MediaRange) =>
  range.type === '*' ? 0 : range.subtype === '*' ? 1 : 2;

/** One writer as Web API saw a formatter: the media types it supports, in order. */
interface WriterTypes {
  readonly writer: WireWriter;
  readonly mediaTypes: readonly string[];
}

interface AcceptMatch {
  readonly format: WireResponseFormat;
  readonly q: number;
  readonly specificity: number;
}

/**
 * Web API's DefaultContentNegotiator on the Accept header: its ranges sorted by q, then the more
 * specific first, otherwise in header order; ranges of q=0 skipped (they exclude nothing). Each writer
 * takes the first of its types that the first range matching any of them names. Then the best exact
 * match wins, unless a `type/*` or then a `*\/*` match has a strictly higher q; on equal q, the
 * earlier writer (JSON).
 */
function bestForAccept(
  writers: readonly WriterTypes[],
  ranges: readonly MediaRange[],
): WireResponseFormat | undefined {
  const sorted = ranges
    .map((range, index) => ({ range, index }))
    .filter(({ range }) => range.q > 0)
    .sort(
      (a, b) =>
        b.range.q - a.range.q ||
        rangeSpecificity(b.range) - rangeSpecificity(a.range) ||
        a.index - b.index,
    )
    .map(({ range }) => range);
  const bestBySpecificity: (AcceptMatch | undefined)[] = [];
  for (const { writer, mediaTypes } of writers) {
    const match = firstMatch(writer, mediaTypes, sorted);
    const best = bestBySpecificity[match?.specificity ?? -1];
    if (match && (!best || match.q > best.q)) bestBySpecificity[match.specificity] = match;
  }
  let chosen: AcceptMatch | undefined;
  for (const match of [...bestBySpecificity].reverse())
    if (match && (!chosen || match.q > chosen.q)) chosen = match;
  return chosen?.format;
}

function firstMatch(
  writer: WireWriter,
  mediaTypes: readonly string[],
  sortedRanges: readonly MediaRange[],
): AcceptMatch | undefined {
  for (const range of sortedRanges) {
    for (const mediaType of mediaTypes) {
      const level = specificity(range, mediaType);
      if (level >= 0) return { format: { mediaType, writer }, q: range.q, specificity: level };
    }
  }
  return undefined;
}

/**
 * Formats the service writes, in the order that wins ties: JSON first, as Web API's formatter list.
 * Errors may also be written in a writer's error-only types (`application/problem+json`), after its
 * others, so a client gets one only when its Accept header names it.
 */
export class WireFormats {
  private readonly responseFormats: WireResponseFormat[];
  private readonly responseWriters: WriterTypes[];
  private readonly errorWriters: WriterTypes[];

  constructor(
    private readonly readers: readonly WireReader[],
    writers: readonly WireWriter[],
  ) {
    this.responseWriters = writers.map((writer) => ({ writer, mediaTypes: writer.responseTypes }));
    this.errorWriters = writers.map((writer) => ({
      writer,
      mediaTypes: [...writer.responseTypes, ...(writer.errorOnlyTypes ?? [])],
    }));
    this.responseFormats = writers.flatMap((writer) =>
      writer.responseTypes.map((mediaType) => ({ mediaType, writer })),
    );
  }

  /**
   * The reader of a request media type (lower case, without parameters). A range (`*\/*`,
   * `application/*`) gets the first reader of a type it names, as Web API's formatter lookup did.
   */
  readerFor(mediaType: string): WireReader | undefined {
    const range = asRange(mediaType);
    return this.readers.find((reader) =>
      reader.requestTypes.some((requestType) => specificity(range, requestType) >= 0),
    );
  }

  /** Success bodies, chosen as Web API's content negotiator chose. Never 406. */
  forResponse(
    accept: string | undefined,
    requestMediaType: string | undefined,
  ): WireResponseFormat {
    return this.choose(this.responseWriters, accept, requestMediaType);
  }

  /** Error bodies: the same choice, among the error formats. */
  forError(accept: string | undefined, requestMediaType: string | undefined): WireResponseFormat {
    return this.choose(this.errorWriters, accept, requestMediaType);
  }

  /**
   * The format the Accept header prefers; when it accepts nothing written here, or is absent or
   * unreadable, the request's own media type (`Content-Type: text/xml` gets XML, on a GET too), or
   * for a range the first type written here that it names (`text/*` gets `text/json`), as Web API
   * matched it; else JSON.
   */
  private choose(
    writers: readonly WriterTypes[],
    accept: string | undefined,
    requestMediaType: string | undefined,
  ): WireResponseFormat {
    const requestRange = requestMediaType === undefined ? undefined : asRange(requestMediaType);
    const ranges = accept === undefined ? undefined : parseAccept(accept);
    return (
      (ranges ? bestForAccept(writers, ranges) : undefined) ??
      (requestRange &&
        this.responseFormats.find(({ mediaType }) => specificity(requestRange, mediaType) >= 0)) ??
      this.responseFormats[0]
    );
  }
}
