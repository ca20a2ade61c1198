import { Module, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Publishes } from '../../../src/events/module-events';
import { TransactionModule } from '../../../src/transaction';
import { TEST_LEDGER_TABLE, TestLedger } from './test-ledger';
import { TEST_LEDGER_SPLITS_CHANGED, TEST_LEDGER_RECOMPUTED } from './test-ledger.events';

/**
 * A module of the kind the team adds, mounted beside the service's own in every e2e suite: it reacts
 * to AgentsChanged and DataImported after commit, reads through the transaction module's door, and
 * publishes events of its own, so every suite proves the service with a reacting module in it.
 */
@Publishes(TEST_LEDGER_SPLITS_CHANGED, TEST_LEDGER_RECOMPUTED)
@Module({
  imports: [TransactionModule],
  providers: [TestLedger],
  exports: [TestLedger],
})
export class TestLedgerModule implements OnModuleInit {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async onModuleInit(): Promise<void> {
    await this.dataSource.query(TEST_LEDGER_TABLE);
  }
}
