import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { type BodyText, RawWireBody } from './wire-body';
import { PlainDtoValidation } from './plain-dto-validation';
import { MalformedBodyError, RequestValidationError } from '../model/wire-errors';
import { findWireModel, type WireClass, type WireModel } from '../model/wire-model';
import { toValidatedDto } from '../model/wire-validation';

/** Reads a body's text, reporting a malformed one against the parameter, as Web API did. */
function readBody<T>(body: RawWireBody, parameterName: string, read: (body: BodyText) => T): T {
  try {
    return read(body.decode());
  } catch (error) {
    if (error instanceof MalformedBodyError)
      throw RequestValidationError.ofBody(parameterName, ...error.reasons);
    throw error;
  }
}

/**
 * Turns parameters whose type is a class into validated DTOs. A body of a wire model: the reader of
 * the request's media type parses and binds the text, then the DTO's decorators coerce and validate.
 * A plain class-validator DTO, on the body, the query or the route values, is validated as NestJS's
 * ValidationPipe would, the body first read in its format.
 */
@Injectable()
export class WireBodyPipe implements PipeTransform {
  private readonly plainDtos = new PlainDtoValidation();
  private readonly plainDtosFromXml = new PlainDtoValidation(true);

  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    const model = metadata.type === 'body' ? findWireModel(metadata.metatype) : undefined;
    if (model) return this.toWireDto(value, metadata.metatype as WireClass, model);
    if (!this.plainDtos.validates(metadata)) return value;
    if (metadata.type !== 'body') return this.plainDtos.toDto(value, metadata);
    const type = metadata.metatype as WireClass;
    // Named as the NestJS documentation names a body parameter: `createCatDto: CreateCatDto`.
    const bodyName = type.name.charAt(0).toLowerCase() + type.name.slice(1);
    // Without a body, the DTO is validated as empty, as ValidationPipe validates a missing one.
    if (!(value instanceof RawWireBody)) return this.plainDtos.toDto(value, metadata, bodyName);
    const plain = readBody(value, bodyName, ({ text, encoding }) =>
      value.reader.decodePlain(text, type.name, encoding),
    );
    const validation = value.reader.singleItemListsLookScalar
      ? this.plainDtosFromXml
      : this.plainDtos;
    return validation.toDto(plain, metadata, bodyName);
  }

  private toWireDto(value: unknown, type: WireClass, model: WireModel): object {
    if (!(value instanceof RawWireBody)) {
      throw RequestValidationError.ofBody(
        model.parameterName,
        'A non-empty request body is required.',
      );
    }
    const bound = readBody(value, model.parameterName, ({ text, encoding }) =>
      value.reader.decode(text, model, encoding),
    );
    return toValidatedDto(type, bound, model.parameterName);
  }
}
