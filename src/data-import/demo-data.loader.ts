import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { join } from 'node:path';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { UnitOfWork } from '../database/unit-of-work';
import { RequirementDto, RequirementTypeEntity } from '../requirement';
import { TransactionDto, TransactionEntity } from '../transaction';
import { ImportService } from './import.service';
import { recordFile } from './record-files';

export const DEMO_DIRECTORY = join(__dirname, 'demo');

/**
 * Fills an empty embedded database with a small demo data set, through the import path and its rules,
 * so a first run has something to show. Never on MySQL, and not with DEMO_DATA=false.
 */
@Injectable()
export class DemoDataLoader implements OnApplicationBootstrap {
  private readonly logger = new Logger(DemoDataLoader.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly unitOfWork: UnitOfWork,
    private readonly importer: ImportService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { database } = this.config;
    if (database.kind !== 'sqlite' || !database.demoData) return;
    const stored = await this.unitOfWork.read(
      async (manager) =>
        (await manager.count(RequirementTypeEntity)) + (await manager.count(TransactionEntity)),
    );
    if (stored > 0) return;
    const requirementsFile = join(DEMO_DIRECTORY, 'requirements.json');
    const transactionsFile = join(DEMO_DIRECTORY, 'transactions.json');
    const summary = await this.importer.run({
      requirements: {
        source: 'demo requirements',
        records: await recordFile(
          requirementsFile,
          RequirementDto,
          'requirement_type_id',
          this.config.importMaxRecordSize,
        ),
      },
      transactions: {
        source: 'demo transactions',
        records: await recordFile(
          transactionsFile,
          TransactionDto,
          'transaction_id',
          this.config.importMaxRecordSize,
        ),
      },
    });
    this.logger.log(
      `Loaded the demo data set: ${summary.requirementTypes.created} requirement types, ` +
        `${summary.transactions.created} transactions (DEMO_DATA=false turns this off)`,
    );
  }
}
