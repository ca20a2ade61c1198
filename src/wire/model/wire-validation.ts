import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { ExactDecimal } from '../values/exact-decimal';
import { type BoundRecord, type WireClass, type WireModel, wireModelOf } from './wire-model';
import { UnreadableValue } from '../values/unreadable-value';
import { type ModelState, RequestValidationError } from './wire-errors';

function collectMessages(
  errors: readonly ValidationError[],
  path: string,
  root: string,
  into: ModelState,
): void {
  for (const error of errors) {
    if (!error.constraints) continue;
    const unreadable = error.value instanceof UnreadableValue ? error.value : undefined;
    // A value the reader could not convert is keyed by its name as sent, as Json.NET's path was.
    const key = `${path}.${unreadable?.sentName ?? error.property}`;
    const messages = Object.values(error.constraints);
    into[key] = messages;
    // Where Json.NET's reader itself failed, the legacy also reported each list holding the record
    // (`transaction.requirements`) and the record as a whole.
    if (unreadable?.failsRecord) {
      const lists = [...path.matchAll(/\[\d+\]/g)].map((index) => path.slice(0, index.index));
      for (const enclosing of [root, ...lists])
        into[enclosing] = [...(into[enclosing] ?? []), ...messages];
    }
  }
}

/**
 * Validates a record and, member by member, the items of its valid lists: every violation at once,
 * keyed as the legacy ModelState (`transaction.requirements[0].requirement_id`).
 */
function validateRecord(
  record: object,
  model: WireModel,
  path: string,
  root: string,
  into: ModelState,
): void {
  const errors = validateSync(record, { stopAtFirstError: true, forbidUnknownValues: false });
  collectMessages(errors, path, root, into);
  for (const member of model.members) {
    const items = (record as Record<string, unknown>)[member.name];
    if (member.kind !== 'list' || !Array.isArray(items) || `${path}.${member.name}` in into)
      continue;
    const itemModel = wireModelOf(member.item());
    items.forEach((item: unknown, index) => {
      if (item !== null)
        validateRecord(item as object, itemModel, `${path}.${member.name}[${index}]`, root, into);
    });
  }
}

/** Exact decimals served validation; past it a DTO holds numbers, as every column and writer expects. */
function settleDecimals(model: WireModel, record: Record<string, unknown>): void {
  for (const member of model.members) {
    const value = record[member.name];
    if (value instanceof ExactDecimal) record[member.name] = value.toNumber();
    else if (member.kind === 'list' && Array.isArray(value)) {
      const itemModel = wireModelOf(member.item());
      for (const item of value as unknown[])
        if (item !== null) settleDecimals(itemModel, item as Record<string, unknown>);
    }
  }
}

/**
 * Turns a bound record into a DTO: class-transformer builds the instances, class-validator checks
 * every member at once. Violations are thrown as legacy ModelState keyed `parameterName.member`.
 */
export function toValidatedDto<T extends object>(
  type: WireClass<T>,
  bound: BoundRecord,
  parameterName: string,
): T {
  const instance = plainToInstance(type, bound);
  const model = wireModelOf(type);
  const modelState: ModelState = {};
  validateRecord(instance, model, parameterName, parameterName, modelState);
  if (Object.keys(modelState).length > 0) throw new RequestValidationError(modelState);
  settleDecimals(model, instance as Record<string, unknown>);
  return instance;
}
