import { Controller, Get, Module } from '@nestjs/common';
import { RequiresScope } from '../../src/auth/scopes';
import { TRANSACTIONS_READ } from '../../src/transaction/transaction.controller';

/** A module as a team might add it: one route with a scope, one forgotten, which stops the start. */
@Controller('ForgottenScope')
class ForgottenScopeController {
  @Get('Scoped')
  @RequiresScope(TRANSACTIONS_READ)
  scoped() {
    return { scoped: true };
  }

  @Get('Forgotten')
  forgotten() {
    return { forgotten: true };
  }
}

@Module({ controllers: [ForgottenScopeController] })
export class ForgottenScopeModule {}
