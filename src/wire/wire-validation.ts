import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { type BoundRecord } from './wire-codec';
import { type ModelState, RequestValidationError } from './wire-errors';
import { type WireClass } from './wire-model';

function collectMessages(errors: readonly ValidationError[], path: string, into: ModelState): void {
  for (const error of errors) {
    const key = /^\d+$/.test(error.property)
      ? `${path}[${error.property}]`
      : `${path}.${error.property}`;
    if (error.constraints) into[key] = Object.values(error.constraints);
    if (error.children?.length) collectMessages(error.children, key, into);
  }
}

/**
 * Turns a bound record into a DTO: class-transformer coerces each member, class-validator checks every
 * member at once. Violations are thrown as legacy ModelState keyed `parameterName.member`.
 */
export function toValidatedDto<T extends object>(
  type: WireClass<T>,
  bound: BoundRecord,
  parameterName: string,
): T {
  const instance = plainToInstance(type, bound);
  const errors = validateSync(instance, { stopAtFirstError: true, forbidUnknownValues: false });
  if (errors.length > 0) {
    const modelState: ModelState = {};
    collectMessages(errors, parameterName, modelState);
    throw new RequestValidationError(modelState);
  }
  return instance;
}
