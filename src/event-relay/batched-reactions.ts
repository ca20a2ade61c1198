import { Injectable, type Type } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { UnitOfWork } from '../database/unit-of-work';
import { type BatchedReactionMethod, reactionCheckpoint } from '../events/batched-reaction';
import { EventCheckpointEntity } from '../events/entities';

/** Methods of `T` that are batched reactions. */
type ReactionKey<T> = {
  [K in keyof T]: T[K] extends BatchedReactionMethod ? K : never;
}[keyof T] &
  string;

/**
 * Starts batched reactions. A start joins the unit it is called from (a handler's step, a request's
 * write), so the run begins if, and only if, that commits; starting a run under way moves its
 * checkpoint back to `after` when that is lower, so what changed is done again.
 */
@Injectable()
export class BatchedReactions {
  private readonly upsert: string;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly unitOfWork: UnitOfWork,
    @InjectDataSource() dataSource: DataSource,
  ) {
    const table = dataSource.driver.escape(dataSource.getMetadata(EventCheckpointEntity).tableName);
    this.upsert =
      dataSource.options.type === 'better-sqlite3'
        ? `INSERT INTO ${table} (consumer, position) VALUES (?, ?) ON CONFLICT (consumer) DO UPDATE SET position = MIN(position, excluded.position)`
        : `INSERT INTO ${table} (consumer, position) VALUES (?, ?) ON DUPLICATE KEY UPDATE position = LEAST(position, VALUES(position))`;
  }

  /** Starts `reaction` of `provider` after the key `after` (0: from the first). */
  async start<T>(provider: Type<T>, reaction: ReactionKey<T>, after = 0): Promise<void> {
    await this.unitOfWork.write(async (manager) => {
      await manager.query(this.upsert, [reactionCheckpoint(`${provider.name}.${reaction}`), after]);
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
