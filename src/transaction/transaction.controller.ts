import { Body, Controller, Get, Headers, HttpCode, Param, Post, Res } from '@nestjs/common';
import { type Response } from 'express';
import { Int32ParamPipe } from '../wire/int32-param.pipe';
import { WireResponse } from '../wire/wire-response.decorator';
import { AGENT_CHAIN_FIELDS } from './agent-chain';
import { AgentAssignmentDto } from './dto/agent-assignment.dto';
import { TransactionDto } from './dto/transaction.dto';
import { UpdateAgentsDto } from './dto/update-agents.dto';
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

@Controller('Transaction')
export class TransactionController {
  constructor(private readonly transactions: TransactionService) {}

  /** Replaces the agent chain members the body carries; 204 on success. */
  @Post('UpdateAgents')
  @HttpCode(204)
  async updateAgents(
    @Body() body: UpdateAgentsDto,
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
    });
  }

  @Get('GetTransaction/:transaction_id')
  @WireResponse(TransactionDto)
  async getTransaction(
    @Param('transaction_id', Int32ParamPipe) transactionId: number,
    @Res({ passthrough: true }) response: Response,
  ): Promise<TransactionDto> {
    const { transaction, version } = await this.transactions.findOne(transactionId);
    response.setHeader('ETag', etagOf(transactionId, version));
    return transaction;
  }

  @Get('GetAgentHistory/:transaction_id')
  @WireResponse(AgentAssignmentDto, { list: true })
  getAgentHistory(
    @Param('transaction_id', Int32ParamPipe) transactionId: number,
  ): Promise<AgentAssignmentDto[]> {
    return this.transactions.agentHistory(transactionId);
  }
}
