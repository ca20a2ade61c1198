import { InitialSchema1795337580079 } from './1795337580079-InitialSchema';
import { CatalogueVersion1795341221536 } from './1795341221536-CatalogueVersion';
import { WideTextColumns1795411875242 } from './1795411875242-WideTextColumns';
import { WideCallerId1795426546718 } from './1795426546718-WideCallerId';
import { ListingIndexes1795600000000 } from './1795600000000-ListingIndexes';
import { EventOutbox1795712398666 } from './1795712398666-EventOutbox';
import { EventIdIndex1795874984598 } from './1795874984598-EventIdIndex';
import { AgentHistoryVersions1795875575502 } from './1795875575502-AgentHistoryVersions';
import { AddWebhookSubscription1795889068074 } from './1795889068074-AddWebhookSubscription';
import { AddWebhookOwner1796588649087 } from './1796588649087-AddWebhookOwner';
import { ReactionRunBound1796599053919 } from './1796599053919-ReactionRunBound';

/** The production schema, oldest first; applied by `npm run migration:run` or MIGRATIONS_RUN=true. */
export const MYSQL_MIGRATIONS = [
  InitialSchema1795337580079,
  CatalogueVersion1795341221536,
  WideTextColumns1795411875242,
  WideCallerId1795426546718,
  ListingIndexes1795600000000,
  EventOutbox1795712398666,
  EventIdIndex1795874984598,
  AgentHistoryVersions1795875575502,
  AddWebhookSubscription1795889068074,
  AddWebhookOwner1796588649087,
  ReactionRunBound1796599053919,
];
