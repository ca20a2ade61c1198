import { DomainError } from '../common/domain-error';

export class TransactionNotFoundError extends DomainError {
  readonly kind = 'not_found';
  readonly code = 'transaction_not_found';
  readonly title = 'Transaction not found';
  constructor(transactionId: number) {
    super(`No transaction with transaction_id ${transactionId} exists.`);
  }
}

export class TransactionLockedError extends DomainError {
  readonly kind = 'conflict';
  readonly code = 'transaction_locked';
  readonly title = 'Transaction locked';
  constructor(transactionId: number) {
    super(`Transaction ${transactionId} is locked; its agents cannot be changed.`);
  }
}

export class TransactionChangedError extends DomainError {
  readonly kind = 'precondition_failed';
  readonly code = 'transaction_changed';
  readonly title = 'Transaction changed';
  constructor(transactionId: number) {
    super(`Transaction ${transactionId} has changed since it was read; read it again and retry.`);
  }
}
