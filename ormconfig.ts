import { DataSource } from 'typeorm';
import { APP_ENTITIES } from './src/app.entities';
import { loadAppConfig } from './src/config/app-config';
import { dataSourceOptions } from './src/database/data-source-options';
import { withServerDialect } from './src/database/server-dialect';

/**
 * The DataSource of the TypeORM CLI (`npm run migration:*`), on the database DATABASE_URL names, in
 * the dialect its server speaks.
 */
export default withServerDialect(
  dataSourceOptions(loadAppConfig(process.env, { serving: false }).database, APP_ENTITIES),
).then((options) => new DataSource(options));
