import { InitialSchema1795337580079 } from './1795337580079-InitialSchema';

/** The production schema, oldest first; applied by `npm run migration:run` or MIGRATIONS_RUN=true. */
export const MYSQL_MIGRATIONS = [InitialSchema1795337580079];
