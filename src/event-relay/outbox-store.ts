import { type DataSource, type EntityManager } from 'typeorm';
import { type Row, type Statement } from '../common/statement';
import { reactionCheckpoint } from '../events/batched-reaction';
import { EventCheckpointEntity, OutboxEventEntity } from '../events/entities';
import { POSITIONS } from '../events/outbox';

/** An event as the relay reads it from the outbox. */
export interface StoredEvent {
  readonly position: number;
  readonly id: string;
  readonly routingKey: string;
  /** When its change was made. */
  readonly time: Date;
  /** The CloudEvent, structured JSON, as published. */
  readonly body: string;
}

/** An event's place in the outbox and its kind, without its body. */
export interface EventKey {
  readonly position: number;
  readonly routingKey: string;
}

/** What waits for one consumer of a kind of consumers, of one kind of event. */
export interface PendingOfKind {
  readonly consumer: string;
  readonly routingKey: string;
  readonly events: number;
  /** The first of them in position order. */
  readonly first: number;
  readonly oldest: Date;
}

/** What is waiting for one consumer: how many events, and the oldest one's time. */
export interface Backlog {
  readonly events: number;
  readonly oldest?: Date;
}

/** What one read of the event feed found. */
export interface FeedRead {
  /** The events' bodies, in position order, as stored. */
  readonly bodies: string[];
  /** Whether the reader's last event is still in the outbox; true for a read from the oldest. */
  readonly found: boolean;
}

/** Events given positions by one step: a burst of UpdateAgents at full speed, in one statement. */
export const POSITION_BATCH = 5000;
/** Rows one purge statement deletes: short locks, whatever the backlog. */
const PURGE_BATCH = 10_000;

/** One `?` a value. */
const placeholders = (values: readonly unknown[]) => values.map(() => '?').join(', ');

/** A datetime column's value as the driver reads it: a Date on MySQL, UTC text on SQLite. */
function dateOf(value: unknown): Date {
  if (value instanceof Date) return value;
  const text = String(value);
  return new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(text) ? text : `${text.replace(' ', 'T')}Z`);
}

/** Events as read from the outbox's rows. */
const storedEvents = (rows: readonly Row[]): StoredEvent[] =>
  rows.map((row) => ({
    position: Number(row.position),
    id: String(row.event_id),
    routingKey: String(row.routing_key),
    time: dateOf(row.time),
    body: String(row.body),
  }));

/**
 * The outbox's statements. Events get their `position` after they commit, in order (a transaction's
 * events in the order they committed: each takes its sequence under the transaction's row lock, so
 * after the one before it committed), and each consumer reads past its checkpoint by position. On
 * MySQL/MariaDB a consumer's checkpoint row is also its lock: `FOR UPDATE SKIP LOCKED`, so one
 * instance at a time delivers a consumer's events, and the others go on. SQLite serves one instance.
 */
export class OutboxStore {
  private readonly mysql: boolean;
  private readonly outbox: string;
  private readonly checkpoints: string;
  private readonly timeColumn;
  /**
   * The body as stored: mysql2 would parse a MariaDB JSON column, and the relay publishes the text
   * the unit of work wrote.
   */
  private readonly bodyText: string;
  private readonly lastGivenStatement: Statement;
  private readonly startRunSql: string;

  constructor(private readonly dataSource: DataSource) {
    const escape = (name: string) => dataSource.driver.escape(name);
    this.mysql = dataSource.options.type !== 'better-sqlite3';
    const outbox = dataSource.getMetadata(OutboxEventEntity);
    this.outbox = escape(outbox.tableName);
    this.checkpoints = escape(dataSource.getMetadata(EventCheckpointEntity).tableName);
    this.timeColumn = outbox.findColumnWithPropertyName('time')!;
    this.bodyText = this.mysql ? 'CAST(body AS CHAR)' : 'body';
    this.lastGivenStatement = {
      sql: `SELECT position FROM ${this.checkpoints} WHERE consumer = ?`,
      parameters: [POSITIONS],
    };
    // A start while a run is under way widens it to cover both: from the lower start, to the higher
    // bound (to every key when either has none).
    this.startRunSql = this.mysql
      ? `INSERT INTO ${this.checkpoints} (consumer, position, until_position) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE position = LEAST(position, VALUES(position)), until_position = CASE WHEN until_position IS NULL OR VALUES(until_position) IS NULL THEN NULL ELSE GREATEST(until_position, VALUES(until_position)) END`
      : `INSERT INTO ${this.checkpoints} (consumer, position, until_position) VALUES (?, ?, ?) ON CONFLICT (consumer) DO UPDATE SET position = MIN(position, excluded.position), until_position = CASE WHEN until_position IS NULL OR excluded.until_position IS NULL THEN NULL ELSE MAX(until_position, excluded.until_position) END`;
  }

  /** Adds the checkpoints missing, each at the last position given: a new consumer starts now. */
  async addCheckpoints(manager: EntityManager, consumers: readonly string[]): Promise<void> {
    const ignore = this.mysql ? 'INSERT IGNORE' : 'INSERT OR IGNORE';
    await manager.query(`${ignore} INTO ${this.checkpoints} (consumer, position) VALUES (?, 0)`, [
      POSITIONS,
    ]);
    const [{ position }] = await manager.query<Row[]>(
      `SELECT position FROM ${this.checkpoints} WHERE consumer = ?`,
      [POSITIONS],
    );
    for (const consumer of consumers)
      await manager.query(`${ignore} INTO ${this.checkpoints} (consumer, position) VALUES (?, ?)`, [
        consumer,
        position,
      ]);
  }

  /**
   * Gives the committed events without a position theirs, after every position given before; how many
   * it gave. Run by one instance at a time (the `~positions` row's lock). The events are named by key,
   * so the UPDATE locks those rows alone, never a range a writer inserts into. An event still
   * uncommitted at the read gets a later position: a transaction's next event is inserted only after
   * it committed (under the transaction's row lock), so its events keep their commit order.
   */
  async givePositions(manager: EntityManager): Promise<number> {
    const [given] = await manager.query<Row[]>(
      `SELECT position FROM ${this.checkpoints} WHERE consumer = ?${this.mysql ? ' FOR UPDATE' : ''}`,
      [POSITIONS],
    );
    const waiting = await manager.query<Row[]>(
      `SELECT sequence FROM ${this.outbox} WHERE position IS NULL ORDER BY sequence LIMIT ${POSITION_BATCH}`,
    );
    if (!given || waiting.length === 0) return 0;
    const sequences = waiting.map((row) => Number(row.sequence));
    const last = sequences.at(-1)!;
    const offset = Number(given.position) - sequences[0] + 1;
    await manager.query(
      `UPDATE ${this.outbox} SET position = sequence + ? WHERE sequence IN (${placeholders(sequences)})`,
      [offset, ...sequences],
    );
    await manager.query(`UPDATE ${this.checkpoints} SET position = ? WHERE consumer = ?`, [
      last + offset,
      POSITIONS,
    ]);
    return waiting.length;
  }

  /**
   * The consumer's checkpoint, its row locked until the transaction ends; undefined when another
   * instance holds it (MySQL/MariaDB) or the consumer has no checkpoint.
   */
  async claim(manager: EntityManager, consumer: string): Promise<number | undefined> {
    const [row] = await manager.query<Row[]>(
      `SELECT position FROM ${this.checkpoints} WHERE consumer = ?${this.mysql ? ' FOR UPDATE SKIP LOCKED' : ''}`,
      [consumer],
    );
    return row ? Number(row.position) : undefined;
  }

  /**
   * A batched reaction's run, claimed as `claim` claims a checkpoint: the last key it did, and the
   * last it covers when it has a bound; undefined when no run is under way, or another instance holds
   * it.
   */
  async claimRun(
    manager: EntityManager,
    consumer: string,
  ): Promise<{ after: number; until?: number } | undefined> {
    const [row] = await manager.query<Row[]>(
      `SELECT position, until_position FROM ${this.checkpoints} WHERE consumer = ?${this.mysql ? ' FOR UPDATE SKIP LOCKED' : ''}`,
      [consumer],
    );
    if (!row) return undefined;
    const after = Number(row.position);
    return row.until_position == null ? { after } : { after, until: Number(row.until_position) };
  }

  /**
   * Starts a batched reaction's run after the key `after`, up to `until` when given; a run under way
   * is widened to cover both.
   */
  async startRun(
    manager: EntityManager,
    consumer: string,
    after: number,
    until: number | undefined,
  ): Promise<void> {
    await manager.query(this.startRunSql, [consumer, after, until ?? null]);
  }

  /**
   * Starts a run from the first key of each of `reactions` (`Provider.method`) this database has not
   * back-filled yet, and marks it back-filled (`backfill:<name>`): once a database, whatever
   * the restarts and instances. On MySQL the look-up locks the marker's place, so two instances
   * starting together cannot both start it (the second waits, or deadlocks and is run again). The
   * names of those it started.
   */
  async startBackfills(manager: EntityManager, reactions: readonly string[]): Promise<string[]> {
    const started: string[] = [];
    for (const reaction of reactions) {
      const marker = `backfill:${reaction}`;
      const [done] = await manager.query<Row[]>(
        `SELECT position FROM ${this.checkpoints} WHERE consumer = ?${this.mysql ? ' FOR UPDATE' : ''}`,
        [marker],
      );
      if (done) continue;
      await manager.query(`INSERT INTO ${this.checkpoints} (consumer, position) VALUES (?, 0)`, [
        marker,
      ]);
      await this.startRun(manager, reactionCheckpoint(reaction), 0, undefined);
      started.push(reaction);
    }
    return started;
  }

  /** The consumer's checkpoint, read without a lock; undefined when it has none. */
  async checkpoint(manager: EntityManager, consumer: string): Promise<number | undefined> {
    const [row] = await manager.query<Row[]>(
      `SELECT position FROM ${this.checkpoints} WHERE consumer = ?`,
      [consumer],
    );
    return row ? Number(row.position) : undefined;
  }

  /** Up to `limit` events past `position`, in order. */
  async after(manager: EntityManager, position: number, limit: number): Promise<StoredEvent[]> {
    return storedEvents(
      await manager.query<Row[]>(
        `SELECT position, event_id, routing_key, time, ${this.bodyText} AS body FROM ${this.outbox} WHERE position > ? ORDER BY position LIMIT ${limit}`,
        [position],
      ),
    );
  }

  /** The positions and kinds of up to `limit` events past `position`, in order: no bodies read. */
  async keysAfter(manager: EntityManager, position: number, limit: number): Promise<EventKey[]> {
    const rows = await manager.query<Row[]>(
      `SELECT position, routing_key FROM ${this.outbox} WHERE position > ? ORDER BY position LIMIT ${limit}`,
      [position],
    );
    return rows.map((row) => ({
      position: Number(row.position),
      routingKey: String(row.routing_key),
    }));
  }

  /** Up to `limit` events with one of `routingKeys` past `position`, in order. */
  async ofKinds(
    manager: EntityManager,
    position: number,
    routingKeys: readonly string[],
    limit: number,
  ): Promise<StoredEvent[]> {
    return storedEvents(
      await manager.query<Row[]>(
        `SELECT position, event_id, routing_key, time, ${this.bodyText} AS body FROM ${this.outbox} WHERE position > ? AND routing_key IN (${placeholders(routingKeys)}) ORDER BY position LIMIT ${limit}`,
        [position, ...routingKeys],
      ),
    );
  }

  /** The checkpoints of those of `consumers` that have one, by consumer. */
  async checkpointsOf(
    manager: EntityManager,
    consumers: readonly string[],
  ): Promise<Map<string, number>> {
    if (consumers.length === 0) return new Map();
    const rows = await manager.query<Row[]>(
      `SELECT consumer, position FROM ${this.checkpoints} WHERE consumer IN (${placeholders(consumers)})`,
      [...consumers],
    );
    return new Map(rows.map((row) => [String(row.consumer), Number(row.position)]));
  }

  /** Removes a checkpoint: a reaction's run is over. */
  async remove(manager: EntityManager, consumer: string): Promise<void> {
    await manager.query(`DELETE FROM ${this.checkpoints} WHERE consumer = ?`, [consumer]);
  }

  /** Moves the consumer's checkpoint forward to `position`; never back. */
  async advance(manager: EntityManager, consumer: string, position: number): Promise<void> {
    await manager.query(
      `UPDATE ${this.checkpoints} SET position = ? WHERE consumer = ? AND position < ?`,
      [position, consumer, position],
    );
  }

  /**
   * For every consumer whose name begins with `prefix`, what waits for it past its checkpoint, kind
   * by kind; then, as consumer `''`, the committed events without a position yet, which wait for
   * every consumer. One statement whatever the number of consumers: a consumer caught up costs an
   * index look-up.
   */
  async pendingByKind(manager: EntityManager, prefix: string): Promise<PendingOfKind[]> {
    const positioned = await manager.query<Row[]>(
      `SELECT c.consumer AS consumer, o.routing_key AS routing_key, COUNT(*) AS events, MIN(o.position) AS first, MIN(o.time) AS oldest FROM ${this.checkpoints} c JOIN ${this.outbox} o ON o.position > c.position WHERE SUBSTR(c.consumer, 1, ?) = ? GROUP BY c.consumer, o.routing_key`,
      [prefix.length, prefix],
    );
    const unpositioned = await manager.query<Row[]>(
      `SELECT '' AS consumer, routing_key, COUNT(*) AS events, 0 AS first, MIN(time) AS oldest FROM ${this.outbox} WHERE position IS NULL GROUP BY routing_key`,
    );
    return [...positioned, ...unpositioned].map((row) => ({
      consumer: String(row.consumer),
      routingKey: String(row.routing_key),
      events: Number(row.events),
      first: Number(row.first),
      oldest: dateOf(row.oldest),
    }));
  }

  /**
   * What waits for `consumer`: the events of its `kinds` (routing keys; absent, every kind) past its
   * checkpoint, and those without a position yet.
   */
  async backlog(
    manager: EntityManager,
    consumer: string,
    kinds?: readonly string[],
  ): Promise<Backlog> {
    const [row] = await manager.query<Row[]>(
      `SELECT COUNT(*) AS events, MIN(o.time) AS oldest FROM ${this.outbox} o WHERE (o.position IS NULL OR o.position > (SELECT c.position FROM ${this.checkpoints} c WHERE c.consumer = ?))${kinds ? ` AND o.routing_key IN (${placeholders(kinds)})` : ''}`,
      [consumer, ...(kinds ?? [])],
    );
    return {
      events: Number(row?.events ?? 0),
      oldest: row?.oldest == null ? undefined : dateOf(row.oldest),
    };
  }

  /**
   * Deletes, a batch at a time, the oldest events: in position order, those every consumer in
   * `consumers` has (none: every positioned event), up to `held` (a module's consumers' lowest
   * position; undefined holds nothing), and older than `before`, up to the first that is
   * not, so that what follows any event still there is whole. With `keepLast` (the feed is on), the
   * last of them stays until the event after it is older than `before` too: a feed reader holding
   * its id, caught up, can go on however long nothing happens. How many it deleted.
   */
  async purge(
    manager: EntityManager,
    consumers: readonly string[],
    held: number | undefined,
    before: Date,
    keepLast: boolean,
  ): Promise<number> {
    const holders = [POSITIONS, ...consumers];
    const [row] = await manager.query<Row[]>(
      `SELECT MIN(position) AS position FROM ${this.checkpoints} WHERE consumer IN (${placeholders(holders)})`,
      holders,
    );
    if (row?.position == null) return 0;
    const upTo = Math.min(Number(row.position), held ?? Number.POSITIVE_INFINITY);
    const time = this.dataSource.driver.preparePersistentValue(before, this.timeColumn) as unknown;
    const oldest = await manager.query<Row[]>(
      `SELECT sequence, CASE WHEN time < ? THEN 1 ELSE 0 END AS old FROM ${this.outbox} WHERE position <= ? ORDER BY position LIMIT ${PURGE_BATCH + 1}`,
      [time, upTo],
    );
    const young = oldest.findIndex((event) => Number(event.old) !== 1);
    const old = young < 0 ? oldest.length : young;
    // Named by key, as positions are given: no range lock holds up the writers' inserts.
    const purged = oldest
      .slice(0, Math.min(Math.max(0, keepLast ? old - 1 : old), PURGE_BATCH))
      .map((event) => Number(event.sequence));
    if (purged.length > 0)
      await manager.query(
        `DELETE FROM ${this.outbox} WHERE sequence IN (${placeholders(purged)})`,
        purged,
      );
    return purged.length;
  }

  /** The last position given: every event up to it has one (in the reading transaction's view). */
  async lastGiven(manager: EntityManager): Promise<number> {
    const [row] = await manager.query<Row[]>(this.lastGivenStatement.sql, [
      ...this.lastGivenStatement.parameters,
    ]);
    return Number(row?.position ?? 0);
  }

  /**
   * The statements of one read of the feed, to send together: up to `limit` events, in position
   * order, after the event `lastEventId` names (from the oldest without it) and up to position `upTo`
   * when given, then whether that event is still there. Read in that order, and purged oldest first,
   * an event found was there when the events after it were read. Only positioned events are read: in
   * the order the broker and the handlers get them; every position up to `upTo` is given, so a read
   * up to it answers the same whenever it is made.
   */
  feedStatements(lastEventId: string | undefined, limit: number, upTo?: number): Statement[] {
    // Written into the statement: a whole number, as the feed's query allows.
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`No page of ${limit}`);
    const bound = upTo === undefined ? '' : ' AND position <= ?';
    const page = (after: string, parameters: unknown[]): Statement => ({
      sql: `SELECT ${this.bodyText} AS body FROM ${this.outbox} WHERE position > ${after}${bound} ORDER BY position LIMIT ${limit}`,
      parameters: upTo === undefined ? parameters : [...parameters, upTo],
    });
    if (lastEventId === undefined) return [page('0', [])];
    return [
      page(`(SELECT position FROM ${this.outbox} WHERE event_id = ?)`, [lastEventId]),
      {
        sql: `SELECT 1 AS found FROM ${this.outbox} WHERE event_id = ?`,
        parameters: [lastEventId],
      },
    ];
  }

  /** What the rows of `feedStatements` say. */
  feedRead([page, found]: readonly Row[][]): FeedRead {
    return {
      bodies: page.map((row) => String(row.body)),
      found: found === undefined || found.length > 0,
    };
  }
}
