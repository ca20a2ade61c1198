import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { Mutex } from 'async-mutex';
import { RawWireBody } from './wire-body';
import { PlainDtoValidation } from './plain-dto-validation';
import { type PlainRecord } from '../codecs/wire-codec';
import { runStepsCooperatively, type Steps } from '../model/steps';
import { MalformedBodyError, RequestValidationError } from '../model/wire-errors';
import {
  type BoundRecord,
  findWireModel,
  type WireClass,
  type WireModel,
} from '../model/wire-model';
import { validatedDtoSteps } from '../model/wire-validation';

/**
 * Bodies past this size are read one at a time, each in slices: however many arrive together, the
 * event loop gives other requests all but one slice of every turn, and holds one such body's objects.
 * Typical bodies (a transaction with its checklist is a few kilobytes) never wait.
 */
export const LARGE_BODY_BYTES = 64 * 1024;

/** A malformed body is reported against the parameter, as Web API did. */
const asBodyError = (error: unknown, parameterName: string): unknown =>
  error instanceof MalformedBodyError
    ? RequestValidationError.ofBody(parameterName, ...error.reasons)
    : error;

/**
 * Reads, binds and validates a wire model's body, pausing between slices of the document and items
 * of its lists where its reader can.
 */
function* wireDtoSteps(body: RawWireBody, type: WireClass, model: WireModel): Steps<object> {
  let bound: BoundRecord;
  try {
    const { text, encoding } = body.decode();
    bound = body.reader.decodeSteps
      ? yield* body.reader.decodeSteps(text, model, encoding)
      : body.reader.decode(text, model, encoding);
  } catch (error) {
    throw asBodyError(error, model.parameterName);
  }
  return yield* validatedDtoSteps(type, bound, model.parameterName);
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
  private readonly largeBodies = new Mutex();
  private readonly plainDtosFromXml = new PlainDtoValidation(true);

  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    const model = metadata.type === 'body' ? findWireModel(metadata.metatype) : undefined;
    if (model) {
      if (!(value instanceof RawWireBody)) {
        throw RequestValidationError.ofBody(
          model.parameterName,
          'A non-empty request body is required.',
        );
      }
      // Served in slices: a large body shares the event loop with every other request.
      const read = () =>
        runStepsCooperatively(wireDtoSteps(value, metadata.metatype as WireClass, model));
      return value.byteLength > LARGE_BODY_BYTES ? this.largeBodies.runExclusive(read) : read();
    }
    if (!this.plainDtos.validates(metadata)) return value;
    if (metadata.type !== 'body') return this.plainDtos.toDto(value, metadata);
    const type = metadata.metatype as WireClass;
    // Named as the NestJS documentation names a body parameter: `createCatDto: CreateCatDto`.
    const bodyName = type.name.charAt(0).toLowerCase() + type.name.slice(1);
    // Without a body, the DTO is validated as empty, as ValidationPipe validates a missing one.
    if (!(value instanceof RawWireBody)) return this.plainDtos.toDto(value, metadata, bodyName);
    let plain: PlainRecord;
    try {
      const { text, encoding } = value.decode();
      plain = value.reader.decodePlain(text, type.name, encoding);
    } catch (error) {
      throw asBodyError(error, bodyName);
    }
    const validation = value.reader.singleItemListsLookScalar
      ? this.plainDtosFromXml
      : this.plainDtos;
    return validation.toDto(plain, metadata, bodyName);
  }
}
