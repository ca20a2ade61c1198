/**
 * The event feed module's door: all that another module may use of it. The rest of this folder is
 * the module's own; the dependency-cruiser plan (modules-through-their-door) refuses an import of it
 * from outside.
 */
export { EventFeedModule } from './event-feed.module';
