import 'reflect-metadata';
import { type ArgumentMetadata, ValidationPipe } from '@nestjs/common';
import { type ValidationError, type ValidatorOptions } from 'class-validator';
import { type ModelState, RequestValidationError } from '../model/wire-errors';

// What ValidationPipe says when it leaves errors out, past its budget of message text.
const OMITTED_ERRORS = 'Further validation errors were omitted';

/** ValidationPipe's violations, raised for the pipe to key them by its parameter. */
class InvalidDto {
  constructor(
    readonly errors: readonly ValidationError[],
    readonly omitted: boolean,
  ) {}
}

function collectMessages(errors: readonly ValidationError[], path: string, into: ModelState): void {
  for (const error of errors) {
    // class-validator names the items of a list by their index: `items[0].name`, as the contract.
    let key = `${path}[${error.property}]`;
    if (!/^\d+$/.test(error.property))
      key = path === '' ? error.property : `${path}.${error.property}`;
    if (error.constraints) into[key] = Object.values(error.constraints);
    if (error.children?.length) collectMessages(error.children, key, into);
  }
}

/**
 * For a format that cannot say a value is a list of one (XML repeats a list's item elements): each
 * member declared as an array, at any depth, takes its single value as a list of one.
 */
function listSingleValues(record: object): void {
  const members = record as Record<string, unknown>;
  for (const [name, value] of Object.entries(members)) {
    if (value === null || value === undefined) continue;
    let items: unknown[] = [value];
    if (Array.isArray(value)) items = value;
    else if (Reflect.getMetadata('design:type', record, name) === Array) members[name] = items;
    for (const item of items) if (typeof item === 'object' && item !== null) listSingleValues(item);
  }
}

/**
 * NestJS's ValidationPipe as its documentation sets it up for DTOs (`transform: true`, conversion by
 * the declared property types, unknown members kept), for parameters whose type is a class without a
 * wire model: plain DTOs on `@Body()`, `@Query()` and `@Param()`. Violations are answered in the
 * contract's shape, class-validator's messages in a ModelState keyed by member path
 * (`items[0].name`). Parameters of primitive types pass unconverted, so a pipe after this one
 * (Int32ParamPipe) still reads the text as sent.
 */
export class PlainDtoValidation extends ValidationPipe {
  constructor(private readonly singleItemListsLookScalar = false) {
    super({ transform: true, transformOptions: { enableImplicitConversion: true } });
  }

  /** Whether the parameter is a DTO: its type a class, not a primitive, and not a custom decorator's. */
  validates(metadata: ArgumentMetadata): boolean {
    return this.toValidate(metadata);
  }

  /**
   * The parameter's value converted into its DTO and validated, or RequestValidationError. A body's
   * members are keyed `<bodyName>.<member>`; query and route values by the member alone, as Web API
   * keyed them.
   */
  async toDto(value: unknown, metadata: ArgumentMetadata, bodyName?: string): Promise<unknown> {
    try {
      return (await this.transform(value, metadata)) as unknown;
    } catch (error) {
      if (!(error instanceof InvalidDto)) throw error;
      const modelState: ModelState = {};
      collectMessages(error.errors, bodyName ?? '', modelState);
      if (error.omitted) {
        const whole = bodyName ?? metadata.data ?? metadata.type;
        modelState[whole] = [...(modelState[whole] ?? []), OMITTED_ERRORS];
      }
      throw new RequestValidationError(modelState);
    }
  }

  protected override transformPrimitive(value: unknown): unknown {
    return value;
  }

  protected override validate(
    object: object,
    options?: ValidatorOptions,
  ): Promise<ValidationError[]> | ValidationError[] {
    if (this.singleItemListsLookScalar) listSingleValues(object);
    return super.validate(object, options);
  }

  override createExceptionFactory(): (errors?: ValidationError[]) => InvalidDto {
    return (errors = []) => {
      const budget = { remaining: this.maxErrorMessagesLength, isExceeded: false };
      return new InvalidDto(this.limitValidationErrors(errors, budget), budget.isExceeded);
    };
  }
}
