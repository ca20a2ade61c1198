import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Publishes } from '../events/module-events';
import { REQUIREMENT_ENTITIES } from '../requirement';
import { TRANSACTION_ENTITIES } from '../transaction';
import { ExportService } from './export.service';
import { DATA_IMPORTED } from './import.events';
import { ImportService } from './import.service';

@Publishes(DATA_IMPORTED)
@Module({
  // It loads both modules' tables.
  imports: [TypeOrmModule.forFeature([...REQUIREMENT_ENTITIES, ...TRANSACTION_ENTITIES])],
  providers: [ImportService, ExportService],
  exports: [ImportService, ExportService],
})
export class DataImportModule {}
