import { trimmerOf } from '../../common/trim';

/** .NET's white space in numbers and booleans: tab, line feed, vertical tab, form feed, CR, space. */
export const trimDotNetSpace = trimmerOf('\t\n\v\f\r ');

/** XML's white space, as XmlConvert trims it: tab, line feed, carriage return, space. */
export const trimXmlSpace = trimmerOf('\t\n\r ');

/**
 * White space as .NET's `String.IsNullOrWhiteSpace` sees it: with U+0085 (NEXT LINE), which
 * JavaScript's `trim` keeps, and without U+FEFF (the byte order mark), which JavaScript's `trim`
 * removes.
 */
const DOTNET_BLANK = /^[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/;

/** Empty or white space alone, as `String.IsNullOrWhiteSpace`. */
export const isDotNetBlank = (text: string) => DOTNET_BLANK.test(text);
