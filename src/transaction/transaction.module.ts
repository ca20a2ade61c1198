import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { TRANSACTION_ENTITIES } from './entities';
import { TransactionController } from './transaction.controller';
import { TransactionService } from './transaction.service';

@Module({
  imports: [TypeOrmModule.forFeature(TRANSACTION_ENTITIES)],
  controllers: [TransactionController],
  providers: [TransactionService],
})
export class TransactionModule {}
