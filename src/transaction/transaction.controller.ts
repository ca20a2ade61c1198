import {
  applyDecorators,
  Body,
  Controller,
  Get,
  Headers,
  HttpCode,
  Param,
  Post,
  Req,
  Res,
} from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiParam, ApiQuery, ApiResponse } from '@nestjs/swagger';
import { type Request, type Response } from 'express';
import {
  AGENT_HISTORY_EXAMPLE,
  TRANSACTION_EXAMPLE,
  UPDATE_AGENTS_EXAMPLE,
} from '../openapi/examples';
import { AuthenticationError } from '../auth/authenticator';
import { CallerId } from '../auth/caller.decorator';
import { RateLimitedError } from '../auth/rate-limit.guard';
import { declareScope, RequiresScope } from '../auth/scopes';
import { CommitOutcomeUnknownError, DatabaseUnavailableError } from '../database/database-errors';
import {
  INT32_MAX,
  INT32_MIN,
  Int32ParamPipe,
  queryStringOf,
  WireErrors,
  WireRequestBody,
  WireResponse,
  WireTag,
} from '../wire';
import { AGENT_CHAIN_FIELDS } from './agent-chain';
import { AgentAssignmentDto } from './dto/agent-assignment.dto';
import { PAGE_LIMIT } from './dto/list-transactions-query.dto';
import { TransactionPageDto } from './dto/transaction-page.dto';
import { TransactionDto } from './dto/transaction.dto';
import { UpdateAgentsDto } from './dto/update-agents.dto';
import { encodeCursor, ListTransactionsQuery, type PageRequest } from './list-transactions.query';
import {
  TransactionChangedError,
  TransactionLockedError,
  TransactionNotFoundError,
} from './transaction.errors';
import { etagOf } from './transaction.events';
import { TransactionService } from './transaction.service';

/** The versions an If-Match header accepts for one transaction; `any` for `*`. */
function expectedVersions(
  ifMatch: string | undefined,
  transactionId: number,
): readonly number[] | 'any' | undefined {
  if (ifMatch === undefined) return undefined;
  if (ifMatch.trim() === '*') return 'any';
  return ifMatch
    .split(',')
    .map((tag) => /^"(\d+)\.(\d+)"$/.exec(tag.trim()))
    .filter((match) => match !== null && Number(match[1]) === transactionId)
    .map((match) => Number(match![2]));
}

const TRANSACTION_ID = ApiParam({
  name: 'transaction_id',
  type: 'integer',
  format: 'int32',
  example: 1001,
});

export const TRANSACTIONS_READ = declareScope(
  'transactions:read',
  'Read transactions with their requirements checklists (GetTransaction, ListTransactions) and ' +
    'their agent history (GetAgentHistory).',
);

export const TRANSACTIONS_WRITE = declareScope(
  'transactions:write',
  "Change a transaction's agent chain (UpdateAgents), which decides who is paid a commission.",
);

/** What a read of one transaction may answer besides its body. */
const READ_ONE_ERRORS = WireErrors(
  304,
  400,
  AuthenticationError,
  TransactionNotFoundError,
  RateLimitedError,
  500,
  DatabaseUnavailableError,
);

/**
 * What a path may not hold as it goes into a `Link` header: anything RFC 3986 does not allow in a path
 * unescaped, the `,` and `;` that Link headers are split on, and a `%` that starts no escape.
 */
const NOT_IN_LINK_PATH = /[^\w\-.~/:@!$&'()*+=%]|%(?![\dA-F]{2})/gi;

/**
 * The path as sent, with what it may not hold percent-encoded, so that nothing in it (`>`, `"`) can end
 * the link or add parameters to it; an ordinary path is unchanged. Node reads the request line as
 * latin1: each character is one byte of it.
 */
const asLinkPath = (path: string) =>
  path.replace(
    NOT_IN_LINK_PATH,
    (character) => `%${character.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );

/** The request's own address with the next page's cursor: the target of the `Link` rel="next". */
function nextPageOf(request: Request, cursor: string): string {
  const query = new URLSearchParams(queryStringOf(request));
  // Names bind in any case: a cursor sent as `Cursor` is replaced too, not left to win as the first.
  for (const name of [...query.keys()]) if (name.toLowerCase() === 'cursor') query.delete(name);
  query.set('cursor', cursor);
  // URLSearchParams writes the query escaped already.
  return `${asLinkPath(request.originalUrl.split('?')[0])}?${query.toString()}`;
}

const PAGE_EXAMPLE = {
  transactions: [TRANSACTION_EXAMPLE],
  next_cursor: encodeCursor({ status: 'Approved' }, { transactionId: 1001 }),
};

/**
 * ListTransactions' query parameters, as the OpenAPI document describes them. Only `limit` has an
 * example: Swagger UI's "Try it out" sends every example, and all filters at once match nothing.
 */
const LIST_QUERY = applyDecorators(
  ApiQuery({
    name: 'limit',
    required: false,
    description: `Transactions per page, at most ${PAGE_LIMIT.max}; more answers 400.`,
    schema: {
      type: 'integer',
      format: 'int32',
      minimum: 1,
      maximum: PAGE_LIMIT.max,
      default: PAGE_LIMIT.default,
      example: 100,
    },
  }),
  ApiQuery({
    name: 'status',
    required: false,
    description: 'Only transactions with this status (exact match), such as `Approved`.',
    schema: { type: 'string' },
  }),
  ApiQuery({
    name: 'financetype',
    required: false,
    description: 'Only transactions with this finance type (exact match), such as `Cash`.',
    schema: { type: 'string' },
  }),
  ApiQuery({
    name: 'agent_id',
    required: false,
    description:
      'Only transactions whose agent chain names this id: brokerid, directorid, directorid_recruit, ' +
      'managerid, managerid_recruit, salesagentid or salesagentid_recruit.',
    schema: {
      type: 'integer',
      format: 'int32',
      minimum: INT32_MIN,
      maximum: INT32_MAX,
    },
  }),
  ApiQuery({
    name: 'changed_since',
    required: false,
    description:
      'Only transactions stamped at or after this instant (ISO 8601; without an offset, in the ' +
      'service time zone), ordered by stamp then transaction_id. An incremental sync sends the ' +
      'largest stamp it holds, less a margin for writes still committing: what it holds already ' +
      'comes again, and nothing stamped meanwhile is missed.',
    schema: { type: 'string', format: 'date-time' },
  }),
  ApiQuery({
    name: 'cursor',
    required: false,
    description:
      'next_cursor of the previous page, sent with the same filters; absent for the first page. ' +
      'Opaque; a cursor that is malformed or belongs to other filters answers 400.',
    schema: { type: 'string' },
  }),
);

@WireTag(
  'Transaction',
  'Property sales transactions: read one with its requirements checklist, list them, change ' +
    'the agent chain and read its history.',
)
@Controller('Transaction')
export class TransactionController {
  constructor(private readonly transactions: TransactionService) {}

  /** Replaces the agent chain members the body carries; 204 on success. */
  @Post('UpdateAgents')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'UpdateAgents',
    summary: 'Writes the agent chain of a transaction: only the agent members the body carries.',
    description:
      'The body is validated as a whole Transaction (transaction_id and financetype required). Only brokerid, ' +
      'directorid, directorid_recruit, managerid, managerid_recruit, salesagentid, salesagentid_recruit and their ' +
      'seven name members are written: a member present (null included) is written, an absent one is kept, every ' +
      'other member is ignored. A change stamps the transaction and appends one agent-history record.',
  })
  @WireRequestBody(UpdateAgentsDto, 'A whole Transaction.', UPDATE_AGENTS_EXAMPLE)
  @ApiHeader({
    name: 'If-Match',
    required: false,
    description:
      'ETags of GetTransaction (or `*`): 412 unless one is the current one. Without it, the last ' +
      'write wins, as on the legacy service.',
    // No example: Swagger UI's "Try it out" would send it, and a stale one answers 412.
    schema: { type: 'string' },
  })
  @ApiResponse({
    status: 204,
    description: 'Applied (or nothing to change).',
    headers: {
      ETag: {
        description:
          "The transaction's ETag after the call, as GetTransaction answers it: a new one when " +
          'the call changed something, the current one unchanged when there was nothing to ' +
          'change. Send it as If-Match on the next UpdateAgents.',
        required: true,
        schema: { type: 'string' },
      },
    },
  })
  @RequiresScope(TRANSACTIONS_WRITE)
  @WireErrors(
    400,
    AuthenticationError,
    TransactionNotFoundError,
    TransactionLockedError,
    TransactionChangedError,
    413,
    415,
    RateLimitedError,
    500,
    DatabaseUnavailableError,
    CommitOutcomeUnknownError,
  )
  async updateAgents(
    @Body() body: UpdateAgentsDto,
    @CallerId() changedBy: string | undefined,
    @Res({ passthrough: true }) response: Response,
    @Headers('If-Match') ifMatch?: string,
  ): Promise<void> {
    const transactionId = body.transaction_id!;
    const values = Object.fromEntries(
      AGENT_CHAIN_FIELDS.filter((field) => body[field] !== undefined).map((field) => [
        field,
        body[field],
      ]),
    );
    const version = await this.transactions.updateAgents({
      transactionId,
      values,
      expectedVersions: expectedVersions(ifMatch, transactionId),
      changedBy,
    });
    response.setHeader('ETag', etagOf(transactionId, version));
  }

  @Get('GetTransaction/:transaction_id')
  @ApiOperation({
    operationId: 'GetTransaction',
    summary: 'One transaction with its requirements checklist.',
    description:
      'Every member is written, null or not, and the checklist lists every requirement of the ' +
      "transaction's requirement type with whether it was submitted. The ETag serves If-None-Match " +
      '(304 while current) and If-Match on UpdateAgents.',
  })
  @TRANSACTION_ID
  @WireResponse(TransactionDto, {
    description: 'The transaction; its ETag serves If-Match on UpdateAgents.',
    example: TRANSACTION_EXAMPLE,
  })
  @RequiresScope(TRANSACTIONS_READ)
  @READ_ONE_ERRORS
  async getTransaction(
    @Param('transaction_id', Int32ParamPipe) transactionId: number,
    @Res({ passthrough: true }) response: Response,
  ): Promise<TransactionDto> {
    const { transaction, version } = await this.transactions.findOne(transactionId);
    response.setHeader('ETag', etagOf(transactionId, version));
    return transaction;
  }

  @Get('ListTransactions')
  @ApiOperation({
    operationId: 'ListTransactions',
    summary: 'Transactions page by page, each with its checklist, filtered and in a stable order.',
    description:
      'Keyset paging: each page carries next_cursor (null on the last) and a Link header rel="next". ' +
      'Ordered by transaction_id, or with changed_since by stamp then transaction_id, so a sync ' +
      'walking the pages meets every transaction; one changed meanwhile comes again later with its ' +
      'new stamp. Items are the Transaction of GetTransaction.',
  })
  @LIST_QUERY
  @WireResponse(TransactionPageDto, {
    description:
      'One page: transactions and next_cursor (in XML, ArrayOfTransaction holding transactions and ' +
      'next_cursor).',
    example: PAGE_EXAMPLE,
    headers: {
      Link: {
        description: 'The next page, `<…&cursor=…>; rel="next"`, when there is one.',
        required: false,
        schema: { type: 'string' },
      },
    },
  })
  @RequiresScope(TRANSACTIONS_READ)
  @WireErrors(304, 400, AuthenticationError, RateLimitedError, 500, DatabaseUnavailableError)
  async listTransactions(
    @ListTransactionsQuery() page: PageRequest,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<TransactionPageDto> {
    const listed = await this.transactions.list(page);
    if (listed.next_cursor)
      response.setHeader('Link', `<${nextPageOf(request, listed.next_cursor)}>; rel="next"`);
    return listed;
  }

  @Get('GetAgentHistory/:transaction_id')
  @ApiOperation({
    operationId: 'GetAgentHistory',
    summary: 'The agent-chain changes of one transaction, oldest first.',
    description:
      'One record per accepted UpdateAgents call that changed something: when it committed, who ' +
      'made it (the authenticated caller, when there is one) and each agent member it changed, ' +
      'with its value before and after.',
  })
  @TRANSACTION_ID
  @WireResponse(AgentAssignmentDto, {
    list: true,
    description: 'The changes (ArrayOfAgentAssignment in XML).',
    example: AGENT_HISTORY_EXAMPLE,
  })
  @RequiresScope(TRANSACTIONS_READ)
  @READ_ONE_ERRORS
  getAgentHistory(
    @Param('transaction_id', Int32ParamPipe) transactionId: number,
  ): Promise<AgentAssignmentDto[]> {
    return this.transactions.agentHistory(transactionId);
  }
}
