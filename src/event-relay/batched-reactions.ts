import { Injectable, type Type } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { UnitOfWork } from '../database/unit-of-work';
import { type BatchedReactionMethod, reactionCheckpoint } from '../events/batched-reaction';
import { OutboxStore } from './outbox-store';

/** Methods of `T` that are batched reactions. */
type ReactionKey<T> = {
  [K in keyof T]: T[K] extends BatchedReactionMethod ? K : never;
}[keyof T] &
  string;

/**
 * Starts batched reactions. A start joins the unit it is called from (a handler's step, a request's
 * write), so the run begins if, and only if, that commits; starting a run under way moves its
 * checkpoint back to `after` when that is lower, so what changed is done again, and its bound up to
 * `until` (or lifts it), so the run covers both starts' keys.
 */
@Injectable()
export class BatchedReactions {
  private readonly store: OutboxStore;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly unitOfWork: UnitOfWork,
    @InjectDataSource() dataSource: DataSource,
  ) {
    this.store = new OutboxStore(dataSource);
  }

  /**
   * Starts `reaction` of `provider` after the key `after` (0: from the first), up to the key `until`
   * included when given (an import's last id), else up to the last key there is.
   */
  async start<T>(
    provider: Type<T>,
    reaction: ReactionKey<T>,
    after = 0,
    until?: number,
  ): Promise<void> {
    if (until !== undefined && until <= after)
      throw new RangeError(`A run after the key ${after} up to ${until} covers no key.`);
    await this.unitOfWork.write(async (manager) => {
      await this.store.startRun(
        manager,
        reactionCheckpoint(`${provider.name}.${reaction}`),
        after,
        until,
      );
      this.unitOfWork.afterCommit(() => {
        for (const listener of this.listeners) listener();
      });
    });
  }

  /** Calls `listener` after each start in this process committed; returns what stops it. */
  onStarted(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
