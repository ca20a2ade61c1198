import { Module, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Publishes } from '../../../src/events/module-events';
import { TransactionModule } from '../../../src/transaction';
import { COMMISSION_SPLIT_TABLE, CommissionLedger } from './commission-ledger';
import { COMMISSION_SPLITS_CHANGED, COMMISSIONS_RECOMPUTED } from './commission.events';

/**
 * A module of the kind the team adds, mounted beside the service's own in every e2e suite: it reacts
 * to AgentsChanged and DataImported after commit, reads through the transaction module's door, and
 * publishes events of its own, so every suite proves the service with a reacting module in it.
 */
@Publishes(COMMISSION_SPLITS_CHANGED, COMMISSIONS_RECOMPUTED)
@Module({
  imports: [TransactionModule],
  providers: [CommissionLedger],
  exports: [CommissionLedger],
})
export class CommissionModule implements OnModuleInit {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async onModuleInit(): Promise<void> {
    await this.dataSource.query(COMMISSION_SPLIT_TABLE);
  }
}
