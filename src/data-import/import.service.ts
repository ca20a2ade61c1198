import { setImmediate as nextTurn } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager, type FindOptionsSelect, In } from 'typeorm';
import { UnitOfWork } from '../database/unit-of-work';
import {
  RequirementAcquisitionDto,
  RequirementDto,
  CATALOGUE_VERSION_ROW,
  CatalogueVersionEntity,
  RequirementAcquisitionEntity,
  RequirementTypeEntity,
} from '../requirement';
import {
  AGENT_CHAIN_FIELDS,
  type AgentChainValue,
  type AgentChange,
  TransactionDto,
  AgentAssignmentEntity,
  TransactionRequirementEntity,
  TransactionEntity,
} from '../transaction';
import { pickWireScalars } from '../wire';
import { IdPositions } from './id-positions';
import { ImportError, recordLabel } from './import-records';
import { DATA_IMPORTED } from './import.events';
import { type EncodedRow, MultiRowStatements } from './import-statements';

/** Validated records to load, read in order, labelled by where they came from (a file) for messages. */
export interface RecordSource<T> {
  readonly source: string;
  /** Iterated once for each attempt of the import: a file source opens its file anew. */
  readonly records: Iterable<T> | AsyncIterable<T>;
}

export interface ImportBatch {
  readonly requirements?: RecordSource<RequirementDto>;
  readonly transactions?: RecordSource<TransactionDto>;
}

export interface ImportCount {
  created: number;
  updated: number;
  /** The lowest and highest id written; null while none is. */
  lowestId: number | null;
  highestId: number | null;
}

const noCount = (): ImportCount => ({ created: 0, updated: 0, lowestId: null, highestId: null });

/** Counts `ids` as written into `count`'s id range. */
function countIds(count: ImportCount, ids: readonly number[]): void {
  for (const id of ids) {
    if (count.lowestId === null || id < count.lowestId) count.lowestId = id;
    if (count.highestId === null || id > count.highestId) count.highestId = id;
  }
}

export interface ImportSummary {
  readonly requirementTypes: ImportCount;
  readonly acquisitions: ImportCount;
  readonly transactions: ImportCount;
}

/** Called as records are read: the source and how many of its records were read and checked (0 as it starts). */
export type ImportProgress = (source: string, records: number) => void;

/** Records read, checked and handed to the database together; the writes take them in this unit. */
const BATCH = 1000;
/** Batches read ahead of the one being written: reading overlaps writing, memory stays bounded. */
const BATCHES_AHEAD = 2;

/**
 * Reading gives the event loop a turn at least this often: the database's answer to one statement is
 * taken, and the next statement sent, while the file is read, instead of after a whole piece of it.
 */
const READ_SLICE_MS = 2;

/** Tells when reading has run for READ_SLICE_MS without a turn of the event loop. */
class ReadSlices {
  private start = performance.now();

  /** Gives the event loop its turn when the slice is spent. */
  async pause(): Promise<void> {
    if (performance.now() - this.start < READ_SLICE_MS) return;
    await nextTurn();
    this.start = performance.now();
  }
}

/** Writes one after the other, while the reader goes on up to BATCHES_AHEAD batches ahead. */
class WritePipeline {
  private tail: Promise<void> = Promise.resolve();
  private readonly queued: Promise<void>[] = [];

  async add(write: () => Promise<void>): Promise<void> {
    this.tail = this.tail.then(write);
    const written = this.tail;
    // Awaited below or by `settle`; never left unhandled meanwhile.
    written.catch(() => undefined);
    this.queued.push(written);
    if (this.queued.length > BATCHES_AHEAD) await this.queued.shift();
  }

  /** Waits for every write; the first failure, if any, is thrown. */
  async settle(): Promise<void> {
    this.queued.length = 0;
    await this.tail;
  }

  /** Runs the reading and then the remaining writes; if the reading fails, no write is left running. */
  static async run(read: (pipeline: WritePipeline) => Promise<void>): Promise<void> {
    const pipeline = new WritePipeline();
    try {
      await read(pipeline);
    } catch (error) {
      await pipeline.tail.catch(() => undefined);
      throw error;
    }
    await pipeline.settle();
  }
}

/** Where each id was first seen: `firstPosition` records `position` for an id not seen before. */
interface FirstPositions {
  firstPosition(id: number, position: number): number | undefined;
}

/** A few ids (a record's list): a Map, far cheaper to create than the typed arrays of IdPositions. */
class FewIdPositions extends Map<number, number> implements FirstPositions {
  firstPosition(id: number, position: number): number | undefined {
    const first = this.get(id);
    if (first === undefined) this.set(id, position);
    return first;
  }
}

/** Up to this many ids expected, a Map keeps them; more, the typed arrays of IdPositions. */
const FEW_IDS = 256;

/**
 * Refuses a record whose id repeats an earlier one's: an import names each record once. It keeps the
 * position of each id, not its label, so a million records cost 16 MB.
 */
class UniqueIds {
  private readonly seen: FirstPositions;

  /** `expected`: about how many ids are checked, when it is known. */
  constructor(
    private readonly describe: (position: number, id: number) => string,
    expected?: number,
  ) {
    this.seen =
      expected !== undefined && expected <= FEW_IDS
        ? new FewIdPositions()
        : new IdPositions(expected);
  }

  check(id: number, position: number): void {
    const first = this.seen.firstPosition(id, position);
    if (first !== undefined)
      throw new ImportError(
        `${this.describe(position, id)} repeats the id of ${this.describe(first, id)}.`,
      );
  }
}

/** Rows a catalogue statement carries: far below both databases' limits on bound parameters. */
const CATALOGUE_CHUNK = 200;

/** What an update of stored transactions reads of each: its id, version and agent chain. */
const STORED_CHAIN: FindOptionsSelect<TransactionEntity> = Object.fromEntries(
  ['transaction_id', 'row_version', ...AGENT_CHAIN_FIELDS].map((field) => [field, true]),
);

/** `where` and `field` are written out only for a missing value: most records have it. */
function required(
  value: number | null | undefined,
  where: () => string,
  field: () => string,
): number {
  if (value !== null && value !== undefined) return value;
  const name = field();
  throw new ImportError(
    `${where()}: ${name}: The ${name.slice(name.lastIndexOf('.') + 1)} field is required.`,
  );
}

type TransactionRow = Omit<TransactionEntity, 'row_version' | 'checklist'>;
type ChecklistRow = Omit<TransactionRequirementEntity, 'transaction' | 'requirement'>;

/**
 * A transaction ready to write, encoded as it is read: its row, its agent chain (to compare with the
 * stored one) and its checklist when the record carries one.
 */
interface TransactionWrite {
  readonly id: number;
  readonly chain: readonly AgentChainValue[];
  readonly row: EncodedRow;
  readonly checklist?: readonly EncodedRow[];
}

/**
 * Loads the catalogue and transactions in one database transaction: all or nothing, upserting by id,
 * so running the same import twice leaves the same data. Records are read, checked and written in
 * batches, the reading running ahead of the writing, so memory holds a few batches whatever the
 * source's size. A transaction's checklist is replaced by the record's `requirements` when the record
 * carries a list; items refer to catalogue records by id. A stored transaction whose agent chain
 * changes gets an agent-history record, as UpdateAgents writes one.
 */
@Injectable()
export class ImportService {
  private readonly transactionRows: MultiRowStatements<TransactionRow>;
  private readonly checklistRows: MultiRowStatements<ChecklistRow>;
  private readonly mysql: boolean;

  constructor(
    private readonly unitOfWork: UnitOfWork,
    @InjectDataSource() dataSource: DataSource,
  ) {
    this.mysql = dataSource.options.type !== 'better-sqlite3';
    this.transactionRows = new MultiRowStatements(
      dataSource,
      TransactionEntity,
      ['transaction_id'],
      'row_version',
    );
    this.checklistRows = new MultiRowStatements(dataSource, TransactionRequirementEntity, [
      'transaction_id',
      'requirement_id',
    ]);
  }

  /** Imports `batch`; the run's DataImported event commits with it, when it wrote anything. */
  run(batch: ImportBatch, progress: ImportProgress = () => undefined): Promise<ImportSummary> {
    return this.unitOfWork.bulkWrite((manager, publish) =>
      this.withoutForeignKeyChecks(manager, async () => {
        const summary: ImportSummary = {
          requirementTypes: noCount(),
          acquisitions: noCount(),
          transactions: noCount(),
        };
        if (batch.requirements)
          await this.importRequirements(manager, batch.requirements, summary, progress);
        if (batch.transactions)
          await this.importTransactions(manager, batch.transactions, summary, progress);
        const { transactions, requirementTypes, acquisitions } = summary;
        if (transactions.lowestId !== null || requirementTypes.lowestId !== null) {
          const stamp = new Date();
          publish({
            type: DATA_IMPORTED,
            time: stamp,
            data: {
              stamp,
              transactions_created: transactions.created,
              transactions_updated: transactions.updated,
              transaction_id_from: transactions.lowestId,
              transaction_id_to: transactions.highestId,
              requirement_types_created: requirementTypes.created,
              requirement_types_updated: requirementTypes.updated,
              requirement_type_id_from: requirementTypes.lowestId,
              requirement_type_id_to: requirementTypes.highestId,
              acquisitions_created: acquisitions.created,
              acquisitions_updated: acquisitions.updated,
            },
          });
        }
        return summary;
      }),
    );
  }

  /**
   * On MySQL/MariaDB, the work runs without the server's foreign key checks, as a bulk load does (a
   * fifth of the server's time on each checklist row): the import makes the same checks itself. A
   * checklist item must name a catalogue record read, under a shared lock, at the start of the
   * transactions; its transaction and an acquisition's type are written just before it in the same
   * transaction. SQLite keeps its checks: they cost it little, and it cannot turn them off inside a
   * transaction.
   */
  private async withoutForeignKeyChecks<T>(
    manager: EntityManager,
    work: () => Promise<T>,
  ): Promise<T> {
    if (!this.mysql) return work();
    await manager.query('SET SESSION foreign_key_checks = 0');
    try {
      return await work();
    } finally {
      // The connection goes back to the pool: its next user has the checks again.
      await manager.query('SET SESSION foreign_key_checks = 1');
    }
  }

  private async importRequirements(
    manager: EntityManager,
    { source, records }: RecordSource<RequirementDto>,
    summary: ImportSummary,
    progress: ImportProgress,
  ): Promise<void> {
    const typeIds = new UniqueIds((position, id) =>
      recordLabel(source, position, 'requirement_type_id', id),
    );
    let types: RequirementTypeEntity[] = [];
    let acquisitions: RequirementAcquisitionEntity[] = [];
    const acquisitionLabels: string[] = [];
    const acquisitionIds = new UniqueIds((position) => acquisitionLabels[position]);
    let index = 0;
    progress(source, 0);
    const flush = async () => {
      await this.upsert(
        manager,
        RequirementTypeEntity,
        'requirement_type_id',
        types,
        summary.requirementTypes,
      );
      await this.upsert(
        manager,
        RequirementAcquisitionEntity,
        'requirement_id',
        acquisitions,
        summary.acquisitions,
      );
      types = [];
      acquisitions = [];
      progress(source, index);
    };
    for await (const record of records) {
      const label = recordLabel(source, index, 'requirement_type_id', record.requirement_type_id);
      const typeId = required(
        record.requirement_type_id,
        () => label,
        () => 'requirement.requirement_type_id',
      );
      typeIds.check(typeId, index);
      (record.Acquisition ?? []).forEach((item: RequirementAcquisitionDto, position) => {
        const where = `${label}, Acquisition[${position}]`;
        const key = `requirement.Acquisition[${position}]`;
        const id = required(
          item.requirement_id,
          () => where,
          () => `${key}.requirement_id`,
        );
        if (item.requirement_type_id != null && item.requirement_type_id !== typeId) {
          throw new ImportError(
            `${where}: ${key}.requirement_type_id: ${item.requirement_type_id} differs from the type's ${typeId}.`,
          );
        }
        acquisitionLabels.push(where);
        acquisitionIds.check(id, acquisitionLabels.length - 1);
        acquisitions.push({
          ...pickWireScalars(RequirementAcquisitionDto, item),
          requirement_id: id,
          requirement_type_id: typeId,
        });
      });
      types.push({ ...pickWireScalars(RequirementDto, record), requirement_type_id: typeId });
      index++;
      if (types.length >= BATCH) await flush();
    }
    await flush();
    // Every instance's serialized catalogue goes stale with this commit.
    await manager.increment(CatalogueVersionEntity, { id: CATALOGUE_VERSION_ROW }, 'version', 1);
  }

  private async importTransactions(
    manager: EntityManager,
    { source, records }: RecordSource<TransactionDto>,
    summary: ImportSummary,
    progress: ImportProgress,
  ): Promise<void> {
    // The catalogue's ids, the ones imported just before in this transaction included: a few
    // thousand numbers, against which every checklist item is checked as it is read. On MySQL they
    // stay locked against deletion until the commit, as the foreign key checks would hold them.
    const catalogued = new Set(
      (
        await manager.find(RequirementAcquisitionEntity, {
          select: { requirement_id: true },
          ...(this.mysql && { lock: { mode: 'pessimistic_read' } }),
        })
      ).map((row) => row.requirement_id),
    );
    progress(source, 0);
    const ids = new UniqueIds((position, id) =>
      recordLabel(source, position, 'transaction_id', id),
    );
    await WritePipeline.run(async (pipeline) => {
      let batch: TransactionWrite[] = [];
      let index = 0;
      const slices = new ReadSlices();
      for await (const record of records) {
        await slices.pause();
        const position = index;
        const label = () => recordLabel(source, position, 'transaction_id', record.transaction_id);
        const id = required(record.transaction_id, label, () => 'transaction.transaction_id');
        ids.check(id, index);
        const row: TransactionRow = {
          ...pickWireScalars(TransactionDto, record),
          transaction_id: id,
        };
        batch.push({
          id,
          chain: AGENT_CHAIN_FIELDS.map((field) => row[field]),
          row: this.transactionRows.encode(row),
          checklist: record.requirements
            ? this.checklistOf(id, record.requirements, label, catalogued)
            : undefined,
        });
        index++;
        if (batch.length >= BATCH) {
          const full = batch;
          batch = [];
          progress(source, index);
          await pipeline.add(() => this.writeTransactions(manager, full, summary));
        }
      }
      if (batch.length > 0) {
        const last = batch;
        await pipeline.add(() => this.writeTransactions(manager, last, summary));
      }
      progress(source, index);
    });
  }

  private checklistOf(
    transactionId: number,
    items: readonly RequirementAcquisitionDto[],
    label: () => string,
    catalogued: ReadonlySet<number>,
  ): EncodedRow[] {
    const seen = new UniqueIds((position) => `${label()}, requirements[${position}]`, items.length);
    return items.map((item, position) => {
      const key = () => `transaction.requirements[${position}].requirement_id`;
      const requirementId = required(item.requirement_id, label, key);
      seen.check(requirementId, position);
      if (!catalogued.has(requirementId))
        throw new ImportError(
          `${label()}: ${key()}: no catalogue record has requirement_id ${requirementId}.`,
        );
      return this.checklistRows.encode({
        transaction_id: transactionId,
        requirement_id: requirementId,
        submitted: item.submitted ?? null,
        stamp: item.stamp ?? null,
      });
    });
  }

  /**
   * One batch: the stored agent chains of its transactions are read first, so a changed chain gets
   * its history record; then every row is upserted (a stored row's version advances by one, so ETags
   * held by clients go stale) and the checklists the records carry replace the stored ones. On MySQL
   * the read locks the rows, as UpdateAgents' does: a change committing meanwhile would otherwise be
   * missing from the history's `before` values and the version it records.
   */
  private async writeTransactions(
    manager: EntityManager,
    batch: readonly TransactionWrite[],
    summary: ImportSummary,
  ): Promise<void> {
    const stored = new Map(
      (
        await manager.find(TransactionEntity, {
          select: STORED_CHAIN,
          where: { transaction_id: In(batch.map(({ id }) => id)) },
          ...(this.mysql && { lock: { mode: 'pessimistic_write' } }),
        })
      ).map((row) => [row.transaction_id, row]),
    );
    const stamp = new Date();
    const history: Omit<AgentAssignmentEntity, 'assignment_id'>[] = [];
    for (const { id, chain } of batch) {
      const before = stored.get(id);
      if (!before) continue;
      const changes: AgentChange[] = [];
      AGENT_CHAIN_FIELDS.forEach((field, index) => {
        if (before[field] !== chain[index])
          changes.push({ field, before: before[field], after: chain[index] });
      });
      if (changes.length > 0)
        history.push({
          transaction_id: id,
          stamp,
          changed_by: null,
          changes,
          row_version: before.row_version + 1,
        });
    }
    await this.transactionRows.upsert(
      manager,
      batch.map(({ row }) => row),
    );
    if (history.length > 0) await manager.insert(AgentAssignmentEntity, history);
    const replaced = batch.filter(({ id, checklist }) => checklist && stored.has(id));
    if (replaced.length > 0)
      await manager.delete(TransactionRequirementEntity, {
        transaction_id: In(replaced.map(({ id }) => id)),
      });
    await this.checklistRows.insert(
      manager,
      batch.flatMap(({ checklist }) => checklist ?? []),
    );
    summary.transactions.created += batch.length - stored.size;
    summary.transactions.updated += stored.size;
    countIds(
      summary.transactions,
      batch.map(({ id }) => id),
    );
  }

  private async upsert<T extends object>(
    manager: EntityManager,
    entity: new () => T,
    key: keyof T & string,
    rows: readonly T[],
    count: ImportCount,
  ): Promise<void> {
    for (let start = 0; start < rows.length; start += CATALOGUE_CHUNK) {
      const part = rows.slice(start, start + CATALOGUE_CHUNK);
      const existing = await manager.count(entity, {
        where: { [key]: In(part.map((row) => row[key])) } as never,
      });
      await manager.upsert(entity, part, [key]);
      count.updated += existing;
      count.created += part.length - existing;
      countIds(
        count,
        part.map((row) => row[key] as number),
      );
    }
  }
}
