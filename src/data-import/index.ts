/**
 * The data-import module's door: what the application mounts. Its commands (main.ts, export-main.ts)
 * run on their own.
 */
export { DataImportModule } from './data-import.module';
export { DemoDataLoader } from './demo-data.loader';

// The event an import run publishes.
export { DATA_IMPORTED } from './import.events';
