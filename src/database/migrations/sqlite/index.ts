import { InitialSchema1795337578554 } from './1795337578554-InitialSchema';

/** The embedded database's schema, oldest first; the service applies them at every start. */
export const SQLITE_MIGRATIONS = [InitialSchema1795337578554];
