import { parseAccept, parseAcceptCharset } from './header-lists';

// Each header below was sent to the legacy service (its twin); an unparsable one got the answer of a
// request without that header.
describe('parseAccept, as .NET read an Accept header', () => {
  it.each([
    ['application/xml', [['application', 'xml', 1]]],
    ['application /xml', [['application', 'xml', 1]]],
    [
      ' TEXT/XML ;q=0.5 , application/json',
      [
        ['text', 'xml', 0.5],
        ['application', 'json', 1],
      ],
    ],
    [',application/xml,, ,', [['application', 'xml', 1]]],
    ['application/xml; foo', [['application', 'xml', 1]]],
    ['application/xml;foo="a\\"b, c";q=0.4', [['application', 'xml', 0.4]]],
    [
      'text/html, image/gif, */*; q=.2',
      [
        ['text', 'html', 1],
        ['image', 'gif', 1],
        ['*', '*', 0.2],
      ],
    ],
    ['application/xml;q=0.5;q=0.1', [['application', 'xml', 0.5]]],
    ['application/xml;Q=0.3', [['application', 'xml', 0.3]]],
    ['application/xml;q=1.5', [['application', 'xml', 1.5]]],
    ['application/xml;q=1.', [['application', 'xml', 1]]],
    ['application/xml;q=abc', [['application', 'xml', 1]]],
    ['application/xml;q="0.1"', [['application', 'xml', 1]]],
    ['application/xml;q=-1', [['application', 'xml', 1]]],
    ['application/xml;q=1e-1', [['application', 'xml', 1]]],
    ['application/xml;q', [['application', 'xml', 1]]],
    ['', []],
  ])('reads %j', (header, ranges) => {
    expect(parseAccept(header)).toEqual(ranges.map(([type, subtype, q]) => ({ type, subtype, q })));
  });

  it.each([
    'application/xml, foo/bar/baz',
    'text/html, image/gif, image/jpeg, *; q=.2, */*; q=.2',
    '*',
    'application/xml;',
    'application/xml;;q=1',
    'application/xml;foo="bar',
    'application/xml;=bar',
    'application/xml;foo=',
    'application/json;q=, application/xml',
    'application/xml garbage',
    'application/xml, application',
    'application/xml, @/json',
    'application/xml;fé=1',
    'application/xml;q=0.5 ; , application/json',
  ])('refuses %j whole', (header) => {
    expect(parseAccept(header)).toBeUndefined();
  });
});

describe('parseAcceptCharset, as .NET read an Accept-Charset header', () => {
  it.each([
    ['utf-16', [['utf-16', 1]]],
    [
      'ISO-8859-1,utf-8;q=0.7,*;q=0.7',
      [
        ['ISO-8859-1', 1],
        ['utf-8', 0.7],
        ['*', 0.7],
      ],
    ],
    ['utf-16 ;Q= 0.5 ,, ', [['utf-16', 0.5]]],
    ['utf-16;q=0', [['utf-16', 0]]],
    ['utf-16;q=01', [['utf-16', 1]]],
    ['utf-16;q=1.', [['utf-16', 1]]],
    ['utf-16;q=0.0001', [['utf-16', 0.0001]]],
  ])('reads %j', (header, ranges) => {
    expect(parseAcceptCharset(header)).toEqual(ranges.map(([charset, q]) => ({ charset, q })));
  });

  it.each([
    'utf-16;q=.5, utf-8;q=0.4',
    'utf-16;q=1.5',
    'utf-16;q=abc',
    'utf-16;q=',
    'utf-16;foo=bar',
    'utf-16;q=0.5;q=0.1',
    'utf-16, foo/bar',
    '"utf-16"',
    'utf-16;q=0.5x',
  ])('refuses %j whole', (header) => {
    expect(parseAcceptCharset(header)).toBeUndefined();
  });
});
