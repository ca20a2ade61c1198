/** The bodies errors are answered with: by the exception filter, and in the OpenAPI examples. */
import { type HttpException } from '@nestjs/common';
import { STATUS_CODES } from 'node:http';
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

/**
 * The message an HttpException was given: its string response, or the `message` of its object
 * response (ValidationPipe's list of violations joined).
 */
function messageOf(exception: HttpException): string | undefined {
  const response = exception.getResponse();
  if (typeof response === 'string') return response;
  const { message } = response as { message?: unknown };
  if (typeof message === 'string') return message;
  if (Array.isArray(message) && message.length > 0) return message.map(String).join('; ');
  return undefined;
}

/**
 * The body answering a NestJS HttpException: its status, and its message when `ownMessage` (one a
 * route, guard or pipe raised; the router's own say only their status). A 500's message may hold
 * internals: it is never shown.
 */
export function httpErrorBodyOf(exception: HttpException, ownMessage = true): WireErrorBody {
  const status = exception.getStatus();
  if (status === 500) return INTERNAL_ERROR;
  const title = STATUS_CODES[status] ?? 'Error';
  const message = ownMessage && status < 500 ? messageOf(exception) : undefined;
  return {
    status,
    code: `http_${status}`,
    title,
    message: message === undefined || message === title ? `${title}.` : message,
  };
}
