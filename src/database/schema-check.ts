import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, MigrationExecutor } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/app-config';

/** The database's schema is not the one this release was built for; the message says how. */
export class SchemaMismatchError extends Error {}

/** Migrations of this release are not applied yet: running them (or MIGRATIONS_RUN=true) fixes it. */
export class SchemaBehindError extends SchemaMismatchError {}

/** Statements quoted in a drift report: enough to name the difference, one line still. */
const QUOTED_STATEMENTS = 3;

/** A check readiness reuses: when it was started, and its answer. */
interface RecentCheck {
  readonly startedAt: number;
  readonly matches: Promise<boolean>;
}

/**
 * On MySQL and MariaDB the schema is built by the migrations, run as a step of their own (or by
 * MIGRATIONS_RUN=true, before this check): a release that meets a database behind it, or one changed
 * by hand, refuses to start rather than answer 500s. Readiness asks again at most every
 * SCHEMA_CHECK_INTERVAL_MS (comparing the schema reads the whole catalogue of the database), so a
 * table or column dropped while running takes the instance out of rotation within that time. The
 * embedded SQLite database is always migrated at start and needs no check.
 */
@Injectable()
export class SchemaCheck implements OnModuleInit {
  private readonly logger = new Logger(SchemaCheck.name);
  private lastProblem?: string;
  private recent?: RecentCheck;
  private readonly intervalMs: number;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) { database }: AppConfig,
  ) {
    this.intervalMs = database.kind === 'mysql' ? database.schemaCheckIntervalMs : 0;
  }

  get applies(): boolean {
    return this.dataSource.options.type !== 'better-sqlite3';
  }

  async onModuleInit(): Promise<void> {
    if (!this.applies) return;
    const problem = await this.problem();
    if (problem) throw problem;
  }

  /**
   * For readiness: whether the schema is as expected, as checked within the interval. Probes that
   * arrive together share one check; a check that failed (the database did not answer) is not reused.
   */
  matches(): Promise<boolean> {
    const now = Date.now();
    if (!this.recent || now - this.recent.startedAt >= this.intervalMs) {
      const matches = this.check();
      const recent: RecentCheck = { startedAt: now, matches };
      this.recent = recent;
      matches.catch(() => {
        if (this.recent === recent) this.recent = undefined;
      });
    }
    return this.recent.matches;
  }

  /** Checks the schema now. A change of the answer is logged with its details, once. */
  private async check(): Promise<boolean> {
    const problem = this.applies ? (await this.problem())?.message : undefined;
    if (problem !== this.lastProblem) {
      if (problem) this.logger.error(problem);
      else this.logger.log('The database schema matches this release again.');
      this.lastProblem = problem;
    }
    return problem === undefined;
  }

  /** What is wrong with the schema, for an operator; undefined when nothing is. */
  private async problem(): Promise<SchemaMismatchError | undefined> {
    const pending = await new MigrationExecutor(this.dataSource).getPendingMigrations();
    if (pending.length > 0) {
      return new SchemaBehindError(
        `The database schema is behind this release: ${pending.length} of ` +
          `${this.dataSource.migrations.length} migrations are pending ` +
          `(${pending.map((migration) => migration.name).join(', ')}). Run them first ` +
          '(npm run migration:run), or set MIGRATIONS_RUN=true on one instance.',
      );
    }
    const { upQueries } = await this.dataSource.driver.createSchemaBuilder().log();
    if (upQueries.length === 0) return undefined;
    const quoted = upQueries.slice(0, QUOTED_STATEMENTS).map((statement) => statement.query);
    return new SchemaMismatchError(
      'The database schema differs from what this release expects, although every migration is ' +
        `applied (${upQueries.length} difference(s); to match, it would run: ${quoted.join('; ')}). ` +
        'Restore the schema the migrations built; MIGRATIONS_RUN does not change it.',
    );
  }
}
