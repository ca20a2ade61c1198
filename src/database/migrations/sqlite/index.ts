import { InitialSchema1795337578554 } from './1795337578554-InitialSchema';
import { CatalogueVersion1795341219492 } from './1795341219492-CatalogueVersion';
import { WideTextColumns1795411873512 } from './1795411873512-WideTextColumns';
import { WideCallerId1795426546718 } from './1795426546718-WideCallerId';
import { ListingIndexes1795600000000 } from './1795600000000-ListingIndexes';
import { EventOutbox1795712384891 } from './1795712384891-EventOutbox';
import { EventIdIndex1795874974748 } from './1795874974748-EventIdIndex';
import { AgentHistoryVersions1795875530975 } from './1795875530975-AgentHistoryVersions';
import { AddWebhookSubscription1795889062027 } from './1795889062027-AddWebhookSubscription';
import { AddWebhookOwner1796588638215 } from './1796588638215-AddWebhookOwner';
import { ReactionRunBound1796599046062 } from './1796599046062-ReactionRunBound';

/** The embedded database's schema, oldest first; the service applies them at every start. */
export const SQLITE_MIGRATIONS = [
  InitialSchema1795337578554,
  CatalogueVersion1795341219492,
  WideTextColumns1795411873512,
  WideCallerId1795426546718,
  ListingIndexes1795600000000,
  EventOutbox1795712384891,
  EventIdIndex1795874974748,
  AgentHistoryVersions1795875530975,
  AddWebhookSubscription1795889062027,
  AddWebhookOwner1796588638215,
  ReactionRunBound1796599046062,
];
