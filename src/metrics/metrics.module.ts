import { Global, Module } from '@nestjs/common';
import { UnitOfWork } from '../database/unit-of-work';
import { RepresentationCache } from '../wire';
import { ServiceMetrics } from './service-metrics';

/** The service's Prometheus metrics; createApp mounts their request observer and their route. */
@Global()
@Module({
  providers: [
    {
      provide: ServiceMetrics,
      inject: [UnitOfWork, RepresentationCache],
      useFactory: (unitOfWork: UnitOfWork, representations: RepresentationCache) =>
        new ServiceMetrics(unitOfWork, representations),
    },
  ],
  exports: [ServiceMetrics],
})
export class MetricsModule {}
