import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { type WireReader } from '../wire/wire-codec';
import { MalformedBodyError, RequestValidationError } from '../wire/wire-errors';
import { describeValue } from '../wire/wire-fields';
import { type WireClass, wireModelOf } from '../wire/wire-model';
import { type WireFormats } from '../wire/wire-negotiation';
import { toValidatedDto } from '../wire/wire-validation';

/** A record that cannot be imported: the message names the file, the record and the field. */
export class ImportError extends Error {}

/** Where a record came from, for messages: `transactions.json, record 3 (transaction_id 1042)`. */
export function recordLabel(source: string, index: number, idName: string, id: unknown): string {
  return `${source}, record ${index + 1}${id === undefined || id === null ? '' : ` (${idName} ${describeValue(id)})`}`;
}

/**
 * Validates every record of a collection document by the same rules as a request body, and reports
 * the first invalid record with all of its violations.
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
  return bound.map((record, index) => {
    try {
      return toValidatedDto(type, record, model.parameterName);
    } catch (error) {
      if (!(error instanceof RequestValidationError)) throw error;
      const violations = Object.entries(error.modelState).map(
        ([key, messages]) => `  ${key}: ${messages.join(' ')}`,
      );
      throw new ImportError(
        `${recordLabel(source, index, idName, record[idName])} is invalid:\n${violations.join('\n')}`,
      );
    }
  });
}

const MEDIA_TYPE_OF_EXTENSION: Record<string, string> = {
  '.json': 'application/json',
  '.xml': 'application/xml',
};

/** Reads a file in one of the service's own formats, chosen by its extension. */
export async function readRecordsFile<T extends object>(
  path: string,
  formats: WireFormats,
  type: WireClass<T>,
  idName: keyof T & string,
): Promise<T[]> {
  const mediaType = MEDIA_TYPE_OF_EXTENSION[extname(path).toLowerCase()];
  const reader = mediaType === undefined ? undefined : formats.readerFor(mediaType);
  if (!reader)
    throw new ImportError(
      `${path}: the file must be JSON (.json) or XML (.xml) in the service's own shape.`,
    );
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ImportError(
      `${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`,
    );
  }
  return validateRecords(reader, text, type, path, idName);
}
