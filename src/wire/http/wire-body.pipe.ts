import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { RawWireBody } from './wire-body';
import { MalformedBodyError, RequestValidationError } from '../model/wire-errors';
import { findWireModel, type WireClass } from '../model/wire-model';
import { toValidatedDto } from '../model/wire-validation';

/**
 * Turns the body of any route whose parameter type is a wire model into a validated DTO: the reader of
 * the request's media type parses and binds the text, then the DTO's decorators coerce and validate.
 */
@Injectable()
export class WireBodyPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    const model = metadata.type === 'body' ? findWireModel(metadata.metatype) : undefined;
    if (!model) return value;
    if (!(value instanceof RawWireBody)) {
      throw RequestValidationError.ofBody(
        model.parameterName,
        'A non-empty request body is required.',
      );
    }
    let bound: Record<string, unknown>;
    try {
      const { text, encoding } = value.decode();
      bound = value.reader.decode(text, model, encoding);
    } catch (error) {
      if (error instanceof MalformedBodyError)
        throw RequestValidationError.ofBody(model.parameterName, ...error.reasons);
      throw error;
    }
    return toValidatedDto(metadata.metatype as WireClass, bound, model.parameterName);
  }
}
