import {
  getMetadataStorage,
  type MetadataStorage,
  type ValidationArguments,
  ValidationTypes,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { ExactDecimal } from '../values/exact-decimal';
import { type BoundRecord, type WireClass, type WireModel, wireModelOf } from './wire-model';
import { UnreadableValue } from '../values/unreadable-value';
import { type ModelState, RequestValidationError } from './wire-errors';
import { eachSteps, runSteps, type Steps } from './steps';

type ValidationMetadata = ReturnType<MetadataStorage['getTargetValidationMetadatas']>[number];

/** One class-validator constraint of a property, as its decorator registered it. */
interface Rule {
  readonly metadata: ValidationMetadata;
  /** The constraint's name: the key class-validator reports it under. */
  readonly name: string;
  readonly constraint: ValidatorConstraintInterface;
}

/** A property's conditions (`@ValidateIf`) and rules, in the order class-validator runs them. */
interface PropertyRules {
  readonly property: string;
  readonly conditions: readonly ValidationMetadata[];
  readonly rules: readonly Rule[];
}

/** A wire model's validation, read once from its decorators. */
interface CompiledModel {
  readonly model: WireModel;
  /** The class name, as class-validator gives it to messages (`$target`). */
  readonly targetName: string;
  readonly properties: readonly PropertyRules[];
  /** The list members, whose items are validated one by one. */
  readonly lists: readonly { readonly name: string; readonly item: () => WireClass }[];
  /** The decimal members, held exactly until validated. */
  readonly decimals: readonly string[];
}

const compiled = new WeakMap<WireClass, CompiledModel>();

/**
 * Reads a model's class-validator metadata as `validateSync` would for it (no groups), and refuses
 * any rule this runner does not run the way class-validator does: the decorators stay the one
 * declaration of the rules, and a rule is never silently skipped.
 */
function compile(type: WireClass): CompiledModel {
  const storage = getMetadataStorage();
  const grouped = storage.groupByPropertyName(
    storage.getTargetValidationMetadatas(type, '', false, false),
  );
  const properties = Object.entries(grouped).map(([property, metadatas]): PropertyRules => {
    const conditions: ValidationMetadata[] = [];
    const rules: Rule[] = [];
    for (const metadata of metadatas) {
      if (metadata.type === ValidationTypes.CONDITIONAL_VALIDATION) {
        conditions.push(metadata);
        continue;
      }
      if (metadata.type !== ValidationTypes.CUSTOM_VALIDATION || metadata.each) {
        throw new Error(
          `${type.name}.${property}: wire validation runs custom (ValidateBy) and conditional ` +
            `(ValidateIf) rules, not '${metadata.type}'${metadata.each ? ' with each' : ''}.`,
        );
      }
      for (const constraint of storage.getTargetValidatorConstraints(metadata.constraintCls)) {
        if (constraint.async)
          throw new Error(`${type.name}.${property}: wire validation runs no async rule.`);
        rules.push({ metadata, name: constraint.name, constraint: constraint.instance });
      }
    }
    return { property, conditions, rules };
  });
  const model = wireModelOf(type);
  return {
    model,
    targetName: type.name,
    properties,
    lists: model.members.flatMap((member) => (member.kind === 'list' ? [member] : [])),
    decimals: model.members.flatMap((member) => (member.kind === 'decimal' ? [member.name] : [])),
  };
}

function compiledOf(type: WireClass): CompiledModel {
  let model = compiled.get(type);
  if (!model) {
    model = compile(type);
    compiled.set(type, model);
  }
  return model;
}

/** class-validator's message tokens, replaced as it replaces them. */
function messageOf(rule: Rule, args: ValidationArguments): string {
  const template = rule.metadata.message ?? rule.constraint.defaultMessage?.(args) ?? '';
  let message = typeof template === 'function' ? template(args) : template;
  if (!message) return message;
  (args.constraints as unknown[] | undefined)?.forEach((constraint, index) => {
    const text = Array.isArray(constraint)
      ? constraint.join(', ')
      : typeof constraint === 'symbol'
        ? String(constraint.description)
        : `${constraint as string}`;
    message = message.replace(new RegExp(`\\$constraint${index + 1}`, 'g'), text);
  });
  const value: unknown = args.value;
  if (typeof value === 'string' || typeof value === 'boolean' || typeof value === 'number')
    message = message.replace(/\$value/g, String(value));
  return message.replace(/\$property/g, args.property).replace(/\$target/g, args.targetName);
}

type ValidateIfTest = (object: object, value: unknown) => boolean;

const pathOf = (path: string, index: number | undefined) =>
  index === undefined ? path : `${path}[${index}]`;

/**
 * Checks a record's own members, as `validateSync` with `stopAtFirstError` would on the DTO instance,
 * but on the bound record itself: every property whose conditions hold reports its first violated
 * rule, keyed as the legacy ModelState (`transaction.requirements[0].requirement_id`). Its exact
 * decimals are settled to numbers on the way: a record with any violation is thrown away.
 */
function checkMembers(
  record: BoundRecord,
  compiledModel: CompiledModel,
  path: string,
  index: number | undefined,
  root: string,
  into: ModelState,
): void {
  const args: ValidationArguments = {
    targetName: compiledModel.targetName,
    property: '',
    object: record,
    value: undefined,
    constraints: [],
  };
  for (const { property, conditions, rules } of compiledModel.properties) {
    const value = record[property];
    let applies = true;
    for (const condition of conditions)
      applies &&= (condition.constraints[0] as ValidateIfTest)(record, value);
    if (!applies) continue;
    args.property = property;
    args.value = value;
    for (const rule of rules) {
      args.constraints = rule.metadata.constraints;
      if (rule.constraint.validate(value, args) !== false) continue;
      report(value, property, messageOf(rule, args), pathOf(path, index), root, into);
      break;
    }
  }
  for (const name of compiledModel.decimals) {
    const value = record[name];
    if (value instanceof ExactDecimal) record[name] = value.toNumber();
  }
}

/** A list of a record whose items are validated one by one: the list itself was valid. */
interface ItemsToCheck {
  readonly path: string;
  readonly items: readonly (BoundRecord | null)[];
  readonly itemModel: CompiledModel;
}

function itemsToCheck(
  record: BoundRecord,
  compiledModel: CompiledModel,
  recordPath: string,
  into: ModelState,
): ItemsToCheck[] {
  const lists: ItemsToCheck[] = [];
  for (const list of compiledModel.lists) {
    const items = record[list.name];
    const path = `${recordPath}.${list.name}`;
    if (Array.isArray(items) && !(path in into))
      lists.push({
        path,
        items: items as (BoundRecord | null)[],
        itemModel: compiledOf(list.item()),
      });
  }
  return lists;
}

/** Validates a record and the items of its valid lists, at once. */
function validateRecord(
  record: BoundRecord,
  compiledModel: CompiledModel,
  path: string,
  index: number | undefined,
  root: string,
  into: ModelState,
): void {
  checkMembers(record, compiledModel, path, index, root, into);
  if (compiledModel.lists.length === 0) return;
  for (const { path: listPath, items, itemModel } of itemsToCheck(
    record,
    compiledModel,
    pathOf(path, index),
    into,
  )) {
    items.forEach((item, itemIndex) => {
      if (item !== null) validateRecord(item, itemModel, listPath, itemIndex, root, into);
    });
  }
}

/** Validates a body's record, pausing between the items of its lists. */
function* validateBodySteps(
  record: BoundRecord,
  compiledModel: CompiledModel,
  root: string,
  into: ModelState,
): Steps<void> {
  checkMembers(record, compiledModel, root, undefined, root, into);
  for (const { path, items, itemModel } of itemsToCheck(record, compiledModel, root, into)) {
    yield* eachSteps(items, (item, index) => {
      if (item !== null) validateRecord(item, itemModel, path, index, root, into);
    });
  }
}

function report(
  value: unknown,
  property: string,
  message: string,
  path: string,
  root: string,
  into: ModelState,
): void {
  const unreadable = value instanceof UnreadableValue ? value : undefined;
  // A value the reader could not convert is keyed by its name as sent, as Json.NET's path was.
  into[`${path}.${unreadable?.sentName ?? property}`] = [message];
  // Where Json.NET's reader itself failed, the legacy also reported each list holding the record
  // (`transaction.requirements`) and the record as a whole.
  if (unreadable?.failsRecord) {
    const lists = [...path.matchAll(/\[\d+\]/g)].map((index) => path.slice(0, index.index));
    for (const enclosing of [root, ...lists])
      into[enclosing] = [...(into[enclosing] ?? []), message];
  }
}

/**
 * Turns a bound record into its DTO: the class-validator rules its decorators declare are checked on
 * the record itself, every member at once, and violations are thrown as legacy ModelState keyed
 * `parameterName.member`. The record, its decimals settled, is the DTO: a plain object with the
 * DTO's members, as every service reads it. In steps that pause between the items of its lists.
 */
export function* validatedDtoSteps<T extends object>(
  type: WireClass<T>,
  bound: BoundRecord,
  parameterName: string,
): Steps<T> {
  const modelState: ModelState = {};
  yield* validateBodySteps(bound, compiledOf(type), parameterName, modelState);
  if (Object.keys(modelState).length > 0) throw new RequestValidationError(modelState);
  return bound as T;
}

/** The same, at once. */
export const toValidatedDto = <T extends object>(
  type: WireClass<T>,
  bound: BoundRecord,
  parameterName: string,
): T => runSteps(validatedDtoSteps(type, bound, parameterName));
