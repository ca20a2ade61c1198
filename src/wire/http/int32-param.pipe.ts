import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { INT32_MAX, INT32_MIN } from '../values/int32';
import { describeValue } from '../model/wire-fields';
import { RequestValidationError } from '../model/wire-errors';

/** A route parameter that must be a 32-bit integer, refused like a body member otherwise. */
@Injectable()
export class Int32ParamPipe implements PipeTransform<string, number> {
  transform(value: string, metadata: ArgumentMetadata): number {
    const number = Number(value);
    if (/^[+-]?\d{1,10}$/.test(value) && number >= INT32_MIN && number <= INT32_MAX) return number;
    const name = metadata.data ?? 'id';
    throw new RequestValidationError({
      [name]: [`The value '${describeValue(value)}' is not valid for ${name}.`],
    });
  }
}
