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
import {
  declaredWireModels,
  type WireMember,
  type WireModel,
  wireModelOf,
} from '../model/wire-model';
import { declaredRuleOf } from '../model/wire-fields';
import { MalformedBodyError, RequestValidationError } from '../model/wire-errors';
import { toValidatedDto, wireViolations } from '../model/wire-validation';

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

/** An example the wire would refuse: the start stops, naming the example, its members and rules. */
export class InvalidExampleError extends Error {}

/**
 * An example as a module wrote it, read as the service reads a JSON body: dates and decimals become
 * values the writers write as the service sends them (member order, the service's offset, numbers).
 * An example validation refuses stops the start with each broken rule: its key and member, its
 * message and the option declaring it (`commission.rate (Commission.rate): The field rate must be at
 * most 0.2 (DecimalField({ exactMax: 0.2 }))`).
 */
function asRead(
  json: JsonCodec,
  model: WireModel,
  example: object,
  where: string,
  sent: boolean,
): object {
  const text = JSON.stringify(example);
  const invalid = (reasons: string) =>
    new InvalidExampleError(
      `The example of the ${where} is not a valid ${model.schemaName}: ${reasons}`,
    );
  let bound;
  try {
    // An answer's example holds what the service writes: its read-only members too.
    bound = sent ? json.decode(text, model) : json.decodeAnswer(text, model);
  } catch (error) {
    if (error instanceof MalformedBodyError) throw invalid(error.message);
    throw error;
  }
  try {
    return toValidatedDto(model.type, bound, model.parameterName);
  } catch (error) {
    if (!(error instanceof RequestValidationError)) throw error;
    const violations = wireViolations(
      model.type,
      json.decode(text, model),
      model.parameterName,
    ).map(
      ({ key, message, member, rule, model: owner }) =>
        `${key} (${owner.schemaName}.${member.name}): ${message.replace(/\.$/, '')} (${declaredRuleOf(member, rule)})`,
    );
    throw invalid(`${violations.join('; ')}.`);
  }
}

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
 * The fields a form must carry: each required member, and for a required list, the required members
 * of its first item (a form says a list is there by its items).
 */
function formRequired(
  schemas: Record<string, SchemaObject | ReferenceObject>,
  model: WireModel,
  required: readonly string[],
): string[] {
  return model.members.flatMap((member) => {
    if (!required.includes(member.name)) return [];
    if (member.kind !== 'list') return [member.name];
    const itemModel = wireModelOf(member.item());
    const itemRequired = (schemas[itemModel.schemaName] as SchemaObject).required ?? [];
    return itemRequired.map((name) => `${member.name}[0].${name}`);
  });
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
  const whole = wireModelOf(model.type).members;
  const listName = whole.find((member) => member.kind === 'list')?.name ?? 'list';
  const properties: Record<string, Schema> = {};
  // Each field shows its value in the example, which a form built from the schema starts from:
  // without one, Swagger UI fills a field with a value of its own (a bound, "string"), and a null it
  // posts as the word. So the form lists exactly the fields its example names.
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
      `its index and member, \`${listName}[0].member\`, ` +
      '`[1]` for the next item and so on, as ASP.NET model binding reads them.' +
      (model.members.length < whole.length
        ? ` The fields are those of the example; any other member of ${model.schemaName} is read as well.`
        : ''),
    properties,
    ...(schema.required && { required: formRequired(schemas, model, schema.required) }),
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
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item) as [
      string,
      OperationObject & Record<string, unknown>,
    ][]) {
      const requestExample = operation[REQUEST_EXAMPLE_EXTENSION];
      delete operation[REQUEST_EXAMPLE_EXTENSION];
      const named = `${method.toUpperCase()} ${path}${operation.operationId ? ` (${operation.operationId})` : ''}`;
      const bodies: {
        content: Record<string, MediaTypeObject>;
        example: unknown;
        where: string;
        sent: boolean;
      }[] = [];
      const request = operation.requestBody as RequestBodyObject | undefined;
      if (request)
        bodies.push({
          content: request.content,
          example: requestExample,
          where: `request body of ${named}`,
          sent: true,
        });
      for (const [status, { content }] of Object.entries(operation.responses) as [
        string,
        ResponseObject,
      ][])
        if (content)
          bodies.push({
            content,
            example: content[JSON_MEDIA_TYPES[0]]?.example,
            where: `${status} response of ${named}`,
            sent: false,
          });
      for (const { content, example, where, sent } of bodies) {
        const body = wireBodyOf(content[JSON_MEDIA_TYPES[0]]?.schema);
        if (body && example !== undefined)
          writeExamples(document, content, body, example, { json, xml }, where, sent);
      }
    }
  }
}

/**
 * The model as a request example shows it: only the members the example names. A request example is
 * what "Try it out" sends, and an absent member can mean other than a null one (UpdateAgents keeps an
 * absent agent and clears a null one). A response example shows every member, as the service writes.
 */
function namedMembersOf(model: WireModel, example: object): WireModel {
  const named = (member: WireMember) => member.name in example;
  return {
    ...model,
    members: model.members.filter(named),
    xmlMembers: model.xmlMembers.filter(named),
  };
}

/** One body's example, in each of its media types. */
function writeExamples(
  document: OpenAPIObject,
  content: Record<string, MediaTypeObject>,
  { model, list }: { model: WireModel; list: boolean },
  example: unknown,
  { json, xml }: { json: JsonCodec; xml: XmlCodec },
  where: string,
  sent: boolean,
): void {
  const read = list
    ? (example as object[]).map((record, index) =>
        asRead(json, model, record, `${where}[${index}]`, sent),
      )
    : asRead(json, model, example as object, where, sent);
  const shown = sent && !list ? namedMembersOf(model, example as object) : model;
  const written = JSON.parse(json.encode(shown, read)) as Record<string, unknown>;
  for (const mediaType of JSON_MEDIA_TYPES)
    if (content[mediaType]) content[mediaType] = { ...content[mediaType], example: written };
  for (const mediaType of XML_MEDIA_TYPES)
    if (content[mediaType])
      content[mediaType] = { ...content[mediaType], example: xml.encode(shown, read) };
  if (content[FORM_MEDIA_TYPE] && !list) {
    const formSchemaName = `${model.schemaName}Form`;
    const fields = formFields(shown, written);
    document.components!.schemas![formSchemaName] = formSchemaOf(document, shown, fields);
    content[FORM_MEDIA_TYPE] = {
      schema: { $ref: `#/components/schemas/${formSchemaName}` },
      example: fields,
    };
  }
}
