import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type DataImportedDto, DATA_IMPORTED } from '../../../src/data-import';
import { BatchedReaction, type ReactionBatch } from '../../../src/events/batched-reaction';
import {
  OnIntegrationEvent,
  OnIntegrationEventBatch,
  type ReceivedEvent,
} from '../../../src/events/event-handler.decorator';
import { type Publish } from '../../../src/events/integration-event';
import { BatchedReactions } from '../../../src/event-relay/batched-reactions';
import {
  AGENTS_CHANGED,
  AGENT_ROLES,
  type AgentChain,
  type AgentRole,
  type AgentsChangedDto,
  TransactionQueries,
} from '../../../src/transaction';
import {
  TEST_LEDGER_SPLITS_CHANGED,
  TEST_LEDGER_RECOMPUTED,
  type TestLedgerSplitDto,
} from './test-ledger.events';

/** The commission rate of each role of the agent chain, of the selling price. */
export const TEST_LEDGER_RATES = {
  brokerid: 0.01,
  directorid: 0.005,
  directorid_recruit: 0.0025,
  managerid: 0.005,
  managerid_recruit: 0.0025,
  salesagentid: 0.03,
  salesagentid_recruit: 0.0025,
} as const satisfies Record<AgentRole, number>;

/** The splits of a chain at a selling price: one per role with an agent. */
export function splitsOf(
  chain: Partial<AgentChain>,
  sellingprice: number | null,
): TestLedgerSplitDto[] {
  return AGENT_ROLES.filter((role) => chain[role] != null).map((role) => ({
    role,
    agent_id: chain[role] as number,
    rate: TEST_LEDGER_RATES[role],
    amount:
      sellingprice === null ? null : Math.round(sellingprice * TEST_LEDGER_RATES[role] * 100) / 100,
  }));
}

/** Its table; a module's own table comes from its migrations, this test module's from its start. */
export const TEST_LEDGER_TABLE = `CREATE TABLE IF NOT EXISTS test_ledger_split (
  transaction_id INT NOT NULL,
  role VARCHAR(32) NOT NULL,
  agent_id INT NULL,
  rate DECIMAL(9, 4) NOT NULL,
  amount DECIMAL(15, 2) NULL,
  PRIMARY KEY (transaction_id, role)
)`;

/**
 * Keeps each transaction's commission splits: recomputed after its agent chain changes (from the
 * event's chain, and the selling price read through the transaction module's door), and after an
 * import, a batch of transactions at a time. It publishes what it changed.
 */
@Injectable()
export class TestLedger {
  constructor(
    private readonly transactions: TransactionQueries,
    private readonly reactions: BatchedReactions,
  ) {}

  /**
   * The events of a step at once: one read of their selling prices, one write of the splits of the
   * roles they changed, and one event per transaction with all its splits as they stand after its
   * last change in the batch.
   */
  @OnIntegrationEventBatch(AGENTS_CHANGED)
  async agentsChanged(
    events: readonly ReceivedEvent<AgentsChangedDto>[],
    manager: EntityManager,
    publish: Publish,
  ): Promise<void> {
    const changed = new Map<number, { chain: AgentsChangedDto; roles: Set<AgentRole> }>();
    for (const { data } of events) {
      const entry = changed.get(data.transaction_id!) ?? {
        chain: data,
        roles: new Set<AgentRole>(),
      };
      entry.chain = data;
      for (const { field } of data.changes ?? [])
        if (AGENT_ROLES.includes(field as AgentRole)) entry.roles.add(field as AgentRole);
      changed.set(data.transaction_id!, entry);
    }
    const amounts = await this.transactions.amountsOf([...changed.keys()]);
    const kept: [number, TestLedgerSplitDto][] = [];
    const dropped: [number, AgentRole][] = [];
    for (const [id, { chain, roles }] of changed) {
      const splits = splitsOf(chain, amounts.get(id)?.sellingprice ?? null);
      for (const role of roles) {
        const split = splits.find((candidate) => candidate.role === role);
        if (split) kept.push([id, split]);
        else dropped.push([id, role]);
      }
      publish({
        type: TEST_LEDGER_SPLITS_CHANGED,
        subject: String(id),
        time: new Date(),
        data: { transaction_id: id, row_version: chain.row_version, splits },
      });
    }
    await this.upsert(manager, kept);
    for (const [id, role] of dropped)
      await manager.query('DELETE FROM test_ledger_split WHERE transaction_id = ? AND role = ?', [
        id,
        role,
      ]);
  }

  /** Recomputes the splits of the import's transactions: from its first id to its last. */
  @OnIntegrationEvent(DATA_IMPORTED)
  async imported(event: ReceivedEvent<DataImportedDto>): Promise<void> {
    const { transaction_id_from: from, transaction_id_to: to } = event.data;
    // In this step's transaction: the recomputation starts if, and only if, it commits.
    if (from != null && to != null)
      await this.reactions.start(TestLedger, 'recompute', from - 1, to);
  }

  /** Recomputes the splits of the run's transactions (after `after`, up to `until`), a batch at a time. */
  @BatchedReaction()
  async recompute({
    after,
    until,
    limit,
    manager,
    publish,
  }: ReactionBatch): Promise<number | undefined> {
    const ids = await this.transactions.idsAfter(after, limit, until);
    if (ids.length === 0) return undefined;
    const [chains, amounts] = await Promise.all([
      this.transactions.agentChainsOf(ids),
      this.transactions.amountsOf(ids),
    ]);
    const splits = new Map(
      ids.map((id) => [id, splitsOf(chains.get(id) ?? {}, amounts.get(id)?.sellingprice ?? null)]),
    );
    await this.store(manager, ids, splits);
    publish({
      type: TEST_LEDGER_RECOMPUTED,
      time: new Date(),
      data: {
        transaction_id_from: ids[0],
        transaction_id_to: ids.at(-1)!,
        transactions: ids.length,
      },
    });
    return ids.length < limit ? undefined : ids.at(-1);
  }

  /** The stored splits of a transaction, by role. */
  async splitsOf(manager: EntityManager, transactionId: number): Promise<TestLedgerSplitDto[]> {
    const rows = await manager.query<
      { role: string; agent_id: number; rate: string; amount: string | null }[]
    >(
      'SELECT role, agent_id, rate, amount FROM test_ledger_split WHERE transaction_id = ? ORDER BY role',
      [transactionId],
    );
    return rows.map((row) => ({
      role: row.role,
      agent_id: Number(row.agent_id),
      rate: Number(row.rate),
      amount: row.amount === null ? null : Number(row.amount),
    }));
  }

  /** Replaces the splits of `ids` with `splits`, in one DELETE and one INSERT. */
  private async store(
    manager: EntityManager,
    ids: readonly number[],
    splits: ReadonlyMap<number, readonly TestLedgerSplitDto[]>,
  ): Promise<void> {
    await manager.query(
      `DELETE FROM test_ledger_split WHERE transaction_id IN (${ids.map(() => '?').join(', ')})`,
      [...ids],
    );
    await this.upsert(
      manager,
      ids.flatMap((id) =>
        (splits.get(id) ?? []).map((split): [number, TestLedgerSplitDto] => [id, split]),
      ),
    );
  }

  /** Writes each split, replacing the one of its transaction and role, in one statement. */
  private async upsert(
    manager: EntityManager,
    splits: readonly (readonly [number, TestLedgerSplitDto])[],
  ): Promise<void> {
    if (splits.length === 0) return;
    const update =
      manager.connection.options.type === 'better-sqlite3'
        ? 'ON CONFLICT (transaction_id, role) DO UPDATE SET agent_id = excluded.agent_id, rate = excluded.rate, amount = excluded.amount'
        : 'ON DUPLICATE KEY UPDATE agent_id = VALUES(agent_id), rate = VALUES(rate), amount = VALUES(amount)';
    await manager.query(
      `INSERT INTO test_ledger_split (transaction_id, role, agent_id, rate, amount) VALUES ${splits
        .map(() => '(?, ?, ?, ?, ?)')
        .join(', ')} ${update}`,
      splits.flatMap(([id, split]) => [id, split.role, split.agent_id, split.rate, split.amount]),
    );
  }
}
