import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Mutex } from 'async-mutex';
import { DataSource, type EntityManager } from 'typeorm';

/**
 * Where services touch the database. On MySQL each unit runs on a pooled connection; the embedded
 * SQLite database has a single connection, so its units run one at a time and never see each other's
 * uncommitted writes.
 */
@Injectable()
export class UnitOfWork {
  private readonly exclusive?: Mutex;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    if (dataSource.options.type === 'better-sqlite3') this.exclusive = new Mutex();
  }

  get isSqlite(): boolean {
    return this.exclusive !== undefined;
  }

  /** Runs `work` in one database transaction: all of it commits, or none of it. */
  write<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    if (this.exclusive) return this.exclusive.runExclusive(() => this.dataSource.transaction(work));
    return this.dataSource.transaction('READ COMMITTED', work);
  }

  read<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    const run = () => work(this.dataSource.manager);
    return this.exclusive ? this.exclusive.runExclusive(run) : run();
  }
}
