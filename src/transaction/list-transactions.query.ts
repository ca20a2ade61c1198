import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { type Request } from 'express';
import { INT32_MAX, INT32_MIN, queryStringOf, readQuery, RequestValidationError } from '../wire';
import { ListTransactionsQueryDto, PAGE_LIMIT } from './dto/list-transactions-query.dto';

/** Which transactions a listing holds; every member optional, all of them must hold. */
export interface TransactionFilter {
  readonly status?: string;
  readonly financetype?: string;
  /** Named anywhere in the agent chain. */
  readonly agentId?: number;
  /** Stamped at or after this instant; orders the listing by (stamp, transaction_id). */
  readonly changedSince?: Date;
}

/** The sort key of the last row a page held: the next page starts after it. */
export interface PageKey {
  readonly transactionId: number;
  /** Present exactly when the listing is ordered by stamp. */
  readonly stamp?: Date;
}

export interface PageRequest {
  readonly filter: TransactionFilter;
  readonly after?: PageKey;
  readonly limit: number;
}

/** What a cursor carries: the filters of the listing it belongs to, and where the page ended. */
interface CursorPayload {
  readonly filter: readonly [string | null, string | null, number | null, string | null];
  readonly after: readonly [number, string | null];
}

/** The filters in a fixed order and form, so two cursors of one listing compare equal as text. */
const filterKey = (filter: TransactionFilter): CursorPayload['filter'] => [
  filter.status ?? null,
  filter.financetype ?? null,
  filter.agentId ?? null,
  filter.changedSince?.toISOString() ?? null,
];

/** Base64url of the page's filters and last sort key: opaque to clients, checked when it returns. */
export function encodeCursor(filter: TransactionFilter, after: PageKey): string {
  const payload: CursorPayload = {
    filter: filterKey(filter),
    after: [after.transactionId, after.stamp?.toISOString() ?? null],
  };
  return Buffer.from(JSON.stringify(payload)).toString('base64url');
}

const invalidCursor = (reason: string) => new RequestValidationError({ 'query.cursor': [reason] });

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The key a cursor's `after` holds, if it is one encodeCursor wrote for this order. */
function keyOf(after: unknown, byStamp: boolean): PageKey | undefined {
  if (!Array.isArray(after) || after.length !== 2) return undefined;
  const [transactionId, stamp] = after as [unknown, unknown];
  if (
    typeof transactionId !== 'number' ||
    !Number.isInteger(transactionId) ||
    transactionId < INT32_MIN ||
    transactionId > INT32_MAX
  )
    return undefined;
  if (!byStamp) return stamp === null ? { transactionId } : undefined;
  if (typeof stamp !== 'string' || !ISO_INSTANT.test(stamp)) return undefined;
  const instant = new Date(stamp);
  return Number.isNaN(instant.getTime()) ? undefined : { transactionId, stamp: instant };
}

/** The key a cursor names; 400 unless it is one this service wrote for the same filters. */
export function decodeCursor(cursor: string, filter: TransactionFilter): PageKey {
  let payload: Partial<CursorPayload> | null;
  try {
    payload = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as typeof payload;
  } catch {
    throw invalidCursor('The cursor is not one this service wrote.');
  }
  const key = keyOf(payload?.after, filter.changedSince !== undefined);
  if (!key || !Array.isArray(payload?.filter))
    throw invalidCursor('The cursor is not one this service wrote.');
  if (JSON.stringify(payload.filter) !== JSON.stringify(filterKey(filter)))
    throw invalidCursor(
      'The cursor belongs to another listing: send it with the status, financetype, agent_id and ' +
        'changed_since of the request that returned it.',
    );
  return key;
}

/** The query string's page request, validated as Web API validated URI-bound values. */
export function pageRequestOf(queryString: string): PageRequest {
  const query = readQuery(ListTransactionsQueryDto, queryString);
  const filter: TransactionFilter = {
    ...(query.status != null && { status: query.status }),
    ...(query.financetype != null && { financetype: query.financetype }),
    ...(query.agent_id != null && { agentId: query.agent_id }),
    ...(query.changed_since != null && { changedSince: query.changed_since }),
  };
  return {
    filter,
    limit: query.limit ?? PAGE_LIMIT.default,
    ...(query.cursor != null && { after: decodeCursor(query.cursor, filter) }),
  };
}

/** ListTransactions' parameters from the query string: its page request, or 400 in ModelState. */
export const ListTransactionsQuery = createParamDecorator(
  (_: unknown, context: ExecutionContext): PageRequest =>
    pageRequestOf(queryStringOf(context.switchToHttp().getRequest<Request>())),
);
