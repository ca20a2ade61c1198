import { type DynamicModule, Module, type ModuleMetadata } from '@nestjs/common';
import { type Logger } from 'pino';
import { type AppConfig } from './config/app-config';
import { AuthModule } from './auth/auth.module';
import { AppConfigModule } from './config/app-config.module';
import { DataImportModule, DemoDataLoader } from './data-import';
import { DatabaseModule } from './database/database.module';
import { EventFeedModule } from './event-feed';
import { EventsModule } from './event-relay/events.module';
import { HealthModule } from './health/health.module';
import { LoggingModule } from './logging/logging.module';
import { MetricsModule } from './metrics/metrics.module';
import { RequirementModule } from './requirement';
import { TracingModule } from './tracing/tracing.module';
import { TransactionModule } from './transaction';
import { WebhookModule } from './webhook';
import { WireModule } from './wire';

/** The service's feature modules: each a folder of src with its door, mounted on the shared ones. */
export const FEATURE_MODULES = [
  DataImportModule,
  RequirementModule,
  TransactionModule,
  EventFeedModule,
  WebhookModule,
] as const;

@Module({})
export class AppModule {
  /**
   * `logger`: the root logger, for the request lines and the service's own.
   * `modules`: mounted beside the feature modules, as a test mounts a module of its own.
   * `features`: the feature modules mounted, all unless told; a module test mounts one alone, with
   * what it imports, on the shared modules (as Spring Modulith's @ApplicationModuleTest does).
   */
  static forRoot(
    config: AppConfig,
    logger: Logger,
    modules: ModuleMetadata['imports'] = [],
    features: ModuleMetadata['imports'] = [...FEATURE_MODULES],
  ): DynamicModule {
    return {
      module: AppModule,
      imports: [
        AppConfigModule.forRoot(config),
        LoggingModule.forRoot(logger),
        AuthModule.forRoot(config),
        DatabaseModule.forRoot(config.database),
        TracingModule,
        WireModule,
        ...features,
        HealthModule,
        MetricsModule,
        EventsModule,
        ...modules,
      ],
      // The demo data is loaded through the import, where it is mounted.
      providers: features.includes(DataImportModule) ? [DemoDataLoader] : [],
    };
  }
}
