/** Validation messages by key (`transaction.loanterm`), as the legacy ModelState. */
export type ModelState = Record<string, string[]>;

/** A request the wire layer refuses before any module sees it; the filter gives each its status. */
export abstract class WireRequestError extends Error {
  abstract readonly code: 'invalid_request' | 'unsupported_media_type' | 'payload_too_large';
}

export class RequestValidationError extends WireRequestError {
  readonly code = 'invalid_request';
  constructor(readonly modelState: ModelState) {
    super('The request is invalid.');
  }

  /** A body that could not be read as the declared type: reported on the action parameter, as Web API. */
  static ofBody(parameterName: string, ...reasons: string[]): RequestValidationError {
    return new RequestValidationError({ [parameterName]: reasons });
  }
}

export class UnsupportedMediaTypeError extends WireRequestError {
  readonly code = 'unsupported_media_type';
  /** `undefined`: the request had no usable Content-Type; Web API inferred application/octet-stream. */
  constructor(readonly mediaType: string | undefined) {
    super(
      mediaType === undefined
        ? "The request contains an entity body but no Content-Type header. The inferred media type 'application/octet-stream' is not supported for this resource."
        : `The request entity's media type '${mediaType}' is not supported for this resource.`,
    );
  }
}

export class PayloadTooLargeError extends WireRequestError {
  readonly code = 'payload_too_large';
  constructor(readonly limitBytes: number) {
    super(`The request body is larger than the limit of ${limitBytes} bytes.`);
  }
}

/** A malformed document, raised by a codec and reported by the pipe against the body parameter. */
export class MalformedBodyError extends Error {
  readonly reasons: readonly string[];
  constructor(...reasons: string[]) {
    super(reasons.join(' '));
    this.reasons = reasons;
  }
}
