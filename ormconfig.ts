import { DataSource } from 'typeorm';
import { APP_ENTITIES } from './src/app.entities';
import { loadAppConfig } from './src/config/app-config';
import { dataSourceOptions } from './src/database/data-source-options';

/** The DataSource of the TypeORM CLI (`npm run migration:*`), on the database DATABASE_URL names. */
export default new DataSource(
  dataSourceOptions(loadAppConfig(process.env, { serving: false }).database, APP_ENTITIES),
);
