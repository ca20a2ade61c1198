import {
  type MediaTypeObject,
  type OpenAPIObject,
  type OperationObject,
  type ReferenceObject,
  type RequestBodyObject,
  type ResponseObject,
  type SchemaObject,
} from '@nestjs/swagger';
import { FORM_MEDIA_TYPE } from '../codecs/form.codec';
import { JSON_MEDIA_TYPES, JsonCodec } from '../codecs/json.codec';
import { XML_MEDIA_TYPES, type XmlCodec } from '../codecs/xml.codec';
import { declaredWireModels, type WireModel, wireModelOf } from '../model/wire-model';
import { toValidatedDto } from '../model/wire-validation';

/** The operation extension carrying a request example, until the document writes it in each format. */
export const REQUEST_EXAMPLE_EXTENSION = 'x-request-example';

type Schema = SchemaObject | ReferenceObject;

/** The wire model a media type's schema names, and whether the body is a list of it. */
function wireBodyOf(schema: Schema | undefined): { model: WireModel; list: boolean } | undefined {
  const list = schema !== undefined && 'type' in schema && schema.type === 'array';
  const record = list ? schema.items : schema;
  const name = (record as ReferenceObject | undefined)?.$ref?.split('/').pop();
  const model = declaredWireModels().find((candidate) => candidate.schemaName === name);
  return model && { model, list };
}

/**
 * An example as a module wrote it, read as the service reads a JSON body: dates and decimals become
 * values the writers write as the service sends them (member order, the service's offset, numbers).
 */
const asRead = (json: JsonCodec, model: WireModel, example: object): object =>
  toValidatedDto(model.type, json.decode(JSON.stringify(example), model), model.parameterName);

/** The form fields of a record, as the form reader binds them: a list's items as `name[i].member`. */
function formFields(model: WireModel, record: Record<string, unknown>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const member of model.members) {
    const value = record[member.name];
    if (value === null || value === undefined) continue;
    if (member.kind !== 'list') {
      fields[member.name] = value;
      continue;
    }
    const itemModel = wireModelOf(member.item());
    (value as Record<string, unknown>[]).forEach((item, index) => {
      for (const [key, itemValue] of Object.entries(formFields(itemModel, item)))
        fields[`${member.name}[${index}].${key}`] = itemValue;
    });
  }
  return fields;
}

/**
 * The form schema of a model: its members as fields, and each list item member as
 * `name[0].member`, so that a form built from the schema (Swagger UI's "Try it out") posts what the
 * form reader binds. Further items follow as `name[1].member` and on.
 */
function formSchemaOf(
  document: OpenAPIObject,
  model: WireModel,
  fields: Record<string, unknown>,
): SchemaObject {
  const schemas = document.components!.schemas!;
  const schema = schemas[model.schemaName] as SchemaObject;
  const properties: Record<string, Schema> = {};
  // Each field shows its value in the example, which a form built from the schema starts from:
  // without one, Swagger UI fills a field with a value of its own (a bound, "string"), and a null it
  // posts as the word. A form example names every member.
  const field = (name: string, property: Schema) => {
    if (!(name in fields))
      throw new Error(`The form example of ${model.schemaName} has no value for ${name}.`);
    properties[name] = { ...property, example: fields[name] };
  };
  for (const member of model.members) {
    const property = schema.properties![member.name];
    if (member.kind !== 'list') {
      field(member.name, property);
      continue;
    }
    const itemModel = wireModelOf(member.item());
    const itemSchema = schemas[itemModel.schemaName] as SchemaObject;
    for (const [name, itemProperty] of Object.entries(itemSchema.properties!))
      field(`${member.name}[0].${name}`, itemProperty);
  }
  return {
    type: 'object',
    description:
      `${model.schemaName} as form fields: each member by its name, and each item of a list by ` +
      `its index and member, \`${model.members.find((member) => member.kind === 'list')?.name ?? 'list'}[0].member\`, ` +
      '`[1]` for the next item and so on, as ASP.NET model binding reads them.',
    properties,
    ...(schema.required && { required: schema.required }),
  };
}

/**
 * Writes every example of a wire body, request and response, in each of its media types: JSON as the
 * JSON writer writes it, XML as the XML writer does (DataContractSerializer's member order), and form
 * posts as fields, with a form schema whose fields a form can post. Examples are written here, when
 * the document is made, so they carry the service's own time zone.
 */
export function writeWireExamples(document: OpenAPIObject, xml: XmlCodec): void {
  const json = new JsonCodec();
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item) as (OperationObject & Record<string, unknown>)[]) {
      const requestExample = operation[REQUEST_EXAMPLE_EXTENSION];
      delete operation[REQUEST_EXAMPLE_EXTENSION];
      const bodies: { content: Record<string, MediaTypeObject>; example: unknown }[] = [];
      const request = operation.requestBody as RequestBodyObject | undefined;
      if (request) bodies.push({ content: request.content, example: requestExample });
      for (const { content } of Object.values(operation.responses) as ResponseObject[])
        if (content) bodies.push({ content, example: content[JSON_MEDIA_TYPES[0]]?.example });
      for (const { content, example } of bodies) {
        const body = wireBodyOf(content[JSON_MEDIA_TYPES[0]]?.schema);
        if (body && example !== undefined)
          writeExamples(document, content, body, example, { json, xml });
      }
    }
  }
}

/** One body's example, in each of its media types. */
function writeExamples(
  document: OpenAPIObject,
  content: Record<string, MediaTypeObject>,
  { model, list }: { model: WireModel; list: boolean },
  example: unknown,
  { json, xml }: { json: JsonCodec; xml: XmlCodec },
): void {
  const read = list
    ? (example as object[]).map((record) => asRead(json, model, record))
    : asRead(json, model, example as object);
  const written = JSON.parse(json.encode(model, read)) as Record<string, unknown>;
  for (const mediaType of JSON_MEDIA_TYPES)
    if (content[mediaType]) content[mediaType] = { ...content[mediaType], example: written };
  for (const mediaType of XML_MEDIA_TYPES)
    if (content[mediaType])
      content[mediaType] = { ...content[mediaType], example: xml.encode(model, read) };
  if (content[FORM_MEDIA_TYPE] && !list) {
    const formSchemaName = `${model.schemaName}Form`;
    const fields = formFields(model, written);
    document.components!.schemas![formSchemaName] = formSchemaOf(document, model, fields);
    content[FORM_MEDIA_TYPE] = {
      schema: { $ref: `#/components/schemas/${formSchemaName}` },
      example: fields,
    };
  }
}
