import { SetMetadata } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type Publish } from './integration-event';

/** One batch of a reaction that runs in steps over the keys of a table, as its method receives it. */
export interface ReactionBatch {
  /** The last key the run has done: its checkpoint (0, or what `start` was given, at first). */
  readonly after: number;
  /**
   * The last key the run covers, when it was started with one (a recomputation of an import's ids):
   * keys past it are not the run's, and the run ends once a batch reaches it. Undefined: every key.
   */
  readonly until?: number;
  /** How many keys this batch may take at most: the runner sizes it to stay well in time. */
  readonly limit: number;
  /** The batch's transaction, which also moves the checkpoint past what it returns. */
  readonly manager: EntityManager;
  /** Events the batch commits with its work. */
  readonly publish: Publish;
}

/** The last key a batch did; undefined when there is none left: the run is over. */
export type BatchedReactionMethod = (batch: ReactionBatch) => Promise<number | undefined>;

export interface BatchedReactionOptions {
  /** The most keys a batch takes; fewer while batches take long. 500 unless told. */
  readonly batchSize?: number;
  /**
   * A back-fill: the first time an instance starts with this reaction against a database, it starts
   * a run over every key, once. A module that reacts to other modules' events hears only the changes
   * made from its first start on; its back-fill does the same for the rows that were there before.
   */
  readonly backfill?: boolean;
}

export const BATCHED_REACTION = Symbol('BATCHED_REACTION');

/** The checkpoint of a reaction's run, in the table the event consumers' are in. */
export const reactionCheckpoint = (name: string) => `reaction:${name}`;

/**
 * Marks a provider's method as a reaction too large for one transaction (a rule change that
 * recomputes every transaction): once started, it runs batch after batch, each in a transaction of
 * its own that also moves its checkpoint, until the method says it is done. Each batch is bounded by
 * DATABASE_TIMEOUT_MS like any unit; the runner takes fewer keys while batches take long, one
 * instance runs a reaction at a time, and a restart goes on from the checkpoint. A run starts with
 * `BatchedReactions.start`, and for a back-fill (`backfill: true`) once a database on its own.
 */
export function BatchedReaction(options: BatchedReactionOptions = {}) {
  return <M extends BatchedReactionMethod>(
    target: object,
    key: string | symbol,
    descriptor: TypedPropertyDescriptor<M>,
  ): TypedPropertyDescriptor<M> => {
    SetMetadata(BATCHED_REACTION, options)(target, key, descriptor);
    return descriptor;
  };
}
