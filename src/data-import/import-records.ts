import {
  ExactDecimal,
  type BoundRecord,
  type WireReader,
  isStorableDate,
  type ModelState,
  MalformedBodyError,
  RequestValidationError,
  DECIMAL_PRECISION,
  DECIMAL_SCALE,
  describeValue,
  STORED_TEXT_LENGTH,
  type WireClass,
  type WireModel,
  wireModelOf,
  toValidatedDto,
} from '../wire';

/** A record that cannot be imported: the message names the file, the record and the field. */
export class ImportError extends Error {}

/** Where a record came from, for messages: `transactions.json, record 3 (transaction_id 1042)`. */
export function recordLabel(source: string, index: number, idName: string, id: unknown): string {
  return `${source}, record ${index + 1}${id === undefined || id === null ? '' : ` (${idName} ${describeValue(id)})`}`;
}

/**
 * The import's own rule on top of the wire's: every value lands in its column exactly, never rounded.
 * Decimals must fit DECIMAL(15,4), dates the years both databases' DATETIME columns hold, and text
 * its columns' STORED_TEXT_LENGTH, whether or not the wire bounds the member.
 */
function unstorableValues(
  model: WireModel,
  record: BoundRecord,
  path: () => string,
  into: ModelState,
) {
  for (const member of model.members) {
    const value = record[member.name];
    // Each check is a type test first: a key is written only for a value that fails.
    if (value instanceof ExactDecimal) {
      if (!value.fitsColumn(DECIMAL_PRECISION, DECIMAL_SCALE))
        into[`${path()}.${member.name}`] = [
          `The value '${value.toString()}' does not fit ${member.name}, a decimal of ${DECIMAL_PRECISION - DECIMAL_SCALE} whole and ${DECIMAL_SCALE} fraction digits; it is not rounded.`,
        ];
    } else if (value instanceof Date) {
      if (!isStorableDate(value))
        into[`${path()}.${member.name}`] = [
          `The date '${describeValue(value)}' of ${member.name} is outside the years 1000 to 9999 its column holds.`,
        ];
    } else if (typeof value === 'string') {
      if (value.length > STORED_TEXT_LENGTH)
        into[`${path()}.${member.name}`] = [
          `The field ${member.name} must be a string with a maximum length of ${STORED_TEXT_LENGTH}.`,
        ];
    } else if (member.kind === 'list' && Array.isArray(value)) {
      const itemModel = wireModelOf(member.item());
      value.forEach((item: unknown, index) => {
        const itemPath = () => `${path()}.${member.name}[${index}]`;
        if (item === null) into[itemPath()] = [`An item of ${member.name} is null.`];
        else if (typeof item === 'object')
          unstorableValues(itemModel, item as BoundRecord, itemPath, into);
      });
    }
  }
}

/** The record as a DTO, by the wire's rules and then the import's own. */
function toStorableDto<T extends object>(type: WireClass<T>, record: BoundRecord): T {
  const model = wireModelOf(type);
  const unstorable: ModelState = {};
  unstorableValues(model, record, () => model.parameterName, unstorable);
  let wireViolations: ModelState = {};
  let dto: T | undefined;
  try {
    dto = toValidatedDto(type, record, model.parameterName);
  } catch (error) {
    if (!(error instanceof RequestValidationError)) throw error;
    wireViolations = error.modelState;
  }
  if (dto && Object.keys(unstorable).length === 0) return dto;
  throw new RequestValidationError({ ...unstorable, ...wireViolations });
}

/** A bound record as a DTO, or an ImportError naming the record and every violation of it. */
export function validRecord<T extends object>(
  type: WireClass<T>,
  record: BoundRecord,
  label: () => string,
): T {
  try {
    return toStorableDto(type, record);
  } catch (error) {
    if (!(error instanceof RequestValidationError)) throw error;
    const violations = Object.entries(error.modelState).map(
      ([key, messages]) => `  ${key}: ${messages.join(' ')}`,
    );
    throw new ImportError(`${label()} is invalid:\n${violations.join('\n')}`);
  }
}

/**
 * Validates every record of a collection document held in memory by the same rules as a request
 * body, and reports the first invalid record with all of its violations.
 */
export function validateRecords<T extends object>(
  reader: WireReader,
  text: string,
  type: WireClass<T>,
  source: string,
  idName: keyof T & string,
): T[] {
  const model = wireModelOf(type);
  let bound: Record<string, unknown>[];
  try {
    if (!reader.decodeList) throw new MalformedBodyError('this format holds no collections.');
    bound = reader.decodeList(text, model);
  } catch (error) {
    if (error instanceof MalformedBodyError) throw new ImportError(`${source}: ${error.message}`);
    throw error;
  }
  return bound.map((record, index) =>
    validRecord(type, record, () => recordLabel(source, index, idName, record[idName])),
  );
}
