import { stringify as stringifyCsv } from 'csv-stringify/sync';
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import {
  formatWireDate,
  JsonCodec,
  type WireClass,
  type WireFormats,
  type WireModel,
  wireModelOf,
} from '../wire';
import { neutralised } from './csv-formulas';
import { ImportError } from './import-records';
import { formatOf, type ListFile } from './record-files';

/** Writes records to a file one at a time, in the shape the import reads back. */
export interface RecordWriter<T> {
  write(record: T): Promise<void>;
  /** Closes the document and the file. */
  end(): Promise<void>;
}

/** A file written with backpressure: memory holds what the disk has not yet taken, a little. */
class OutputFile {
  private readonly stream: WriteStream;
  private failure?: Error;

  constructor(readonly path: string) {
    this.stream = createWriteStream(path);
    this.stream.on('error', (error) => (this.failure = error));
  }

  async write(text: string): Promise<void> {
    this.check();
    if (!this.stream.write(text)) await once(this.stream, 'drain');
    this.check();
  }

  async end(): Promise<void> {
    this.check();
    this.stream.end();
    await once(this.stream, 'finish');
  }

  private check(): void {
    if (this.failure)
      throw new ImportError(
        `${this.path}: cannot be written (${(this.failure as NodeJS.ErrnoException).code ?? this.failure.message}).`,
      );
  }
}

const JSON_CODEC = new JsonCodec();

/** A JSON array, one record a line, each as the service writes it. */
function jsonWriter<T extends object>(file: OutputFile, model: WireModel): RecordWriter<T> {
  let first = true;
  return {
    write: (record) => {
      const text = `${first ? '[\n' : ',\n'}${JSON_CODEC.encode(model, record)}`;
      first = false;
      return file.write(text);
    },
    end: async () => {
      await file.write(first ? '[]\n' : '\n]\n');
      await file.end();
    },
  };
}

/** An `ArrayOf…` document, each record as the service writes it inside a collection. */
function xmlWriter<T extends object>(
  file: OutputFile,
  model: WireModel,
  formats: WireFormats,
): RecordWriter<T> {
  const codec = formats.forResponse('application/xml', undefined).writer;
  // The collection's own tags, as the codec writes them around its records.
  const close = `</${model.collectionName}>`;
  const open = `${codec.encode(model, []).slice(0, -' />'.length)}>`;
  let written = false;
  return {
    write: (record) => {
      const text = codec.encode(model, [record]);
      const item = text.slice(open.length, text.length - close.length);
      const prefix = written ? '' : open;
      written = true;
      return file.write(`${prefix}${item}`);
    },
    end: async () => {
      await file.write(written ? close : codec.encode(model, []));
      await file.end();
    },
  };
}

/**
 * A CSV field of a member's value: text as is unless a spreadsheet would run it as a formula, dates
 * as in JSON; empty for null, `""` for ''.
 */
function csvValue(value: string | number | boolean | Date | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return formatWireDate(value);
  if (typeof value === 'string') return neutralised(value);
  return String(value);
}

const CSV_OPTIONS = { quoted_match: /^$/ } as const;

/** CSV with a header of the wire member names; a model's list member goes to its own file. */
function csvWriter<T extends object>(
  file: OutputFile,
  model: WireModel,
  idName: string,
  list: { file: OutputFile; member: string; model: WireModel } | undefined,
): RecordWriter<T> {
  const scalars = model.members.filter((member) => member.kind !== 'list').map((m) => m.name);
  const line = (values: unknown[]) =>
    stringifyCsv(
      [values.map((value) => csvValue(value as Parameters<typeof csvValue>[0]))],
      CSV_OPTIONS,
    );
  // The list file names its parent by `idName`, unless its records already carry it.
  const itemNames = list?.model.members.map((member) => member.name) ?? [];
  const joined = itemNames.includes(idName) ? itemNames : [idName, ...itemNames];
  let started = false;
  return {
    write: async (record) => {
      const values = record as Record<string, unknown>;
      if (!started) {
        started = true;
        await file.write(line(scalars));
        if (list) await list.file.write(line(joined));
      }
      await file.write(line(scalars.map((name) => values[name])));
      if (!list) return;
      const items = (values[list.member] ?? []) as Record<string, unknown>[];
      for (const item of items)
        await list.file.write(
          line(
            joined.map((name) =>
              name === idName && !(name in item) ? values[idName] : item[name],
            ),
          ),
        );
    },
    end: async () => {
      if (!started) {
        await file.write(line(scalars));
        if (list) await list.file.write(line(joined));
      }
      await file.end();
      await list?.file.end();
    },
  };
}

/**
 * A model as its files hold it: the members the import reads, so that an export imports back whole
 * and exports again to the same bytes. A read-only member (a row version) counts the changes of a
 * row in one database; an import gives its rows versions of their own.
 */
function fileModelOf(type: WireClass): WireModel {
  const model = wireModelOf(type);
  const read = new Set(model.readMembers);
  return {
    ...model,
    members: model.readMembers,
    xmlMembers: model.xmlMembers.filter((member) => read.has(member)),
  };
}

/** Opens a file for export, its format by its extension, as the import reads it back. */
export function recordWriter<T extends object>(
  path: string,
  formats: WireFormats,
  type: WireClass<T>,
  idName: keyof T & string,
  list?: ListFile,
): RecordWriter<T> {
  const format = formatOf(path);
  if (list && format !== 'csv')
    throw new ImportError(`${list.path}: a separate list file goes with a CSV file only.`);
  const model = fileModelOf(type);
  const file = new OutputFile(path);
  switch (format) {
    case 'json':
      return jsonWriter(file, model);
    case 'xml':
      return xmlWriter(file, model, formats);
    case 'csv': {
      const member = model.members.find((candidate) => candidate.kind === 'list');
      return csvWriter(
        file,
        model,
        idName,
        list && member?.kind === 'list'
          ? {
              file: new OutputFile(list.path),
              member: member.name,
              model: wireModelOf(member.item()),
            }
          : undefined,
      );
    }
  }
}
