import { Injectable } from '@nestjs/common';
import { type EntityManager, In } from 'typeorm';
import { UnitOfWork } from '../database/unit-of-work';
import { RequirementAcquisitionDto } from '../requirement/dto/requirement-acquisition.dto';
import { RequirementDto } from '../requirement/dto/requirement.dto';
import {
  CATALOGUE_VERSION_ROW,
  CatalogueVersionEntity,
} from '../requirement/entities/catalogue-version.entity';
import { RequirementAcquisitionEntity } from '../requirement/entities/requirement-acquisition.entity';
import { RequirementTypeEntity } from '../requirement/entities/requirement-type.entity';
import { TransactionDto } from '../transaction/dto/transaction.dto';
import { TransactionRequirementEntity } from '../transaction/entities/transaction-requirement.entity';
import { TransactionEntity } from '../transaction/entities/transaction.entity';
import { pickWireScalars } from '../wire';
import { ImportError, recordLabel } from './import-records';

/** Validated records to load, each list labelled by where it came from (a file name) for messages. */
export interface ImportBatch {
  readonly requirements?: { readonly source: string; readonly records: readonly RequirementDto[] };
  readonly transactions?: { readonly source: string; readonly records: readonly TransactionDto[] };
}

export interface ImportCount {
  created: number;
  updated: number;
}

export interface ImportSummary {
  readonly requirementTypes: ImportCount;
  readonly acquisitions: ImportCount;
  readonly transactions: ImportCount;
}

export type ImportProgress = (message: string) => void;

// Rows per statement: far below both databases' limits on bound parameters.
const CHUNK = 200;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += CHUNK)
    out.push(items.slice(start, start + CHUNK));
  return out;
}

/** Stops at the first record whose id repeats an earlier one: an import names each record once. */
function assertUnique<T>(
  items: readonly T[],
  idOf: (item: T, index: number) => number,
  describe: (index: number) => string,
): void {
  const seen = new Map<number, number>();
  items.forEach((item, index) => {
    const id = idOf(item, index);
    const first = seen.get(id);
    if (first !== undefined)
      throw new ImportError(`${describe(index)} repeats the id of ${describe(first)}.`);
    seen.set(id, index);
  });
}

function required(value: number | null | undefined, where: string, field: string): number {
  if (value === null || value === undefined)
    throw new ImportError(
      `${where}: ${field}: The ${field.replace(/.*\./, '')} field is required.`,
    );
  return value;
}

/**
 * Loads the catalogue and transactions in one database transaction: all or nothing, upserting by id,
 * so running the same import twice leaves the same data. A transaction's checklist is replaced by the
 * record's `requirements` when the record carries a list; items refer to catalogue records by id.
 */
@Injectable()
export class ImportService {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  run(batch: ImportBatch, progress: ImportProgress = () => undefined): Promise<ImportSummary> {
    return this.unitOfWork.bulkWrite(async (manager) => {
      const summary: ImportSummary = {
        requirementTypes: { created: 0, updated: 0 },
        acquisitions: { created: 0, updated: 0 },
        transactions: { created: 0, updated: 0 },
      };
      if (batch.requirements)
        await this.importRequirements(manager, batch.requirements, summary, progress);
      if (batch.transactions)
        await this.importTransactions(manager, batch.transactions, summary, progress);
      return summary;
    });
  }

  private async importRequirements(
    manager: EntityManager,
    { source, records }: NonNullable<ImportBatch['requirements']>,
    summary: ImportSummary,
    progress: ImportProgress,
  ): Promise<void> {
    const label = (index: number) =>
      recordLabel(source, index, 'requirement_type_id', records[index].requirement_type_id);
    const typeIds = records.map((record, index) =>
      required(record.requirement_type_id, label(index), 'requirement.requirement_type_id'),
    );
    assertUnique(records, (_, index) => typeIds[index], label);
    const acquisitions: RequirementAcquisitionEntity[] = [];
    const acquisitionLabels: string[] = [];
    records.forEach((record, index) => {
      (record.Acquisition ?? []).forEach((item: RequirementAcquisitionDto, position) => {
        const where = `${label(index)}, Acquisition[${position}]`;
        const key = `requirement.Acquisition[${position}]`;
        const id = required(item.requirement_id, where, `${key}.requirement_id`);
        if (item.requirement_type_id != null && item.requirement_type_id !== typeIds[index]) {
          throw new ImportError(
            `${where}: ${key}.requirement_type_id: ${item.requirement_type_id} differs from the type's ${typeIds[index]}.`,
          );
        }
        acquisitions.push({
          ...pickWireScalars(RequirementAcquisitionDto, item),
          requirement_id: id,
          requirement_type_id: typeIds[index],
        });
        acquisitionLabels.push(where);
      });
    });
    assertUnique(
      acquisitions,
      (item) => item.requirement_id,
      (index) => acquisitionLabels[index],
    );

    const types = records.map((record, index) => ({
      ...pickWireScalars(RequirementDto, record),
      requirement_type_id: typeIds[index],
    }));
    await this.upsert(
      manager,
      RequirementTypeEntity,
      'requirement_type_id',
      types,
      summary.requirementTypes,
    );
    progress(`${source}: ${types.length} requirement types`);
    await this.upsert(
      manager,
      RequirementAcquisitionEntity,
      'requirement_id',
      acquisitions,
      summary.acquisitions,
    );
    // Every instance's serialized catalogue goes stale with this commit.
    await manager.increment(CatalogueVersionEntity, { id: CATALOGUE_VERSION_ROW }, 'version', 1);
    progress(`${source}: ${acquisitions.length} acquisition records`);
  }

  private async importTransactions(
    manager: EntityManager,
    { source, records }: NonNullable<ImportBatch['transactions']>,
    summary: ImportSummary,
    progress: ImportProgress,
  ): Promise<void> {
    const label = (index: number) =>
      recordLabel(source, index, 'transaction_id', records[index].transaction_id);
    const ids = records.map((record, index) =>
      required(record.transaction_id, label(index), 'transaction.transaction_id'),
    );
    assertUnique(records, (_, index) => ids[index], label);
    const checklists = records.map((record, index) => {
      if (!record.requirements) return undefined;
      const items = record.requirements.map((item, position) => ({
        transaction_id: ids[index],
        requirement_id: required(
          item.requirement_id,
          label(index),
          `transaction.requirements[${position}].requirement_id`,
        ),
        submitted: item.submitted ?? null,
        stamp: item.stamp ?? null,
      }));
      assertUnique(
        items,
        (item) => item.requirement_id,
        (position) => `${label(index)}, requirements[${position}]`,
      );
      return items;
    });
    await this.assertCatalogued(manager, checklists, label);

    for (let start = 0; start < records.length; start += CHUNK) {
      const positions = records.slice(start, start + CHUNK).map((_, offset) => start + offset);
      const rows = positions.map((index) => ({
        ...pickWireScalars(TransactionDto, records[index]),
        transaction_id: ids[index],
      }));
      const existing = await manager.find(TransactionEntity, {
        select: ['transaction_id', 'row_version'],
        where: { transaction_id: In(rows.map((row) => row.transaction_id)) },
      });
      const stored = new Set(existing.map((row) => row.transaction_id));
      const created = rows.filter((row) => !stored.has(row.transaction_id));
      if (created.length > 0) await manager.insert(TransactionEntity, created);
      // One UPDATE a row: it also advances the row version, so ETags held by clients go stale.
      for (const row of rows.filter((candidate) => stored.has(candidate.transaction_id))) {
        await manager.update(TransactionEntity, { transaction_id: row.transaction_id }, row);
      }
      summary.transactions.created += created.length;
      summary.transactions.updated += rows.length - created.length;
      const replaced = positions.filter((index) => checklists[index] !== undefined);
      if (replaced.length > 0) {
        await manager.delete(TransactionRequirementEntity, {
          transaction_id: In(replaced.map((index) => ids[index])),
        });
        for (const part of chunks(replaced.flatMap((index) => checklists[index] ?? []))) {
          await manager.insert(TransactionRequirementEntity, part);
        }
      }
      progress(`${source}: ${start + rows.length}/${records.length} transactions`);
    }
  }

  /** Every checklist item must name a catalogue record, already stored or imported just before. */
  private async assertCatalogued(
    manager: EntityManager,
    checklists: readonly ({ requirement_id: number }[] | undefined)[],
    label: (index: number) => string,
  ): Promise<void> {
    const wanted = [
      ...new Set(checklists.flatMap((items) => (items ?? []).map((item) => item.requirement_id))),
    ];
    const known = new Set<number>();
    for (const part of chunks(wanted)) {
      const rows = await manager.find(RequirementAcquisitionEntity, {
        select: ['requirement_id'],
        where: { requirement_id: In(part) },
      });
      rows.forEach((row) => known.add(row.requirement_id));
    }
    checklists.forEach((items, index) =>
      (items ?? []).forEach((item, position) => {
        if (!known.has(item.requirement_id)) {
          throw new ImportError(
            `${label(index)}: transaction.requirements[${position}].requirement_id: no catalogue record has requirement_id ${item.requirement_id}.`,
          );
        }
      }),
    );
  }

  private async upsert<T extends object>(
    manager: EntityManager,
    entity: new () => T,
    key: keyof T & string,
    rows: readonly T[],
    count: ImportCount,
  ): Promise<void> {
    for (const part of chunks(rows)) {
      const existing = await manager.count(entity, {
        where: { [key]: In(part.map((row) => row[key])) } as never,
      });
      await manager.upsert(entity, part, [key]);
      count.updated += existing;
      count.created += part.length - existing;
    }
  }
}
