import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { REQUIREMENT_ENTITIES } from '../requirement/entities';
import { TRANSACTION_ENTITIES } from '../transaction/entities';
import { ImportService } from './import.service';

@Module({
  // It loads both modules' tables.
  imports: [TypeOrmModule.forFeature([...REQUIREMENT_ENTITIES, ...TRANSACTION_ENTITIES])],
  providers: [ImportService],
  exports: [ImportService],
})
export class DataImportModule {}
