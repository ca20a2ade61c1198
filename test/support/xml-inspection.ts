import { SaxesParser } from 'saxes';

/** An element of a response, with its attributes in document order and its children. */
export interface InspectedElement {
  readonly name: string;
  readonly attributes: Array<[string, string]>;
  readonly children: InspectedElement[];
  text: string;
}

/** Parses a response body strictly, keeping the order of elements and attributes. */
export function inspectXml(text: string): InspectedElement {
  const parser = new SaxesParser<{ xmlns: false }>({ xmlns: false });
  const stack: InspectedElement[] = [];
  let root: InspectedElement | undefined;
  parser.on('opentag', (tag) => {
    const element: InspectedElement = {
      name: tag.name,
      attributes: Object.entries(tag.attributes),
      children: [],
      text: '',
    };
    if (stack.length > 0) stack[stack.length - 1].children.push(element);
    else root = element;
    stack.push(element);
  });
  parser.on('closetag', () => void stack.pop());
  parser.on('text', (chunk) => {
    if (stack.length > 0) stack[stack.length - 1].text += chunk;
  });
  parser.on('error', (error) => {
    throw error;
  });
  parser.write(text).close();
  if (!root) throw new Error('no root element');
  return root;
}

export const childNames = (element: InspectedElement) =>
  element.children.map((child) => child.name);

export const child = (element: InspectedElement, name: string) => {
  const found = element.children.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`${element.name} has no ${name}`);
  return found;
};
