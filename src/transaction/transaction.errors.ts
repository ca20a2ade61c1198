import { DomainError } from '../common/domain-error';

export class TransactionNotFoundError extends DomainError {
  static readonly status = 404;
  static readonly description = 'No such transaction.';
  static readonly example = new TransactionNotFoundError(1001);
  readonly code = 'transaction_not_found';
  readonly title = 'Transaction not found';
  constructor(transactionId: number) {
    super(`No transaction with transaction_id ${transactionId} exists.`);
  }
}

export class TransactionLockedError extends DomainError {
  static readonly status = 409;
  static readonly description = 'The transaction is locked.';
  static readonly example = new TransactionLockedError(1001);
  readonly code = 'transaction_locked';
  readonly title = 'Transaction locked';
  constructor(transactionId: number) {
    super(`Transaction ${transactionId} is locked; its agents cannot be changed.`);
  }
}

export class TransactionChangedError extends DomainError {
  static readonly status = 412;
  static readonly description = 'If-Match no longer matches the transaction ETag.';
  static readonly example = new TransactionChangedError(1001);
  readonly code = 'transaction_changed';
  readonly title = 'Transaction changed';
  constructor(transactionId: number) {
    super(`Transaction ${transactionId} has changed since it was read; read it again and retry.`);
  }
}
