import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { UnitOfWork, type WriteOptions } from '../database/unit-of-work';
import {
  AGENT_CHAIN_FIELDS,
  type AgentChainField,
  type AgentChainValue,
  type AgentChange,
} from './agent-chain';
import { AgentChainStatements } from './agent-chain.statements';
import {
  TransactionReadStatements,
  type VersionedTransaction,
} from './transaction-read.statements';
import { type AgentAssignmentDto } from './dto/agent-assignment.dto';
import { type TransactionPageDto } from './dto/transaction-page.dto';
import { encodeCursor, type PageRequest } from './list-transactions.query';
import { AgentAssignmentEntity } from './entities/agent-assignment.entity';
import { TransactionEntity } from './entities/transaction.entity';
import { AGENTS_CHANGED, etagOf } from './transaction.events';
import {
  TransactionChangedError,
  TransactionLockedError,
  TransactionNotFoundError,
} from './transaction.errors';

export interface AgentChainUpdate {
  readonly transactionId: number;
  /** The members the caller sent, null included; absent members keep their stored value. */
  readonly values: Partial<Record<AgentChainField, AgentChainValue>>;
  /** From If-Match: the versions the caller expects, or `any` for `*`; absent applies unconditionally. */
  readonly expectedVersions?: readonly number[] | 'any';
  /** The authenticated caller, recorded in the history. */
  readonly changedBy?: string;
}

const IDEMPOTENT: WriteOptions = { idempotent: true };

@Injectable()
export class TransactionService {
  private readonly statements: AgentChainStatements;
  private readonly reading: TransactionReadStatements;

  constructor(
    private readonly unitOfWork: UnitOfWork,
    @InjectDataSource() dataSource: DataSource,
  ) {
    this.statements = new AgentChainStatements(dataSource);
    this.reading = new TransactionReadStatements(dataSource);
  }

  /** One transaction with its checklist and each item's catalogue record, as stood at one version. */
  async findOne(transactionId: number): Promise<VersionedTransaction> {
    const found = await this.reading.read(this.unitOfWork, transactionId);
    if (!found) throw new TransactionNotFoundError(transactionId);
    return found;
  }

  /** One page of the listing, with the cursor of the next one (null on the last page). */
  async list(request: PageRequest): Promise<TransactionPageDto> {
    const { transactions, more } = await this.reading.readPage(this.unitOfWork, request);
    const last = transactions.at(-1);
    return {
      transactions,
      next_cursor:
        more && last
          ? encodeCursor(request.filter, {
              transactionId: last.transaction_id!,
              ...(request.filter.changedSince && { stamp: last.stamp! }),
            })
          : null,
    };
  }

  /** The agent-chain changes of one transaction, oldest first. */
  async agentHistory(transactionId: number): Promise<AgentAssignmentDto[]> {
    // One statement: the transaction's key, joined to its entries (none for an empty history).
    const row = await this.unitOfWork.read((manager) =>
      manager
        .createQueryBuilder(TransactionEntity, 'transaction')
        .select('transaction.transaction_id')
        .leftJoinAndMapMany(
          'transaction.history',
          AgentAssignmentEntity,
          'entry',
          'entry.transaction_id = transaction.transaction_id',
        )
        .where('transaction.transaction_id = :transactionId', { transactionId })
        .orderBy('entry.assignment_id', 'ASC')
        .getOne(),
    );
    if (!row) throw new TransactionNotFoundError(transactionId);
    const { history } = row as TransactionEntity & { history: AgentAssignmentEntity[] };
    return history.map((entry) => ({
      assignment_id: entry.assignment_id,
      transaction_id: entry.transaction_id,
      stamp: entry.stamp,
      changed_by: entry.changed_by,
      changes: entry.changes,
      row_version: entry.row_version,
    }));
  }

  /**
   * Writes the agent members the caller sent, nothing else. The row is locked for the length of the
   * transaction, so concurrent updates of one transaction apply one after the other and the history
   * records each in commit order. A call that changes nothing writes nothing, so the same call made
   * again after it committed appends no second record: a client that could not learn whether it
   * committed can send it again. Resolves to the transaction's version after the call: the one it
   * committed, or the one it found when there was nothing to change.
   */
  updateAgents(update: AgentChainUpdate): Promise<number> {
    return this.unitOfWork.writeStatements(async (transaction) => {
      const row = this.statements.locked(
        await transaction.begin(this.statements.lock(update.transactionId)),
      );
      if (!row) throw new TransactionNotFoundError(update.transactionId);
      const { expectedVersions } = update;
      if (
        expectedVersions &&
        expectedVersions !== 'any' &&
        !expectedVersions.includes(row.row_version)
      ) {
        throw new TransactionChangedError(update.transactionId);
      }
      if (row.locked) throw new TransactionLockedError(update.transactionId);
      const changes: AgentChange[] = [];
      // The chain as it stands after the change, which the event carries whole.
      const chain: Partial<Record<AgentChainField, AgentChainValue>> = {};
      for (const field of AGENT_CHAIN_FIELDS) {
        const after = update.values[field];
        if (after !== undefined && after !== row[field])
          changes.push({ field, before: row[field], after });
        chain[field] = after === undefined ? row[field] : after;
      }
      if (changes.length === 0) return row.row_version;
      const stamp = new Date();
      const changedBy = update.changedBy ?? null;
      const version = row.row_version + 1;
      await transaction.commit(
        [
          this.statements.update(update.transactionId, changes, stamp),
          this.statements.append({
            transaction_id: update.transactionId,
            stamp,
            changed_by: changedBy,
            changes,
            // The row is locked since it was read, so the UPDATE's increment gives this version.
            row_version: version,
          }),
        ],
        this.statements.committed,
        [
          {
            type: AGENTS_CHANGED,
            subject: String(update.transactionId),
            time: stamp,
            data: {
              transaction_id: update.transactionId,
              stamp,
              changed_by: changedBy,
              row_version: version,
              etag: etagOf(update.transactionId, version),
              changes,
              ...chain,
            },
          },
        ],
      );
      return version;
    }, IDEMPOTENT);
  }
}
