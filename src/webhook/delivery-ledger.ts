import { type EntityManager } from 'typeorm';
import { type UnitOfWork } from '../database/unit-of-work';
import { type OutboxStore } from '../event-relay/outbox-store';
import { WebhookSubscriptionEntity } from './entities';

/** What the checkpoints of webhook subscriptions are named with. */
export const WEBHOOK_CHECKPOINT_PREFIX = 'webhook:';

/** A subscription's checkpoint among the outbox's consumers. */
export const webhookCheckpoint = (id: string) => `${WEBHOOK_CHECKPOINT_PREFIX}${id}`;

/** The lease a run of deliveries holds: the row as claimed, and the lease version it set. */
export interface Lease {
  readonly row: WebhookSubscriptionEntity;
  readonly version: number;
}

/** How long a record waits for others to join it in one write. */
const GATHER_MS = 20;

/** One record waiting for the next write. */
interface Entry {
  readonly lease: Lease;
  readonly changes: Partial<WebhookSubscriptionEntity>;
  readonly position: number;
  readonly settle: (lease: Lease | undefined) => void;
  readonly fail: (error: unknown) => void;
}

/**
 * Changes a subscription's row when its lease version is still `lease`'s, raising it; the lease as
 * changed, or undefined when another instance took the lease meanwhile (or the row is gone).
 */
export async function setLease(
  manager: EntityManager,
  { row, version }: Lease,
  changes: Partial<WebhookSubscriptionEntity>,
): Promise<Lease | undefined> {
  const next = version + 1;
  const { affected } = await manager
    .createQueryBuilder()
    .update(WebhookSubscriptionEntity)
    .set({ ...changes, lease_version: next })
    .where('id = :id AND lease_version = :version', { id: row.id, version })
    .execute();
  return affected === 1
    ? { row: { ...row, ...changes, lease_version: next }, version: next }
    : undefined;
}

/**
 * What the runs of deliveries write: a lease renewed or freed, a failure scheduled, a checkpoint
 * moved. The records made within GATHER_MS, or while a write is under way, go together in one
 * write, so that the writes do not grow with the number of subscriptions delivering, nor with
 * their deliveries.
 */
export class DeliveryLedger {
  private entries: Entry[] = [];
  private writing = false;
  private gathering = false;

  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly store: OutboxStore,
  ) {}

  /**
   * Applies `changes` to the lease's row (a compare-and-set on its version) and, when it still held,
   * moves the subscription's checkpoint forward to `position`: the lease as changed, or undefined
   * when another instance took it meanwhile.
   */
  record(
    lease: Lease,
    changes: Partial<WebhookSubscriptionEntity>,
    position: number,
  ): Promise<Lease | undefined> {
    return new Promise((settle, fail) => {
      this.entries.push({ lease, changes, position, settle, fail });
      if (this.gathering) return;
      this.gathering = true;
      setTimeout(() => {
        this.gathering = false;
        void this.write();
      }, GATHER_MS);
    });
  }

  /** Writes what was recorded, in one transaction, until nothing waits. */
  private async write(): Promise<void> {
    if (this.writing) return;
    this.writing = true;
    try {
      while (this.entries.length > 0) {
        const batch = this.entries;
        this.entries = [];
        try {
          const leases = await this.unitOfWork.write(async (manager) => {
            const written: (Lease | undefined)[] = [];
            for (const { lease, changes, position } of batch) {
              const changed = await setLease(manager, lease, changes);
              if (changed)
                await this.store.advance(manager, webhookCheckpoint(lease.row.id), position);
              written.push(changed);
            }
            return written;
          });
          batch.forEach((entry, index) => entry.settle(leases[index]));
        } catch (error) {
          for (const entry of batch) entry.fail(error);
        }
      }
    } finally {
      this.writing = false;
    }
  }
}
