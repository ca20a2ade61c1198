import { formatWireDate, type WireModel, wireModelOf, XML_SCHEMA_INSTANCE } from '../../src/wire';

/** How clients write one value as text: dates in ISO 8601, null as empty (forms) or nil (XML). */
function valueText(value: unknown): string {
  if (value instanceof Date) return formatWireDate(value);
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return String(value);
}

export type FormListStyle = 'brackets' | 'dots';

/**
 * A form post as jQuery writes one: `name=value`, lists as `requirements[0][requirement_id]=…` (or
 * `requirements[0].requirement_id=…`), null as an empty value. Members absent from the record are left out.
 */
export function encodeForm(
  record: Record<string, unknown>,
  model: WireModel,
  style: FormListStyle = 'brackets',
): string {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(record)) {
    if (value === undefined) continue;
    const member = model.members.find((candidate) => candidate.name === name);
    if (member?.kind === 'list' && Array.isArray(value)) {
      (value as Record<string, unknown>[]).forEach((item, index) => {
        for (const [itemName, itemValue] of Object.entries(item)) {
          if (itemValue === undefined) continue;
          const key =
            style === 'brackets'
              ? `${name}[${index}][${itemName}]`
              : `${name}[${index}].${itemName}`;
          form.append(key, itemValue === null ? '' : valueText(itemValue));
        }
      });
    } else {
      form.append(name, value === null ? '' : valueText(value));
    }
  }
  return form.toString();
}

const escapeXml = (text: string) =>
  text.replace(
    /[&<>\r]/g,
    (character) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '\r': '&#xD;' })[character]!,
  );

function xmlElement(name: string, value: unknown, model: WireModel | undefined): string {
  if (value === null) return `<${name} i:nil="true"/>`;
  if (Array.isArray(value) && model) {
    const items = (value as Record<string, unknown>[]).map((item) =>
      xmlRecord(model.name, item, model, ''),
    );
    return `<${name}>${items.join('')}</${name}>`;
  }
  return `<${name}>${escapeXml(valueText(value))}</${name}>`;
}

function xmlRecord(
  name: string,
  record: Record<string, unknown>,
  model: WireModel,
  attributes: string,
): string {
  const children = Object.entries(record)
    .filter(([, value]) => value !== undefined)
    .map(([member, value]) => {
      const declared = model.members.find((candidate) => candidate.name === member);
      return xmlElement(
        member,
        value,
        declared?.kind === 'list' ? wireModelOf(declared.item()) : undefined,
      );
    });
  return `<${name}${attributes}>${children.join('')}</${name}>`;
}

/**
 * An XML post as a legacy client writes one: members in the record's own order, absent members left
 * out, null as `i:nil="true"`, in the given namespace.
 */
export function encodeXml(
  record: Record<string, unknown>,
  model: WireModel,
  namespace = 'http://schemas.datacontract.org/2004/07/PropertySales.Models',
): string {
  return xmlRecord(
    model.name,
    record,
    model,
    ` xmlns:i="${XML_SCHEMA_INSTANCE}" xmlns="${namespace}"`,
  );
}
