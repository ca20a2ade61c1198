import {
  getMetadataStorage,
  type MetadataStorage,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { ExactDecimal } from '../values/exact-decimal';
import {
  type BoundRecord,
  declaredWireModels,
  type WireClass,
  type WireMember,
  type WireModel,
  wireModelOf,
} from './wire-model';
import { UnreadableValue } from '../values/unreadable-value';
import { type ModelState, RequestValidationError } from './wire-errors';
import { eachSteps, runSteps, type Steps } from './steps';
import { plainRuleRefusal } from './plain-rules';
import { describeValue } from './wire-fields';

type ValidationMetadata = ReturnType<MetadataStorage['getTargetValidationMetadatas']>[number];

/** One class-validator constraint of a property, as its decorator registered it. */
interface Rule {
  readonly metadata: ValidationMetadata;
  /** The constraint's name: the key class-validator reports it under. */
  readonly name: string;
  readonly constraint: ValidatorConstraintInterface;
}

/** A property's rules, in the order class-validator runs them. */
interface PropertyRules {
  readonly property: string;
  readonly member: WireMember;
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

/** A wire model whose decorators declare rules that wire validation would not run as written. */
export class WireRulesError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join(' '));
  }
}

const compiled = new WeakMap<WireClass, CompiledModel>();

/**
 * Reads a model's class-validator metadata as `validateSync` would for it (no groups), and refuses
 * any rule this runner does not run the way class-validator does, or that would not do what it says
 * on a wire value: the decorators stay the one declaration of the rules, and a rule is never silently
 * skipped nor silently refuses everything. Each refusal names the class, the member, the decorator
 * and the field option to declare instead.
 */
function compile(type: WireClass): CompiledModel {
  const storage = getMetadataStorage();
  const model = wireModelOf(type);
  const grouped = storage.groupByPropertyName(
    storage.getTargetValidationMetadatas(type, '', false, false),
  );
  const members = new Map(model.members.map((member) => [member.name, member]));
  const problems: string[] = [];
  const properties = Object.entries(grouped).flatMap(([property, metadatas]): PropertyRules[] => {
    const member = members.get(property);
    const rules: Rule[] = [];
    for (const metadata of metadatas) {
      const constraints = metadata.constraintCls
        ? storage.getTargetValidatorConstraints(metadata.constraintCls)
        : [];
      const refusal = plainRuleRefusal(metadata, member, constraints[0]?.name);
      if (refusal) {
        problems.push(`${type.name}.${property}: ${refusal}`);
        continue;
      }
      for (const constraint of constraints) {
        if (constraint.async)
          problems.push(`${type.name}.${property}: wire validation runs no async rule.`);
        else rules.push({ metadata, name: constraint.name, constraint: constraint.instance });
      }
    }
    return member ? [{ property, member, rules }] : [];
  });
  if (problems.length > 0) throw new WireRulesError(problems);
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

/**
 * Reads the rules of every declared wire model, as the service does at start: a class-validator
 * decorator that would not work on a wire DTO stops the start, named with its class, member and the
 * field option to use instead, rather than refusing requests later. Throws WireRulesError with every
 * such problem of every model.
 */
export function checkWireModels(models: readonly WireModel[] = declaredWireModels()): void {
  const problems: string[] = [];
  for (const { type } of models) {
    try {
      compiledOf(type);
    } catch (error) {
      if (!(error instanceof WireRulesError)) throw error;
      problems.push(...error.problems);
    }
  }
  if (problems.length > 0) throw new WireRulesError(problems);
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

const pathOf = (path: string, index: number | undefined) =>
  index === undefined ? path : `${path}[${index}]`;

/** A rule a record broke, with the member declaring it: how an invalid example is explained. */
export interface WireViolation {
  /** The ModelState key: `commission.rate`, `transaction.requirements[0].requirement_id`. */
  readonly key: string;
  readonly message: string;
  /** The record's model and member, and the rule's name (`wireExactRange`, or a module's own). */
  readonly model: WireModel;
  readonly member: WireMember;
  readonly rule: string;
}

/** Where a body's violations go: its ModelState, keyed under `root`, and, when asked, each rule. */
interface Reporting {
  readonly root: string;
  readonly into: ModelState;
  readonly violations?: WireViolation[];
}

/**
 * Checks a record's own members, as `validateSync` with `stopAtFirstError` would on the DTO instance,
 * but on the bound record itself: every property reports its first violated rule, keyed as the
 * legacy ModelState (`transaction.requirements[0].requirement_id`). Its exact decimals are settled to
 * numbers on the way: a record with any violation is thrown away.
 */
function checkMembers(
  record: BoundRecord,
  compiledModel: CompiledModel,
  path: string,
  index: number | undefined,
  reporting: Reporting,
): void {
  const args: ValidationArguments = {
    targetName: compiledModel.targetName,
    property: '',
    object: record,
    value: undefined,
    constraints: [],
  };
  for (const { property, member, rules } of compiledModel.properties) {
    const value = record[property];
    args.property = property;
    args.value = value;
    for (const rule of rules) {
      args.constraints = rule.metadata.constraints;
      if (rule.constraint.validate(value, args) !== false) continue;
      const message = messageOf(rule, args);
      const key = report(value, property, message, pathOf(path, index), reporting);
      reporting.violations?.push({
        key,
        message,
        model: compiledModel.model,
        member,
        rule: rule.name,
      });
      break;
    }
  }
  for (const name of compiledModel.decimals) {
    const value = record[name];
    if (value instanceof ExactDecimal) record[name] = value.toNumber();
  }
}

/** A list's item as bound: a record, null, or a value its codec could not read as a record. */
type ListItem = BoundRecord | UnreadableValue | null;

/** A list of a record whose items are validated one by one: the list itself was valid. */
interface ItemsToCheck {
  readonly path: string;
  readonly items: readonly ListItem[];
  readonly itemModel: CompiledModel;
}

/**
 * Validates one item of a list: a record by its model; null is skipped, as Json.NET's validation did;
 * an unreadable item is reported at its index (`transaction.requirements[0]`), as the legacy did.
 */
function checkItem(
  item: ListItem,
  itemModel: CompiledModel,
  listPath: string,
  index: number,
  reporting: Reporting,
): void {
  if (item instanceof UnreadableValue) {
    const list = listPath.slice(listPath.lastIndexOf('.') + 1);
    reporting.into[pathOf(listPath, index)] = [
      `The value '${describeValue(item)}' is not valid for ${list}.`,
    ];
  } else if (item !== null) validateRecord(item, itemModel, listPath, index, reporting);
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
        items: items as ListItem[],
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
  reporting: Reporting,
): void {
  checkMembers(record, compiledModel, path, index, reporting);
  if (compiledModel.lists.length === 0) return;
  for (const { path: listPath, items, itemModel } of itemsToCheck(
    record,
    compiledModel,
    pathOf(path, index),
    reporting.into,
  )) {
    items.forEach((item, itemIndex) => checkItem(item, itemModel, listPath, itemIndex, reporting));
  }
}

/** Validates a body's record, pausing between the items of its lists. */
function* validateBodySteps(
  record: BoundRecord,
  compiledModel: CompiledModel,
  reporting: Reporting,
): Steps<void> {
  const { root, into } = reporting;
  checkMembers(record, compiledModel, root, undefined, reporting);
  for (const { path, items, itemModel } of itemsToCheck(record, compiledModel, root, into)) {
    yield* eachSteps(items, (item, index) => checkItem(item, itemModel, path, index, reporting));
  }
}

/** Puts a violation into the ModelState; its key. */
function report(
  value: unknown,
  property: string,
  message: string,
  path: string,
  { root, into }: Reporting,
): string {
  const unreadable = value instanceof UnreadableValue ? value : undefined;
  // A value the reader could not convert is keyed by its name as sent, as Json.NET's path was.
  const key = `${path}.${unreadable?.sentName ?? property}`;
  into[key] = [message];
  // Where Json.NET's reader itself failed, the legacy also reported the member it lost after the
  // fault, or, after the record's last member, each list holding the record
  // (`transaction.requirements`) and the record as a whole.
  if (unreadable?.lostName !== undefined) {
    const lost = `${path}.${unreadable.lostName}`;
    into[lost] = [...(into[lost] ?? []), message];
  } else if (unreadable?.failsRecord) {
    const lists = [...path.matchAll(/\[\d+\]/g)].map((index) => path.slice(0, index.index));
    for (const enclosing of [root, ...lists])
      into[enclosing] = [...(into[enclosing] ?? []), message];
  }
  return key;
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
  yield* validateBodySteps(bound, compiledOf(type), { root: parameterName, into: modelState });
  if (Object.keys(modelState).length > 0) throw new RequestValidationError(modelState);
  return bound as T;
}

/** The same, at once. */
export const toValidatedDto = <T extends object>(
  type: WireClass<T>,
  bound: BoundRecord,
  parameterName: string,
): T => runSteps(validatedDtoSteps(type, bound, parameterName));

/**
 * The rules a bound record breaks, each with its key, message, member and rule: what toValidatedDto
 * would refuse it for, explained. Settles the record's decimals as toValidatedDto does.
 */
export function wireViolations(
  type: WireClass,
  bound: BoundRecord,
  parameterName: string,
): WireViolation[] {
  const violations: WireViolation[] = [];
  runSteps(
    validateBodySteps(bound, compiledOf(type), { root: parameterName, into: {}, violations }),
  );
  return violations;
}
