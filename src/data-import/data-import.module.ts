import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { REQUIREMENT_ENTITIES } from '../requirement';
import { TRANSACTION_ENTITIES } from '../transaction';
import { ExportService } from './export.service';
import { ImportService } from './import.service';

@Module({
  // It loads both modules' tables.
  imports: [TypeOrmModule.forFeature([...REQUIREMENT_ENTITIES, ...TRANSACTION_ENTITIES])],
  providers: [ImportService, ExportService],
  exports: [ImportService, ExportService],
})
export class DataImportModule {}
