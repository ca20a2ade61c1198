import 'reflect-metadata';
import { ApiSchema } from '@nestjs/swagger';
import { relative, sep } from 'node:path';
import { getCallSites } from 'node:util';
import { type ExactDecimal } from '../values/exact-decimal';

/**
 * The kinds of value a wire member can hold; each has one coercion, one validator and one writer.
 * `intOrText` holds either, as written: JSON writes an integer as a number, XML writes its text.
 */
export type WireScalarKind = 'int' | 'decimal' | 'string' | 'boolean' | 'date' | 'intOrText';

export type WireClass<T = object> = new () => T;

interface WireMemberBase {
  /** The exact, case-sensitive member name on the wire (JSON member, XML element, form key). */
  readonly name: string;
}

/** One side of an exact decimal range. */
export interface DecimalBound {
  readonly value: ExactDecimal;
  /** The bound itself is outside the range (`greaterThan`, `lessThan`). */
  readonly exclusive: boolean;
}

export interface WireScalarMember extends WireMemberBase {
  readonly kind: WireScalarKind;
  readonly required: boolean;
  /**
   * Inclusive whole-number bounds of a number, as the seed's ranges: DataAnnotations' [Range], which
   * rounds a decimal half to even before comparing.
   */
  readonly min?: number;
  readonly max?: number;
  /** Exact bounds of a decimal, compared without rounding. */
  readonly lower?: DecimalBound;
  readonly upper?: DecimalBound;
  /** Most digits of a decimal after the point, trailing zeros not counted. */
  readonly scale?: number;
  /** Most digits of a decimal in all, with `scale`: what a DECIMAL(precision, scale) holds. */
  readonly precision?: number;
  /** Longest text accepted: the column length, so nothing accepted is cut when stored. */
  readonly maxLength?: number;
  /** Shortest text accepted. */
  readonly minLength?: number;
  /** A pattern the text matches somewhere, as JSON Schema's `pattern` (anchor it to match all). */
  readonly pattern?: RegExp;
  /** The only values accepted, compared exactly (text case-sensitively). */
  readonly enum?: readonly (string | number)[];
  /** Inclusive bounds of a date. */
  readonly earliest?: Date;
  readonly latest?: Date;
  /** Written in answers, never bound from a request or a file (see FieldOptions.readOnly). */
  readonly readOnly?: boolean;
}

export interface WireListMember extends WireMemberBase {
  readonly kind: 'list';
  /** The item model; a thunk because item classes may be declared after the list's owner. */
  readonly item: () => WireClass;
  /** Present and not null. */
  readonly required?: boolean;
  /** Fewest and most items, null items counted. */
  readonly minItems?: number;
  readonly maxItems?: number;
}

export type WireMember = WireScalarMember | WireListMember;

export interface WireModelOptions {
  /** The element name of one record in XML, and the base of the collection name (`ArrayOf…`). */
  readonly name: string;
  /**
   * XML child order. DataContractSerializer writes members in ordinal (case-sensitive) order, which is
   * the default; a model whose legacy contract set an explicit order lists its member names here.
   */
  readonly xmlOrder?: readonly string[];
  /** Its component name in the OpenAPI document, when it differs from `name`. */
  readonly schemaName?: string;
}

/** A DTO's wire shape: read by every codec, the body pipe and the OpenAPI document. */
export interface WireModel {
  readonly type: WireClass;
  readonly name: string;
  /** Members in declaration order: the JSON member order. */
  readonly members: readonly WireMember[];
  /** Members in XML element order. */
  readonly xmlMembers: readonly WireMember[];
  /** The members a request or an import file binds, in declaration order: all but the read-only. */
  readonly readMembers: readonly WireMember[];
  /** XML root of a collection of these records, e.g. `ArrayOfRequirement`. */
  readonly collectionName: string;
  /** Key prefix of validation messages, as the legacy action parameter: `transaction`. */
  readonly parameterName: string;
  /** Its component name in the OpenAPI document. */
  readonly schemaName: string;
  /** The file that declares it, from the working directory: named when two claim one schema name. */
  readonly file: string;
}

const MEMBERS = Symbol('wire:members');
const MODEL = Symbol('wire:model');
const DECLARED_MODELS: WireModel[] = [];

/** Every declared wire model, for the OpenAPI document. */
export const declaredWireModels = (): readonly WireModel[] => DECLARED_MODELS;

/** Registers a member on the class being declared; a subclass redeclaring a member keeps its position. */
export function registerWireMember(prototype: object, member: WireMember): void {
  const inherited = (Reflect.getMetadata(MEMBERS, prototype) as WireMember[] | undefined) ?? [];
  const own = Reflect.getOwnMetadata(MEMBERS, prototype) as WireMember[] | undefined;
  const members = own ?? [...inherited];
  const index = members.findIndex((existing) => existing.name === member.name);
  if (index >= 0) members[index] = member;
  else members.push(member);
  Reflect.defineMetadata(MEMBERS, members, prototype);
}

function ordinalCompare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The file whose code applies the decorator: the first caller outside this file and the installed
 * packages (Reflect.decorate), which is the class's own module, its path from the working directory.
 */
function declaringFile(): string {
  // The first site is this function: this file as the source map names it (the .ts, or the .js).
  const [own, ...callers] = getCallSites({ sourceMap: true });
  const caller = callers.find(
    ({ scriptName }) =>
      scriptName !== own.scriptName && !scriptName.split(sep).includes('node_modules'),
  );
  return caller ? relative(process.cwd(), caller.scriptName) : 'an unknown file';
}

/** Declares a class as a wire model. Its members come from the field decorators on its properties. */
export function WireRecord(options: WireModelOptions): ClassDecorator {
  return (target) => {
    const type = target as unknown as WireClass;
    const members =
      (Reflect.getMetadata(MEMBERS, type.prototype as object) as WireMember[] | undefined) ?? [];
    let xmlMembers: WireMember[];
    if (options.xmlOrder) {
      const byName = new Map(members.map((member) => [member.name, member]));
      xmlMembers = options.xmlOrder.map((name) => {
        const member = byName.get(name);
        if (!member) throw new Error(`${target.name}: xmlOrder names unknown member ${name}`);
        return member;
      });
      if (xmlMembers.length !== members.length) {
        throw new Error(`${target.name}: xmlOrder must list every member`);
      }
    } else {
      xmlMembers = [...members].sort((a, b) => ordinalCompare(a.name, b.name));
    }
    const model: WireModel = {
      type,
      name: options.name,
      members,
      xmlMembers,
      readMembers: members.filter((member) => member.kind === 'list' || !member.readOnly),
      collectionName: `ArrayOf${options.name}`,
      parameterName: options.name.charAt(0).toLowerCase() + options.name.slice(1),
      schemaName: options.schemaName ?? options.name,
      file: declaringFile(),
    };
    // The document keys schemas by name: a second class under a taken name would silently merge into it.
    const holder = DECLARED_MODELS.find((declared) => declared.schemaName === model.schemaName);
    if (holder) {
      throw new Error(
        `${target.name} (${model.file}) and ${holder.type.name} (${holder.file}) are both ` +
          `declared as the wire schema '${model.schemaName}'; give one of them its own ` +
          'schemaName in @WireRecord.',
      );
    }
    Reflect.defineMetadata(MODEL, model, type);
    DECLARED_MODELS.push(model);
    ApiSchema({ name: model.schemaName })(target);
  };
}

export function findWireModel(type: unknown): WireModel | undefined {
  if (typeof type !== 'function') return undefined;
  return Reflect.getMetadata(MODEL, type) as WireModel | undefined;
}

export function wireModelOf(type: WireClass): WireModel {
  const model = findWireModel(type);
  if (!model) throw new Error(`${type.name} is not declared with @WireRecord`);
  return model;
}

/** A plain object keyed by wire member names, as a codec binds a record: what validation checks. */
export type BoundRecord = Record<string, unknown>;

/** Whether a value is a record as the codecs bind one: a plain object, not an array or a value. */
export function isBoundRecord(value: unknown): value is BoundRecord {
  if (value === null || typeof value !== 'object') return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
