import { trimmerOf } from '../../common/trim';

/** .NET's white space in numbers and booleans: tab, line feed, vertical tab, form feed, CR, space. */
export const trimDotNetSpace = trimmerOf('\t\n\v\f\r ');

/** XML's white space, as XmlConvert trims it: tab, line feed, carriage return, space. */
export const trimXmlSpace = trimmerOf('\t\n\r ');
