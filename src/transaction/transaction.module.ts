import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Publishes } from '../events/module-events';
import { TRANSACTION_ENTITIES } from './entities';
import { TransactionController } from './transaction.controller';
import { AGENTS_CHANGED } from './transaction.events';
import { TransactionQueries } from './transaction.queries';
import { TransactionService } from './transaction.service';

@Publishes(AGENTS_CHANGED)
@Module({
  imports: [TypeOrmModule.forFeature(TRANSACTION_ENTITIES)],
  controllers: [TransactionController],
  providers: [TransactionService, TransactionQueries],
  // What other modules may ask of a transaction; they import this module to inject it.
  exports: [TransactionQueries],
})
export class TransactionModule {}
