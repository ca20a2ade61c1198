import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScratchDatabase, scratchServerUrl } from '../../scripts/scratch-database';

export type DatabaseKind = 'sqlite' | 'mariadb';

/**
 * The server the MariaDB runs use (TEST_DATABASE_URL); each test file makes its own database there,
 * named by SCRATCH_DATABASE_PREFIX, and drops it after.
 */
export const MARIADB_SERVER_URL = scratchServerUrl();

/**
 * The databases every e2e suite runs on. Both, unless TEST_DATABASES names fewer; in CI both always
 * run, so a missing MariaDB fails the run instead of skipping.
 */
export function testDatabaseKinds(): DatabaseKind[] {
  const requested = (process.env.TEST_DATABASES ?? 'sqlite,mariadb')
    .split(',')
    .map((kind) => kind.trim());
  if (process.env.CI && requested.join() !== 'sqlite,mariadb') {
    throw new Error('CI runs every e2e suite on both databases; unset TEST_DATABASES.');
  }
  return requested.filter((kind): kind is DatabaseKind => kind === 'sqlite' || kind === 'mariadb');
}

/**
 * A describe for what exists on MariaDB alone (read replicas, a server's outage, a Galera cluster):
 * skipped, and reported as skipped, when TEST_DATABASES leaves MariaDB out; CI never does.
 */
export const describeOnMariaDb = testDatabaseKinds().includes('mariadb') ? describe : describe.skip;

export interface TestDatabase {
  readonly kind: DatabaseKind;
  /** DATABASE_URL of a fresh, empty database. */
  readonly url: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  const suffix = `${process.pid}_${randomBytes(4).toString('hex')}`;
  if (kind === 'sqlite') {
    const path = join(tmpdir(), `property-sales-test-${suffix}.sqlite`);
    return {
      kind,
      url: `sqlite:${path}`,
      drop: async () => {
        await Promise.all(
          ['', '-wal', '-shm'].map((tail) => rm(`${path}${tail}`, { force: true })),
        );
      },
    };
  }
  const { url, drop } = await createScratchDatabase(MARIADB_SERVER_URL, 'test');
  return { kind, url, drop };
}

/**
 * Runs `check` on every test database at once, for a test whose time is mostly waiting on each (a
 * broker away, a lease running out): each run has a database of its own, and whatever else it
 * starts. Once all have ended, fails with their failures, each named by its database.
 */
export async function onEachDatabaseAtOnce(
  check: (kind: DatabaseKind) => Promise<void>,
): Promise<void> {
  const kinds = testDatabaseKinds();
  const outcomes = await Promise.allSettled(kinds.map((kind) => check(kind)));
  const failures = outcomes.flatMap((outcome, index) =>
    outcome.status === 'rejected' ? [{ kind: kinds[index], error: outcome.reason as unknown }] : [],
  );
  if (failures.length === 0) return;
  const [first] = failures;
  const error = first.error instanceof Error ? first.error : new Error(String(first.error));
  error.message = failures
    .map(
      ({ kind, error: failure }) =>
        `[${kind}] ${failure instanceof Error ? failure.message : String(failure)}`,
    )
    .join('\n\n');
  throw error;
}
