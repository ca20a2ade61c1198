import { JsonCodec } from '../codecs/json.codec';
import { type WireWriter } from '../codecs/wire-codec';
import { encodeResponse, responseCharset, WireFormats } from './wire-negotiation';

/** A second writer after JSON, as Web API's XML formatter follows its JSON one. */
const xmlLikeWriter: WireWriter = {
  responseTypes: ['application/xml', 'text/xml'],
  encode: () => '<x />',
  encodeError: () => '<Error />',
};

describe('WireFormats with the JSON codec', () => {
  const json = new JsonCodec();
  const formats = new WireFormats([json], [json]);
  const responseType = (accept: string | undefined) =>
    formats.forResponse(accept, undefined).mediaType;
  const errorType = (accept: string | undefined, requestType: string | undefined) =>
    formats.forError(accept, requestType).mediaType;

  describe('forResponse', () => {
    it('writes JSON when there is no Accept header, or an empty one', () => {
      expect(responseType(undefined)).toBe('application/json');
      expect(responseType('')).toBe('application/json');
    });

    it('writes application/json for */* alone', () => {
      expect(responseType('*/*')).toBe('application/json');
      expect(responseType('*/*;q=0.3')).toBe('application/json');
    });

    it('writes exactly the JSON type that was asked for', () => {
      expect(responseType('application/json')).toBe('application/json');
      expect(responseType('text/json')).toBe('text/json');
    });

    it('writes text/json for text/*', () => {
      expect(responseType('text/*')).toBe('text/json');
      expect(responseType('application/*')).toBe('application/json');
    });

    it('reads media ranges case-insensitively and ignores parameters other than q', () => {
      expect(responseType('TEXT/JSON')).toBe('text/json');
      expect(responseType('text/json; charset=utf-8')).toBe('text/json');
      expect(responseType(' text/json ;q=1 , image/png')).toBe('text/json');
    });

    // Each expectation below is what the legacy service (Web API 5.2.3) answered.
    it('takes, on a tie in q, the type the header lists first among a writer types', () => {
      expect(responseType('text/json, application/json')).toBe('text/json');
      expect(responseType('application/json, text/json')).toBe('application/json');
      expect(responseType('text/json;q=0.5, application/json;q=0.5')).toBe('text/json');
    });

    it('honours q-values over the order of the header and over JSON first', () => {
      expect(responseType('application/json;q=0.5, text/json;q=0.9')).toBe('text/json');
      expect(responseType('application/json;q=0.8, text/json')).toBe('text/json');
      expect(responseType('text/json;q=0.1, */*;q=0.5')).toBe('application/json');
      expect(responseType('text/*;q=0.6, application/json;q=0.4')).toBe('text/json');
    });

    it('takes the highest q of any range that names a type, not the most specific', () => {
      expect(responseType('text/*, text/json;q=0.2, application/json;q=0.5')).toBe('text/json');
    });

    it('reads a q that is no number as none, and one above 1 as it is', () => {
      expect(responseType('text/json;q=abc, application/json;q=0.5')).toBe('text/json');
      expect(responseType('text/json;q=1.5, application/json')).toBe('text/json');
    });

    it('skips a range given q=0 without excluding the type it names', () => {
      expect(responseType('application/json;q=0, */*')).toBe('application/json');
      expect(responseType('text/json;q=0, text/*')).toBe('text/json');
    });

    it('falls back to JSON, never refusing, when nothing named is written here', () => {
      expect(responseType('image/png')).toBe('application/json');
      expect(responseType('application/pdf, image/*;q=0.8')).toBe('application/json');
      expect(responseType('application/json;q=0, text/json;q=0')).toBe('application/json');
      expect(responseType('nonsense')).toBe('application/json');
      expect(responseType(',,;q=')).toBe('application/json');
    });

    it('hands back the JSON codec with the chosen type', () => {
      const format = formats.forResponse('text/json', undefined);
      expect(format.writer).toBe(json);
      expect(format.mediaType).toBe('text/json');
    });

    it('never answers a success as problem details', () => {
      expect(responseType('application/problem+json')).toBe('application/json');
    });
  });

  describe('forError', () => {
    it('follows the Accept header as a success does, */* included', () => {
      expect(errorType('text/json', 'application/json')).toBe('text/json');
      expect(errorType('application/json', 'text/json')).toBe('application/json');
      expect(errorType('text/*', 'application/json')).toBe('text/json');
      expect(errorType('*/*', 'text/json')).toBe('application/json');
    });

    it('writes problem details only when the Accept header names them and prefers them', () => {
      expect(errorType('application/problem+json', undefined)).toBe('application/problem+json');
      expect(errorType('application/problem+json, application/json;q=0.5', undefined)).toBe(
        'application/problem+json',
      );
      // On a tie the legacy type wins, being first.
      expect(errorType('application/json, application/problem+json', undefined)).toBe(
        'application/json',
      );
      expect(errorType('application/*', undefined)).toBe('application/json');
      expect(errorType('*/*', undefined)).toBe('application/json');
    });

    it("falls back to the request body's media type when Accept is absent or matches nothing", () => {
      expect(errorType(undefined, 'text/json')).toBe('text/json');
      expect(errorType('image/png', 'text/json')).toBe('text/json');
      expect(errorType(undefined, 'application/json')).toBe('application/json');
    });

    it('writes JSON when neither Accept nor the request body says anything usable', () => {
      expect(errorType(undefined, undefined)).toBe('application/json');
      expect(errorType('*/*', 'text/plain')).toBe('application/json');
      expect(errorType('image/png', undefined)).toBe('application/json');
    });
  });

  describe('readerFor', () => {
    it('reads both JSON media types and nothing else', () => {
      expect(formats.readerFor('application/json')).toBe(json);
      expect(formats.readerFor('text/json')).toBe(json);
      expect(formats.readerFor('text/plain')).toBeUndefined();
      expect(formats.readerFor('application/octet-stream')).toBeUndefined();
    });
  });
});

describe('WireFormats with JSON and a second writer after it', () => {
  const json = new JsonCodec();
  const formats = new WireFormats([json], [json, xmlLikeWriter]);
  const responseType = (accept: string | undefined, requestType?: string) =>
    formats.forResponse(accept, requestType).mediaType;

  it('lets JSON win every tie, being first', () => {
    expect(responseType(undefined)).toBe('application/json');
    expect(responseType('*/*')).toBe('application/json');
    expect(responseType('application/xml, application/json')).toBe('application/json');
    expect(responseType('application/*')).toBe('application/json');
  });

  it('picks the other writer when the Accept header prefers it', () => {
    expect(responseType('application/xml')).toBe('application/xml');
    expect(responseType('text/xml')).toBe('text/xml');
    expect(responseType('application/json;q=0.5, application/xml')).toBe('application/xml');
    expect(responseType('text/*, text/json;q=0.1')).toBe('text/json');
    expect(responseType('text/xml;q=0.5, text/*')).toBe('text/json');
    expect(responseType('application/xml;q=0.9, */*')).toBe('application/json');
  });

  it("answers in the request's own format when Accept is absent or matches nothing, on a GET too", () => {
    expect(responseType(undefined, 'text/xml')).toBe('text/xml');
    expect(responseType('image/png', 'application/xml')).toBe('application/xml');
    expect(responseType('*/*', 'application/xml')).toBe('application/json');
    expect(formats.forError(undefined, 'text/xml').mediaType).toBe('text/xml');
    expect(formats.forError('*/*', 'application/xml').mediaType).toBe('application/json');
    expect(formats.forError('application/json', 'application/xml').mediaType).toBe(
      'application/json',
    );
  });

  it('answers a request media range in the first type written here that it names, as Web API', () => {
    expect(responseType(undefined, 'text/*')).toBe('text/json');
    expect(responseType(undefined, 'application/*')).toBe('application/json');
    expect(responseType(undefined, '*/*')).toBe('application/json');
    expect(responseType(undefined, 'image/*')).toBe('application/json');
    expect(formats.forError(undefined, 'text/*').mediaType).toBe('text/json');
  });
});

describe('WireFormats with an Accept header .NET could not parse', () => {
  const json = new JsonCodec();
  const formats = new WireFormats([json], [json, xmlLikeWriter]);

  it('negotiates as if there were none: on the request media type, else JSON', () => {
    expect(formats.forResponse('application/xml, foo/bar/baz', undefined).mediaType).toBe(
      'application/json',
    );
    expect(formats.forResponse('application/xml, *; q=.2', 'text/xml').mediaType).toBe('text/xml');
    expect(formats.forError('application/json, *', 'application/xml').mediaType).toBe(
      'application/xml',
    );
  });

  it('reads a q of .2 as 0.2', () => {
    expect(
      formats.forResponse('application/json;q=.2, application/xml;q=0.3', undefined).mediaType,
    ).toBe('application/xml');
  });
});

// Each expectation is what the legacy service (its twin) answered.
describe('responseCharset, as Web API chose the response encoding', () => {
  it.each([
    [undefined, undefined, 'utf-8'],
    ['utf-16', undefined, 'utf-16'],
    ['UTF-16', undefined, 'utf-16'],
    ['utf-8;q=0.1, utf-16', undefined, 'utf-16'],
    ['utf-16;q=0.1, utf-8', undefined, 'utf-8'],
    ['ISO-8859-1,utf-8;q=0.7,*;q=0.7', undefined, 'utf-8'],
    ['ISO-8859-1,utf-16;q=0.7,*;q=0.7', undefined, 'utf-16'],
    ['*;q=0.5, utf-16;q=0.5', undefined, 'utf-16'],
    ['*;q=0.6, utf-16;q=0.5', undefined, 'utf-8'],
    ['utf-16;q=0', undefined, 'utf-8'],
    ['utf-16;q=0, *', undefined, 'utf-8'],
    ['utf-8;q=0, utf-16;q=0', 'utf-16', 'utf-16'],
    ['unicodeFFFE', undefined, 'utf-8'],
    ['utf-16be', undefined, 'utf-8'],
    ['utf-16;q=.5, utf-8;q=0.4', undefined, 'utf-8'],
    [undefined, 'utf-16', 'utf-16'],
    [undefined, 'UTF-16', 'utf-16'],
    [undefined, '"utf-16"', 'utf-8'],
    [undefined, 'iso-8859-1', 'utf-8'],
    ['utf-8', 'utf-16', 'utf-8'],
    ['iso-8859-1', 'utf-16', 'utf-16'],
    ['utf-16;q=abc', 'utf-8', 'utf-8'],
  ])('Accept-Charset %j, request charset %j: %s', (acceptCharset, requestCharset, charset) => {
    expect(responseCharset(acceptCharset, requestCharset)).toBe(charset);
  });
});

describe('encodeResponse', () => {
  it('writes UTF-8 without a byte order mark, UTF-16 little-endian after one', () => {
    expect(encodeResponse('{"a":"é"}', 'utf-8')).toEqual(Buffer.from('{"a":"é"}'));
    expect(encodeResponse('<é/>', 'utf-16')).toEqual(
      Buffer.from([0xff, 0xfe, 0x3c, 0, 0xe9, 0, 0x2f, 0, 0x3e, 0]),
    );
  });
});
