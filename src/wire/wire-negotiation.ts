import { type WireReader, type WireResponseFormat, type WireWriter } from './wire-codec';

interface MediaRange {
  readonly type: string;
  readonly subtype: string;
  readonly q: number;
}

function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const part of header.split(',')) {
    const [essence, ...parameters] = part.split(';');
    const [type, subtype] = essence.trim().toLowerCase().split('/');
    if (!type || !subtype) continue;
    let q = 1;
    for (const parameter of parameters) {
      const [name, value] = parameter.split('=').map((text) => text.trim());
      if (name.toLowerCase() === 'q')
        q = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(value) ? Number(value) : 0;
    }
    ranges.push({ type, subtype, q });
  }
  return ranges;
}

/** How closely a range names a media type: 2 exactly, 1 by `type/*`, 0 by `*\/*`, -1 not at all. */
function specificity(range: MediaRange, mediaType: string): number {
  const [type, subtype] = mediaType.split('/');
  if (range.type === type && range.subtype === subtype) return 2;
  if (range.type === type && range.subtype === '*') return 1;
  if (range.type === '*' && range.subtype === '*') return 0;
  return -1;
}

/** Formats the service writes, in the order that wins ties: JSON first, as Web API's formatter list. */
export class WireFormats {
  private readonly responseFormats: WireResponseFormat[];

  constructor(
    private readonly readers: readonly WireReader[],
    writers: readonly WireWriter[],
  ) {
    this.responseFormats = writers.flatMap((writer) =>
      writer.responseTypes.map((mediaType) => ({ mediaType, writer })),
    );
  }

  /** The reader of a request media type (lower case, without parameters). */
  readerFor(mediaType: string): WireReader | undefined {
    return this.readers.find((reader) => reader.requestTypes.includes(mediaType));
  }

  /**
   * Picks the response format the way Web API's content negotiator does: the highest q, then the most
   * specific range, then formatter order. `undefined` when the Accept header accepts nothing written here.
   */
  private negotiate(
    accept: string | undefined,
  ): { format: WireResponseFormat; specificity: number } | undefined {
    if (!accept) return undefined;
    const ranges = parseAccept(accept);
    let best: { format: WireResponseFormat; q: number; specificity: number } | undefined;
    for (const format of this.responseFormats) {
      let match: { q: number; specificity: number } | undefined;
      for (const range of ranges) {
        const level = specificity(range, format.mediaType);
        if (level >= 0 && (!match || level > match.specificity))
          match = { q: range.q, specificity: level };
      }
      if (!match || match.q === 0) continue;
      if (
        !best ||
        match.q > best.q ||
        (match.q === best.q && match.specificity > best.specificity)
      ) {
        best = { format, ...match };
      }
    }
    return best;
  }

  /** Success bodies: the Accept header, else the first format (JSON). Never 406. */
  forResponse(accept: string | undefined): WireResponseFormat {
    return this.negotiate(accept)?.format ?? this.responseFormats[0];
  }

  /** Error bodies: a media type the Accept header names, else the request body's own format, else JSON. */
  forError(accept: string | undefined, requestMediaType: string | undefined): WireResponseFormat {
    const byAccept = this.negotiate(accept);
    if (byAccept && byAccept.specificity > 0) return byAccept.format;
    const byBody = this.responseFormats.find((format) => format.mediaType === requestMediaType);
    return byBody ?? this.responseFormats[0];
  }
}
