/** The bodies errors are answered with: by the exception filter, and in the OpenAPI examples. */
import { DomainError } from '../../common/domain-error';
import { RequestValidationError, type WireRequestError } from '../model/wire-errors';
import { type WireErrorBody } from './wire-codec';

const STATUS_OF_WIRE_ERROR: Record<WireRequestError['code'], { status: number; title: string }> = {
  invalid_request: { status: 400, title: 'Invalid request' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  payload_too_large: { status: 413, title: 'Request body too large' },
};

export const INTERNAL_ERROR: WireErrorBody = {
  status: 500,
  code: 'internal_error',
  title: 'Internal error',
  message: 'An error has occurred.',
};

/** The body answering an error the wire layer or a module raised: what the OpenAPI examples show too. */
export function errorBodyOf(exception: WireRequestError | DomainError): WireErrorBody {
  if (exception instanceof DomainError) {
    const { status, code, title, message } = exception;
    return { status, code, title, message };
  }
  const { status, title } = STATUS_OF_WIRE_ERROR[exception.code];
  const modelState = exception instanceof RequestValidationError ? exception.modelState : undefined;
  return { status, code: exception.code, title, message: exception.message, modelState };
}
