import { Body, Controller, Get, Headers, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { type Response } from 'express';
import {
  AGENT_HISTORY_EXAMPLE,
  TRANSACTION_EXAMPLE,
  UPDATE_AGENTS_EXAMPLE,
} from '../openapi/examples';
import { AuthenticationError } from '../auth/authenticator';
import { CallerId } from '../auth/caller.decorator';
import { RateLimitedError } from '../auth/rate-limit.guard';
import { CommitOutcomeUnknownError, DatabaseUnavailableError } from '../database/database-errors';
import { Int32ParamPipe, WireErrors, WireRequestBody, WireResponse } from '../wire';
import { AGENT_CHAIN_FIELDS } from './agent-chain';
import { AgentAssignmentDto } from './dto/agent-assignment.dto';
import { TransactionDto } from './dto/transaction.dto';
import { UpdateAgentsDto } from './dto/update-agents.dto';
import {
  TransactionChangedError,
  TransactionLockedError,
  TransactionNotFoundError,
} from './transaction.errors';
import { TransactionService } from './transaction.service';

/** A transaction's strong ETag: its id and row version, the same for every representation. */
const etagOf = (transactionId: number, version: number) => `"${transactionId}.${version}"`;

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

@ApiTags('Transaction')
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
    name: 'if-match',
    required: false,
    description: 'The ETag of GetTransaction; 412 when stale.',
  })
  @ApiResponse({ status: 204, description: 'Applied (or nothing to change).' })
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
    @Headers('if-match') ifMatch?: string,
  ): Promise<void> {
    const transactionId = body.transaction_id!;
    const values = Object.fromEntries(
      AGENT_CHAIN_FIELDS.filter((field) => body[field] !== undefined).map((field) => [
        field,
        body[field],
      ]),
    );
    await this.transactions.updateAgents({
      transactionId,
      values,
      expectedVersions: expectedVersions(ifMatch, transactionId),
      changedBy,
    });
  }

  @Get('GetTransaction/:transaction_id')
  @ApiOperation({
    operationId: 'GetTransaction',
    summary: 'One transaction with its requirements checklist.',
  })
  @TRANSACTION_ID
  @WireResponse(TransactionDto, {
    description: 'The transaction; its ETag serves If-Match on UpdateAgents.',
    example: TRANSACTION_EXAMPLE,
  })
  @READ_ONE_ERRORS
  async getTransaction(
    @Param('transaction_id', Int32ParamPipe) transactionId: number,
    @Res({ passthrough: true }) response: Response,
  ): Promise<TransactionDto> {
    const { transaction, version } = await this.transactions.findOne(transactionId);
    response.setHeader('ETag', etagOf(transactionId, version));
    return transaction;
  }

  @Get('GetAgentHistory/:transaction_id')
  @ApiOperation({
    operationId: 'GetAgentHistory',
    summary: 'The agent-chain changes of one transaction, oldest first.',
  })
  @TRANSACTION_ID
  @WireResponse(AgentAssignmentDto, {
    list: true,
    description: 'The changes (ArrayOfAgentAssignment in XML).',
    example: AGENT_HISTORY_EXAMPLE,
  })
  @READ_ONE_ERRORS
  getAgentHistory(
    @Param('transaction_id', Int32ParamPipe) transactionId: number,
  ): Promise<AgentAssignmentDto[]> {
    return this.transactions.agentHistory(transactionId);
  }
}
