/**
 * The webhook module's door: all that another module may use of it. The rest of this folder is the
 * module's own; the dependency-cruiser plan (modules-through-their-door) refuses an import of it
 * from outside.
 */
export { WebhookModule } from './webhook.module';

// Its tables, for the data source (src/app.entities.ts).
export { WEBHOOK_ENTITIES } from './entities';
