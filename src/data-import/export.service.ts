import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager, In, MoreThan } from 'typeorm';
import { RequirementAcquisitionDto, RequirementDto, RequirementTypeEntity } from '../requirement';
import { TransactionDto, TransactionRequirementEntity, TransactionEntity } from '../transaction';
import { pickWireScalars } from '../wire';
import { type RecordWriter } from './record-writers';

/** Where each collection goes; either alone works. */
export interface ExportTargets {
  readonly requirements?: RecordWriter<RequirementDto>;
  readonly transactions?: RecordWriter<TransactionDto>;
}

export interface ExportSummary {
  requirementTypes: number;
  transactions: number;
}

/** Called as records are written: which collection, how many so far, and how many there are. */
export type ExportProgress = (
  what: 'requirements' | 'transactions',
  done: number,
  total: number,
) => void;

/** Transactions read a page at a time, by id: memory holds one page whatever the table's size. */
const PAGE = 1000;

/**
 * Writes the catalogue and every transaction with its checklist, each as the service's reads return
 * them, from one snapshot of the database. Pages are read by id (keyset), so each costs the same
 * however far the export has come.
 */
@Injectable()
export class ExportService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * One read transaction for the whole export, without the time bound of a request's: REPEATABLE READ
   * on MySQL, and on SQLite a read transaction, which sees one snapshot of the file.
   */
  run(targets: ExportTargets, progress: ExportProgress = () => undefined): Promise<ExportSummary> {
    const work = async (manager: EntityManager) => {
      const summary: ExportSummary = { requirementTypes: 0, transactions: 0 };
      if (targets.requirements)
        summary.requirementTypes = await this.exportRequirements(
          manager,
          targets.requirements,
          progress,
        );
      if (targets.transactions)
        summary.transactions = await this.exportTransactions(
          manager,
          targets.transactions,
          progress,
        );
      return summary;
    };
    return this.dataSource.options.type === 'better-sqlite3'
      ? this.dataSource.transaction(work)
      : this.dataSource.transaction('REPEATABLE READ', work);
  }

  private async exportRequirements(
    manager: EntityManager,
    writer: RecordWriter<RequirementDto>,
    progress: ExportProgress,
  ): Promise<number> {
    const total = await manager.count(RequirementTypeEntity);
    let done = 0;
    let after = Number.MIN_SAFE_INTEGER;
    for (;;) {
      const types = await manager.find(RequirementTypeEntity, {
        relations: { acquisitions: true },
        where: { requirement_type_id: MoreThan(after) },
        order: { requirement_type_id: 'ASC', acquisitions: { requirement_id: 'ASC' } },
        take: PAGE,
      });
      for (const type of types) {
        await writer.write({
          ...pickWireScalars(RequirementDto, type),
          Acquisition: (type.acquisitions ?? []).map((record) =>
            pickWireScalars(RequirementAcquisitionDto, record),
          ),
        });
      }
      done += types.length;
      progress('requirements', done, total);
      if (types.length < PAGE) break;
      after = types[types.length - 1].requirement_type_id;
    }
    await writer.end();
    return done;
  }

  private async exportTransactions(
    manager: EntityManager,
    writer: RecordWriter<TransactionDto>,
    progress: ExportProgress,
  ): Promise<number> {
    const total = await manager.count(TransactionEntity);
    let done = 0;
    let after = Number.MIN_SAFE_INTEGER;
    for (;;) {
      const rows = await manager.find(TransactionEntity, {
        where: { transaction_id: MoreThan(after) },
        order: { transaction_id: 'ASC' },
        take: PAGE,
      });
      if (rows.length === 0) break;
      const items = await manager.find(TransactionRequirementEntity, {
        relations: { requirement: true },
        where: { transaction_id: In(rows.map((row) => row.transaction_id)) },
        order: { transaction_id: 'ASC', requirement_id: 'ASC' },
      });
      let next = 0;
      for (const row of rows) {
        const requirements: RequirementAcquisitionDto[] = [];
        for (; next < items.length && items[next].transaction_id === row.transaction_id; next++) {
          const item = items[next];
          // As GetTransaction writes an item: the catalogue record, with this checklist's state.
          requirements.push({
            ...pickWireScalars(RequirementAcquisitionDto, item.requirement ?? {}),
            requirement_id: item.requirement_id,
            stamp: item.stamp,
            submitted: item.submitted,
          });
        }
        await writer.write({ ...pickWireScalars(TransactionDto, row), requirements });
      }
      done += rows.length;
      progress('transactions', done, total);
      after = rows[rows.length - 1].transaction_id;
    }
    await writer.end();
    return done;
  }
}
