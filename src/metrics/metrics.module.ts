import { Global, Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { UnitOfWork } from '../database/unit-of-work';
import { RepresentationCache } from '../wire';
import { ServiceMetrics } from './service-metrics';

/** The service's Prometheus metrics; createApp mounts their request observer and their route. */
@Global()
@Module({
  providers: [
    {
      provide: ServiceMetrics,
      inject: [UnitOfWork, RepresentationCache, APP_CONFIG],
      useFactory: (
        unitOfWork: UnitOfWork,
        representations: RepresentationCache,
        { commit }: AppConfig,
      ) => new ServiceMetrics(unitOfWork, representations, commit),
    },
  ],
  exports: [ServiceMetrics],
})
export class MetricsModule {}
