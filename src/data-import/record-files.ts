import { createReadStream, type Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { Readable } from 'node:stream';
import { CsvError, parse as parseCsv, type Parser as CsvParser } from 'csv-parse';
import {
  type BoundRecord,
  JsonCodec,
  MalformedBodyError,
  type WireClass,
  type WireModel,
  wireModelOf,
  XmlCollectionReader,
} from '../wire';
import { restored } from './csv-formulas';
import { ImportError, recordLabel, validRecord } from './import-records';
import { records } from './progress';
import {
  type FilePosition,
  ItemTooLongError,
  type JsonArrayItem,
  jsonArrayItems,
  NotAJsonArrayError,
  positionIn,
} from './json-array-items';

/**
 * An import file read as a stream of validated records: iterating it opens the file anew (an import
 * that meets a deadlock runs again from the start), and it tells how far the reading has come.
 */
export interface RecordFile<T> extends AsyncIterable<T> {
  readonly source: string;
  readonly totalBytes: number;
  readonly bytesRead: number;
}

/** The optional second file of a CSV import: the records of the list member, one row each. */
export interface ListFile {
  readonly path: string;
}

const JSON_CODEC = new JsonCodec();

type Format = 'json' | 'xml' | 'csv';
const FORMAT_OF_EXTENSION: Record<string, Format> = {
  '.json': 'json',
  '.xml': 'xml',
  '.csv': 'csv',
};

export function formatOf(path: string): Format {
  const format = FORMAT_OF_EXTENSION[extname(path).toLowerCase()];
  if (!format)
    throw new ImportError(
      `${path}: the file must be JSON (.json), XML (.xml) or CSV (.csv) in the service's own shape.`,
    );
  return format;
}

const unreadable = (path: string, error: unknown) =>
  new ImportError(`${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);

/** The file's bytes, counted into `progress` as they are read. */
async function* bytesOf(path: string, progress: { bytesRead: number }): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of createReadStream(path, { highWaterMark: 256 * 1024 })) {
      progress.bytesRead += (chunk as Buffer).length;
      yield chunk as Buffer;
    }
  } catch (error) {
    if (error instanceof ImportError) throw error;
    throw unreadable(path, error);
  }
}

async function* textOf(bytes: AsyncIterable<Buffer>): AsyncGenerator<string> {
  // A byte order mark is dropped; a character split between chunks is joined.
  const decoder = new TextDecoder('utf-8');
  for await (const chunk of bytes) yield decoder.decode(chunk, { stream: true });
  yield decoder.decode();
}

// What the codec's reader treats as a numeral a double may not carry exactly (16 significant digits).
const LONG_NUMERAL = /\d(?:\.?\d){15}/;

/**
 * One item of a JSON array, bound by the codec as a request body is. Standard JSON whose numerals a
 * double carries exactly (nearly every record) is parsed by JSON.parse; anything else, such as
 * Json.NET's lenient syntax or a long decimal, by the codec's own reader, which keeps numerals exact.
 */
function bindJsonItem(item: string, model: WireModel): BoundRecord[] {
  let parsed: unknown;
  try {
    parsed = LONG_NUMERAL.test(item) ? undefined : JSON.parse(item);
  } catch {
    parsed = undefined;
  }
  return parsed === undefined
    ? JSON_CODEC.decodeList(`[${item}]`, model)
    : JSON_CODEC.bindList([parsed], model);
}

const at = ({ line, column }: FilePosition) => `line ${line}, column ${column}`;

/**
 * A record longer than IMPORT_MAX_RECORD_SIZE, refused before it is parsed: reading one takes many
 * times its size in memory. `where` is the line (and column) it starts at, or has reached.
 */
const tooLong = (path: string, record: number, where: string, limit: number) =>
  new ImportError(
    `${path}, record ${record}, ${where}: The record is longer than ${limit} characters, the most IMPORT_MAX_RECORD_SIZE takes.`,
  );

// The codec speaks of a request body, and of an offset in the text it read.
const INVALID_JSON = /^The request body is not valid JSON: (.*) at (\d+)\.$/;

/**
 * The codec's message on one item, said of the record in the file: `transactions.json, record 2001,
 * line 4003, column 17: The record is not valid JSON: ',' or '}' was expected.`
 */
function itemError(path: string, index: number, item: JsonArrayItem, message: string): ImportError {
  const invalid = INVALID_JSON.exec(message);
  // The item was read as `[item]`: its offsets are one less.
  const where = invalid ? positionIn(item.text, Math.max(Number(invalid[2]) - 1, 0), item) : item;
  const said = invalid
    ? `The record is not valid JSON: ${invalid[1]}.`
    : message.replace(/^The request body|^Record \d+/, 'The record');
  return new ImportError(`${path}, record ${index + 1}, ${at(where)}: ${said}`);
}

/** A JSON array, item by item, each read by the service's own JSON rules. */
async function* jsonRecords(
  path: string,
  model: WireModel,
  maxRecordSize: number,
  progress: { bytesRead: number },
): AsyncGenerator<{ record: BoundRecord; index: number }> {
  let index = 0;
  try {
    for await (const item of jsonArrayItems(textOf(bytesOf(path, progress)), maxRecordSize)) {
      let bound: BoundRecord[];
      try {
        bound = bindJsonItem(item.text, model);
      } catch (error) {
        if (!(error instanceof MalformedBodyError)) throw error;
        throw itemError(path, index, item, error.message);
      }
      yield { record: bound[0], index: index++ };
    }
  } catch (error) {
    if (error instanceof ItemTooLongError)
      throw tooLong(path, error.item, at(error.at), maxRecordSize);
    if (error instanceof NotAJsonArrayError)
      throw new ImportError(
        `${path}${error.at ? `, ${at(error.at)}` : ''}: the file must be a JSON array of ${model.name}; ${error.message}.`,
      );
    throw error;
  }
}

// saxes prefixes its messages with the line and the 0-based column after the character it stopped
// at: that character's own column counted from 1 (0 at a line's start, where nothing was read).
const NOT_WELL_FORMED = /^The request body is not well-formed XML: (\d+):(\d+): (.*)$/;

/** An `ArrayOf…` document, each record bound by the XML codec's rules as its element closes. */
async function* xmlRecords(
  path: string,
  model: WireModel,
  maxRecordSize: number,
  progress: { bytesRead: number },
): AsyncGenerator<{ record: BoundRecord; index: number }> {
  const reader = new XmlCollectionReader(model);
  let index = 0;
  // The characters read since a piece last ended a record, and the line reached: the open record
  // is at most that long, and is refused once that passes the limit (within a piece of it).
  let unended = 0;
  let line = 1;
  const readable = (error: unknown, ended = false) => {
    if (!(error instanceof MalformedBodyError)) return error;
    const record = reader.failedRecord;
    if (record !== undefined) return new ImportError(`${path}, record ${record}: ${error.message}`);
    const malformed = NOT_WELL_FORMED.exec(error.message);
    // At the end, every record read so far was yielded: the count is exact.
    const after = ended ? ` (the file ends after ${records(index)})` : '';
    return new ImportError(
      malformed
        ? `${path}, line ${malformed[1]}, column ${Math.max(Number(malformed[2]), 1)}: The file is not well-formed XML: ${malformed[3].replace(/\.$/, '')}${after}.`
        : `${path}: ${error.message.replace(/^The request body/, 'The file')}`,
    );
  };
  for await (const piece of textOf(bytesOf(path, progress))) {
    let records: BoundRecord[];
    try {
      records = reader.write(piece);
    } catch (error) {
      throw readable(error);
    }
    for (let feed = piece.indexOf('\n'); feed >= 0; feed = piece.indexOf('\n', feed + 1)) line++;
    unended = records.length > 0 ? 0 : unended + piece.length;
    if (unended > maxRecordSize) throw tooLong(path, index + 1, `line ${line}`, maxRecordSize);
    for (const record of records) yield { record, index: index++ };
  }
  try {
    reader.end();
  } catch (error) {
    throw readable(error, true);
  }
}

/**
 * CSV rows by their header: RFC 4180 quoting, UTF-8 with or without a byte order mark. An empty field
 * is null, as a database export writes NULL; a quoted empty field (`""`) is the empty string; a field
 * the export kept from running as a formula is read without the `'` it put before it.
 */
function csvRows(path: string, maxRecordSize: number, progress: { bytesRead: number }): CsvParser {
  const parser = parseCsv({
    columns: true,
    bom: true,
    max_record_size: maxRecordSize,
    cast: (value, context) => (value === '' && !context.quoting ? null : restored(value)),
  });
  Readable.from(bytesOf(path, progress))
    .on('error', (error) => parser.destroy(error))
    .pipe(parser);
  return parser;
}

const booleanNames = new WeakMap<WireModel, ReadonlySet<string>>();

/**
 * SQL Server exports a bit column as 1 or 0: each is read as the boolean it stands for, where the
 * column is a boolean member; any other text is read by the JSON reader's rules.
 */
function readBits(row: Record<string, unknown>, model: WireModel): Record<string, unknown> {
  let names = booleanNames.get(model);
  if (!names) {
    names = new Set(
      model.members
        .filter((member) => member.kind === 'boolean')
        .map((member) => member.name.toLowerCase()),
    );
    booleanNames.set(model, names);
  }
  for (const key in row) {
    const value = row[key];
    if ((value === '1' || value === '0') && names.has(key.toLowerCase())) row[key] = value === '1';
  }
  return row;
}

/** csv-parse's message, which names the line, with the record it was reading. */
function csvError(path: string, error: unknown, maxRecordSize: number): Error {
  if (error instanceof ImportError) return error;
  if (error instanceof CsvError) {
    const { records, lines } = error as CsvError & { records: number; lines: number };
    if (error.code === 'CSV_MAX_RECORD_SIZE')
      return tooLong(path, records + 1, `line ${lines}`, maxRecordSize);
    return new ImportError(
      `${path}, record ${records + 1}, line ${lines}: ${error.message.replace(/\.?$/, '.')}`,
    );
  }
  return new ImportError(`${path}: ${(error as Error).message}`);
}

/**
 * Rows of a CSV file, bound by the JSON reader's rules for strings (numbers, dates and booleans as
 * §3 of the contract reads them in JSON), bits written 1 or 0 read as booleans. With a list file, each record's list member holds the list
 * file's rows whose `idName` equals the record's; the list file lists them in the records' order.
 */
async function* csvRecords(
  path: string,
  model: WireModel,
  idName: string,
  list: ListFile | undefined,
  maxRecordSize: number,
  progress: { bytesRead: number },
): AsyncGenerator<{ record: BoundRecord; index: number }> {
  const listMember = model.members.find((member) => member.kind === 'list');
  const itemModel = listMember?.kind === 'list' ? wireModelOf(listMember.item()) : undefined;
  const items = list && csvRows(list.path, maxRecordSize, { bytesRead: 0 })[Symbol.asyncIterator]();
  let pending: { row: Record<string, unknown>; index: number } | undefined;
  let itemIndex = 0;
  const nextItem = async () => {
    if (!items) return undefined;
    try {
      const next = await items.next();
      return next.done
        ? undefined
        : { row: next.value as Record<string, unknown>, index: itemIndex++ };
    } catch (error) {
      throw csvError(list.path, error, maxRecordSize);
    }
  };
  // The id's column, as the file's header spells it (any case), found in its first row.
  const idReader = () => {
    let key: string | undefined | null = null;
    return (row: Record<string, unknown>) => {
      key ??= Object.keys(row).find((name) => name.toLowerCase() === idName.toLowerCase());
      return key === undefined ? undefined : (row[key] as string | null);
    };
  };
  const recordId = idReader();
  const itemId = idReader();
  pending = await nextItem();
  let index = 0;
  const rows = csvRows(path, maxRecordSize, progress);
  try {
    for await (const row of rows as AsyncIterable<Record<string, unknown>>) {
      if (items && listMember) {
        const id = recordId(row);
        const listed: Record<string, unknown>[] = [];
        while (pending && id != null && itemId(pending.row) === id) {
          listed.push(itemModel ? readBits(pending.row, itemModel) : pending.row);
          pending = await nextItem();
        }
        row[listMember.name] = listed;
      }
      yield { record: JSON_CODEC.bindList([readBits(row, model)], model)[0], index: index++ };
    }
  } catch (error) {
    throw csvError(path, error, maxRecordSize);
  }
  if (pending) {
    throw new ImportError(
      `${list!.path}, record ${pending.index + 1} (${idName} ${String(itemId(pending.row))}): no record of ${path} at this place has that ${idName}; the file lists ${listMember?.name} in the order of ${path}.`,
    );
  }
}

/**
 * Opens an import file by its extension, as a stream of records validated one by one; a record
 * longer than `maxRecordSize` characters (IMPORT_MAX_RECORD_SIZE) is refused before it is parsed.
 */
export async function recordFile<T extends object>(
  path: string,
  type: WireClass<T>,
  idName: keyof T & string,
  maxRecordSize: number,
  list?: ListFile,
): Promise<RecordFile<T>> {
  const format = formatOf(path);
  if (list && format !== 'csv')
    throw new ImportError(`${list.path}: a separate list file goes with a CSV file only.`);
  let file: Stats;
  try {
    file = await stat(path);
  } catch (error) {
    throw unreadable(path, error);
  }
  // A pipe (or a device) gives its records once: what was read of it is not there to read again.
  let readBefore = false;
  const model = wireModelOf(type);
  const progress = { bytesRead: 0 };
  const bound = () => {
    progress.bytesRead = 0;
    switch (format) {
      case 'json':
        return jsonRecords(path, model, maxRecordSize, progress);
      case 'xml':
        return xmlRecords(path, model, maxRecordSize, progress);
      case 'csv':
        return csvRecords(path, model, idName, list, maxRecordSize, progress);
    }
  };
  return {
    source: path,
    totalBytes: file.size,
    get bytesRead() {
      return progress.bytesRead;
    },
    async *[Symbol.asyncIterator]() {
      if (readBefore && !file.isFile())
        throw new ImportError(
          `${path}: the database had the import's transaction run again (contention), and a pipe is ` +
            'read once: nothing was written. Run the import again, or import from a file.',
        );
      readBefore = true;
      for await (const { record, index } of bound())
        yield validRecord(type, record, () => recordLabel(path, index, idName, record[idName]));
    },
  };
}
