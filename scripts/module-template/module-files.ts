/**
 * What `npm run generate:module -- <Name> [options]` writes: a module in the style of src/transaction
 * and docs/adding-a-module.md, as file paths (from the repository root) and their text. Prettier
 * formats each file after; the text here only has to be valid TypeScript.
 */
import { stimulusOf } from './stimuli';

/** The spellings of one module name, as its files, classes, tables, routes and scopes use them. */
export interface ModuleNames {
  /** PascalCase, as given: classes (`CommissionService`), the route prefix and the XML element. */
  readonly pascal: string;
  /** camelCase: the record as the legacy error keys name it (`commission.name`). */
  readonly camel: string;
  /** kebab-case: the folder and file names. */
  readonly kebab: string;
  /** snake_case: the table and its key column. */
  readonly snake: string;
  /** UPPER_SNAKE_CASE: constants. */
  readonly constant: string;
  /** The plural in PascalCase: the list operation (`ListCommissions`). */
  readonly pluralPascal: string;
  /** The plural in camelCase: the controller's service member. */
  readonly pluralCamel: string;
  /** The plural in kebab-case: the scopes' prefix (`commissions:read`). */
  readonly pluralKebab: string;
  /** The plural in UPPER_SNAKE_CASE: the scope constants. */
  readonly pluralConstant: string;
  /** The plural in words, lower case: descriptions. */
  readonly pluralWords: string;
  /** In words, lower case: descriptions and messages. */
  readonly words: string;
}

/**
 * The names a module is written with: its own, and the resource it serves (the module's, unless
 * `--resource` names another: a module Commission serving CommissionSplit).
 */
export interface Names {
  /** The module: its folder, module class, door, list of tables, reactions and their events, suite. */
  readonly module: ModuleNames;
  /** The record it serves: DTO, entity and table, errors, routes, scopes, and its changes' events. */
  readonly resource: ModuleNames;
}

/** Another module's event the new module reacts to, as that module's door exports it. */
export interface ReactedEvent {
  /** The folder of the door: `transaction`, imported as `../transaction`. */
  readonly folder: string;
  /** The constant the door exports it as: `AGENTS_CHANGED`. */
  readonly constant: string;
  /** The class of its data, exported by the same door: `AgentsChangedDto`. */
  readonly payload: string;
  /** Its routing key: `transaction.agents-changed`. */
  readonly routingKey: string;
}

/** What the module has besides a read and a create. */
export interface ModuleOptions {
  /** The type of its key: an int id (`commission_id`) or a text code (`commission_code`). */
  readonly key: 'int' | 'text';
  /**
   * The letters of a text key's codes: capitals (`NORTH-2`) or lower case (`north-2`), one case, so
   * that both databases compare and order them alike.
   */
  readonly keyCase: 'upper' | 'lower';
  /** A list route (`ListCommissions`): keyset pages in key order. */
  readonly list: boolean;
  /**
   * An update route: PUT with the key in the path, or POST with the key in the body, replacing the
   * record (204; 404 when there is none); or `upsert`, a PUT with the key in the path that creates
   * the record when there is none (201 with Location) and replaces it when there is (204).
   */
  readonly update?: 'put' | 'post' | 'upsert';
  /** The other modules' events it handles after they commit, each with its event-driven test. */
  readonly reactsTo: readonly ReactedEvent[];
}

export const DEFAULT_OPTIONS: ModuleOptions = {
  key: 'int',
  keyCase: 'upper',
  list: false,
  reactsTo: [],
};

/**
 * The doors whose events tell of changes to transactions (the transaction module's, the import's): a
 * module reacting to one back-fills the transactions there were before it, through the transaction
 * module's door. Another module's rows need a query of that module's to walk them by key.
 */
const TRANSACTION_DOORS = new Set(['transaction', 'data-import']);

/** Whether the module back-fills: it reacts to changes of the transactions. */
export const backfills = (options: Pick<ModuleOptions, 'reactsTo'>) =>
  options.reactsTo.some((event) => TRANSACTION_DOORS.has(event.folder));

/** Whether the update route names the record by the key in its path, its body a ChangesDto. */
const keyInPath = (options: ModuleOptions) =>
  options.update === 'put' || options.update === 'upsert';

/** One file to write: its path from the repository root and its text. */
export interface GeneratedFile {
  readonly path: string;
  readonly text: string;
}

/** The most records a list page holds, and the size of a page the caller does not size. */
const PAGE = { max: 500, default: 100 };

/** The key, as each file spells it and its values. */
interface Key {
  /** The member and column: `commission_id`, `commission_code`. */
  readonly name: string;
  /** Its TypeScript type. */
  readonly type: 'number' | 'string';
  /** Its wire field declaration (without the member). */
  readonly field: string;
  /** Its column declaration (without the member). */
  readonly column: string;
  /** A key value as a TypeScript literal: the example's is `literal(7)`. */
  readonly literal: (n: number) => string;
  /** A key value as it appears in a path. */
  readonly text: (n: number) => string;
  /** A key value as a TypeScript expression of the int variable `name`. */
  readonly ofVariable: (name: string) => string;
  /** A code's pattern, as a regular expression's source. */
  readonly pattern?: string;
  /** A code in the case no code has: what MariaDB's collation would match a code with. */
  readonly otherCase?: (n: number) => string;
}

function keyOf(names: ModuleNames, options: ModuleOptions): Key {
  if (options.key === 'text') {
    const upper = options.keyCase === 'upper';
    const letters = upper ? 'A-Z' : 'a-z';
    const prefix = upper ? 'EX-' : 'ex-';
    const code = (n: number) => `${prefix}${n}`;
    return {
      name: `${names.snake}_code`,
      type: 'string',
      // Letters of one case, digits and inner hyphens: safe in a path, and ordered and compared alike
      // by both databases (MariaDB's collation ignores case and trailing spaces; SQLite's does not).
      field: `@TextField({ required: true, maxLength: 64, pattern: ${names.constant}_CODE })`,
      column: `@PrimaryColumn({ type: 'varchar', length: 64 })`,
      literal: (n) => `'${code(n)}'`,
      text: code,
      ofVariable: (variable) => `\`${prefix}\${${variable}}\``,
      pattern: `^[${letters}0-9]+(?:-[${letters}0-9]+)*$`,
      otherCase: (n) => (upper ? code(n).toLowerCase() : code(n).toUpperCase()),
    };
  }
  return {
    name: `${names.snake}_id`,
    type: 'number',
    field: '@IntField({ required: true, min: 1 })',
    column: `@PrimaryColumn({ type: 'int' })`,
    literal: (n) => String(n),
    text: (n) => String(n),
    ofVariable: (variable) => variable,
  };
}

/** The example record: its key, a name and an amount. */
const EXAMPLE = { key: 7, amount: 1250.5 };
const exampleName = (names: ModuleNames) => `Example ${names.words}`;

/** The example record as a TypeScript object literal. */
function exampleLiteral(names: ModuleNames, key: Key): string {
  return `{ ${key.name}: ${key.literal(EXAMPLE.key)}, name: '${exampleName(names)}', amount: ${EXAMPLE.amount} }`;
}

/** `agentsChanged` for AGENTS_CHANGED: a handler's method name. */
function methodOf(event: ReactedEvent): string {
  return event.constant
    .toLowerCase()
    .replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
}

/** `AgentsChanged` for AGENTS_CHANGED: in test names. */
function titleOf(event: ReactedEvent): string {
  const method = methodOf(event);
  return method.charAt(0).toUpperCase() + method.slice(1);
}

function dto(names: ModuleNames, options: ModuleOptions): string {
  const key = keyOf(names, options);
  const wire = [
    'DecimalField',
    ...(options.key === 'int' ? ['IntField'] : []),
    'TextField',
    'WireRecord',
  ];
  const codePattern = key.pattern
    ? `\n/** What a ${names.words} code may hold. */\nexport const ${names.constant}_CODE = /${key.pattern}/;\n`
    : '';
  const members = `@TextField({ required: true, maxLength: 200 }) name?: string | null;
  @DecimalField({ exactMin: 0, precision: 15, scale: 2 }) amount?: number | null;`;
  if (keyInPath(options))
    return `import { ${wire.join(', ')} } from '../../wire';
${codePattern}
/** What Update${names.pascal} stores: every member of a ${names.words} but its key, which the path names. */
@WireRecord({ name: '${names.pascal}', schemaName: '${names.pascal}Changes' })
export class ${names.pascal}ChangesDto {
  ${members}
}

/** One ${names.words}, as clients read and create it. */
@WireRecord({ name: '${names.pascal}' })
export class ${names.pascal}Dto extends ${names.pascal}ChangesDto {
  ${key.field} ${key.name}?: ${key.type} | null;
}
`;
  return `import { ${wire.join(', ')} } from '../../wire';
${codePattern}
/** One ${names.words}, as clients read and create it. */
@WireRecord({ name: '${names.pascal}' })
export class ${names.pascal}Dto {
  ${key.field} ${key.name}?: ${key.type} | null;
  ${members}
}
`;
}

function listQuery(names: ModuleNames, options: ModuleOptions): string {
  const key = keyOf(names, options);
  const after =
    key.type === 'number'
      ? `@ApiPropertyOptional({
    description: 'The page starts after this ${key.name}: the last of the previous page. Absent for the first page.',
    type: 'integer',
    format: 'int32',
  })
  @IsOptional()
  @IsInt()
  after?: number;`
      : `@ApiPropertyOptional({
    description: 'The page starts after this ${key.name}: the last of the previous page. Absent for the first page.',
    maxLength: 64,
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  after?: string;`;
  const validators = [
    'IsInt',
    'IsOptional',
    ...(key.type === 'string' ? ['IsString'] : []),
    'Max',
    ...(key.type === 'string' ? ['MaxLength'] : []),
    'Min',
  ];
  return `import { ApiPropertyOptional } from '@nestjs/swagger';
import { ${validators.join(', ')} } from 'class-validator';

/** The most ${names.pluralWords} a page holds, and the size of a page the caller does not size. */
export const PAGE_LIMIT = { max: ${PAGE.max}, default: ${PAGE.default} } as const;

/** List${names.pluralPascal}' query string: a plain NestJS query DTO (the wire layer validates it as Nest's ValidationPipe does). */
export class List${names.pluralPascal}Query {
  ${after}

  @ApiPropertyOptional({
    description: \`${capitalized(names.pluralWords)} a page holds, at most \${PAGE_LIMIT.max}.\`,
    minimum: 1,
    maximum: PAGE_LIMIT.max,
    default: PAGE_LIMIT.default,
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(PAGE_LIMIT.max)
  limit?: number;
}
`;
}

function events({ module: m, resource: names }: Names, options: ModuleOptions): string {
  const key = keyOf(names, options);
  const example = exampleLiteral(names, key);
  const subject = `'${key.text(EXAMPLE.key)}'`;
  const wire =
    options.reactsTo.length > 0
      ? `import { ${backfills(options) ? 'IntField, ' : ''}TextField, WireRecord } from '../wire';\n`
      : '';
  const backfilled = backfills(options)
    ? `
/** What one batch of the ${m.words} module's back-fill did: the range of transactions it covered. */
@WireRecord({ name: '${m.pascal}Backfilled' })
export class ${m.pascal}BackfilledDto {
  @IntField() transaction_id_from?: number | null;
  @IntField() transaction_id_to?: number | null;
  /** How many transactions the batch did. */
  @IntField() transactions?: number | null;
}

/**
 * Published by ${m.pascal}Reactions.backfill, a batch of the transactions there were before the module
 * at a time. Replace its data with what the back-fill changed, as the other events do.
 */
export const ${m.constant}_BACKFILLED = declareIntegrationEvent({
  type: 'property-sales.${m.kebab}.backfilled',
  routingKey: '${m.kebab}.backfilled',
  payload: ${m.pascal}BackfilledDto,
  summary: 'A batch of the back-fill of the ${m.words} module committed.',
  description: 'The range of transactions one batch covered, once it committed.',
  example: { transaction_id_from: 1, transaction_id_to: 500, transactions: 500 },
});
`
    : '';
  const updated = options.update
    ? `
/** A ${names.words} was updated: the whole record as it stands after the change, not a delta. */
export const ${names.constant}_UPDATED = declareIntegrationEvent({
  type: 'property-sales.${names.kebab}.updated',
  routingKey: '${names.kebab}.updated',
  payload: ${names.pascal}Dto,
  summary: 'A ${names.words} was updated.',
  description: 'The ${names.words} as Update${names.pascal} stored it, every member, once it committed.',
  subject: 'The ${key.name}, as text.',
  example: ${example},
  exampleSubject: ${subject},
});
`
    : '';
  const reacted =
    options.reactsTo.length > 0
      ? `
/** What the ${m.words} module did about another module's event. */
@WireRecord({ name: '${m.pascal}Reacted' })
export class ${m.pascal}ReactedDto {
  /** The CloudEvents id of the event it reacted to. */
  @TextField() event_id?: string | null;
  /** Its CloudEvents type. */
  @TextField() event_type?: string | null;
  /** Its subject, when it has one. */
  @TextField() subject?: string | null;
}

/**
 * Published by ${m.pascal}Reactions in the step that handled another module's event. Replace its
 * data with what the reaction changed, whole (the state after it, not a delta), as the other events do.
 */
export const ${m.constant}_REACTED = declareIntegrationEvent({
  type: 'property-sales.${m.kebab}.reacted',
  routingKey: '${m.kebab}.reacted',
  payload: ${m.pascal}ReactedDto,
  summary: 'The ${m.words} module reacted to an event.',
  description: 'The event it handled, once the step that handled it committed.',
  subject: 'The subject of the event it reacted to, when that event has one.',
  subjectMayBeAbsent: true,
  example: { event_id: '0b7e8a52-4c1f-4e0a-9d5b-3f6a2c1e9d47', event_type: 'property-sales.transaction.agents-changed', subject: '1001' },
  exampleSubject: '1001',
});
`
      : '';
  return `import { declareIntegrationEvent } from '../events/integration-event';
${wire}import { ${names.pascal}Dto } from './dto/${names.kebab}.dto';

/** A ${names.words} was created: published by the unit of work that stored it, once it committed. */
export const ${names.constant}_CREATED = declareIntegrationEvent({
  type: 'property-sales.${names.kebab}.created',
  routingKey: '${names.kebab}.created',
  payload: ${names.pascal}Dto,
  summary: 'A ${names.words} was created.',
  description: 'The ${names.words} as Create${names.pascal}${options.update === 'upsert' ? ` or Update${names.pascal}` : ''} stored it, every member, once it committed.',
  subject: 'The ${key.name}, as text.',
  example: ${example},
  exampleSubject: ${subject},
});
${updated}${reacted}${backfilled}`;
}

/** The constants of the events the module publishes. */
function publishedEvents({ module: m, resource: r }: Names, options: ModuleOptions): string[] {
  return [
    `${r.constant}_CREATED`,
    ...(options.update ? [`${r.constant}_UPDATED`] : []),
    ...(options.reactsTo.length > 0 ? [`${m.constant}_REACTED`] : []),
    ...(backfills(options) ? [`${m.constant}_BACKFILLED`] : []),
  ];
}

function entity(names: ModuleNames, options: ModuleOptions): string {
  const key = keyOf(names, options);
  return `import { Entity, PrimaryColumn } from 'typeorm';
import { WireColumns, type WireColumnsOf } from '../../database/wire-columns';
import { ${names.pascal}Dto } from '../dto/${names.kebab}.dto';

/** A stored ${names.words}: a column for every scalar member of the wire ${names.pascal}, named as on the wire. */
@Entity('${names.snake}')
@WireColumns(${names.pascal}Dto)
export class ${names.pascal}Entity {
  ${key.column} ${key.name}!: ${key.type};
}

// The columns @WireColumns adds, typed for the compiler (declaration merging, allowed for entities).
export interface ${names.pascal}Entity extends WireColumnsOf<${names.pascal}Dto, '${key.name}'> {}
`;
}

function entities({ module: m, resource: r }: Names): string {
  return `import { ${r.pascal}Entity } from './${r.kebab}.entity';

export { ${r.pascal}Entity } from './${r.kebab}.entity';

/** The tables this module owns, registered with TypeORM by the module itself. */
export const ${m.constant}_ENTITIES = [${r.pascal}Entity];
`;
}

/** The module's door: what another module may import of it (the rule modules-through-their-door). */
function door(names: Names, options: ModuleOptions): string {
  const { module: m, resource: r } = names;
  const records = [`${r.pascal}Dto`, ...(keyInPath(options) ? [`${r.pascal}ChangesDto`] : [])];
  const reacted = [
    ...(options.reactsTo.length > 0 ? [`${m.pascal}ReactedDto`] : []),
    ...(backfills(options) ? [`${m.pascal}BackfilledDto`] : []),
  ];
  return `/** The ${m.words} module's door: all that another module may use of it. */
export { ${m.pascal}Module } from './${m.kebab}.module';

// The events it publishes, and the records they and the routes carry.
export { ${[...publishedEvents(names, options), ...reacted].join(', ')} } from './${m.kebab}.events';
export { ${records.join(', ')} } from './dto/${r.kebab}.dto';

// Its tables, for the data source (src/app.entities.ts).
export { ${m.constant}_ENTITIES } from './entities';
`;
}

function errors(names: ModuleNames, options: ModuleOptions): string {
  const key = keyOf(names, options);
  const error = (
    name: string,
    status: number,
    description: string,
    code: string,
    title: string,
    message: string,
  ) => `export class ${names.pascal}${name}Error extends DomainError {
  static readonly status = ${status};
  static readonly description = '${description}';
  static readonly example = new ${names.pascal}${name}Error(${key.literal(EXAMPLE.key)});
  readonly code = '${names.snake}_${code}';
  readonly title = '${title}';
  constructor(key: ${key.type}) {
    super(\`${message}\`);
  }
}
`;
  return `import { DomainError } from '../common/domain-error';

${error('NotFound', 404, `No such ${names.words}.`, 'not_found', `${names.pascal} not found`, `No ${names.words} with ${key.name} \${key} exists.`)}
${error('Exists', 409, `A ${names.words} with this key exists already.`, 'exists', `${names.pascal} exists`, `A ${names.words} with ${key.name} \${key} exists already.`)}`;
}

function service({ module: m, resource: names }: Names, options: ModuleOptions): string {
  const key = keyOf(names, options);
  const { pascal, constant } = names;
  const text = options.key === 'text';
  const typeorm = options.list ? `import { MoreThan } from 'typeorm';\n` : '';
  const wire = options.update ? `import { pickWireScalars } from '../wire';\n` : '';
  const dtos = [`${pascal}Dto`, ...(keyInPath(options) ? [`${pascal}ChangesDto`] : [])];
  const dtoImports = [...dtos, ...(text ? [`${constant}_CODE`] : [])];
  const eventImports = [`${constant}_CREATED`, ...(options.update ? [`${constant}_UPDATED`] : [])];
  const find = text
    ? `  /**
   * The ${names.words} with this code; ${pascal}NotFoundError when there is none. A code no
   * ${names.words} may have is not looked up: MariaDB would match it ignoring case, SQLite would not.
   */
  async find(code: string): Promise<${pascal}Entity> {
    const row = ${constant}_CODE.test(code)
      ? await this.unitOfWork.read((manager) => manager.findOneBy(${pascal}Entity, { ${key.name}: code }))
      : null;
    if (!row) throw new ${pascal}NotFoundError(code);
    return row;
  }`
    : `  /** The ${names.words} with this id; ${pascal}NotFoundError when there is none. */
  async find(id: number): Promise<${pascal}Entity> {
    const row = await this.unitOfWork.read((manager) =>
      manager.findOneBy(${pascal}Entity, { ${key.name}: id }),
    );
    if (!row) throw new ${pascal}NotFoundError(id);
    return row;
  }`;
  const list = options.list
    ? `

  /** Up to \`limit\` ${names.pluralWords} in ${key.name} order, after the key \`after\` when given. */
  list(after: ${key.type} | undefined, limit: number): Promise<${pascal}Entity[]> {
    return this.unitOfWork.read((manager) =>
      manager.find(${pascal}Entity, {
        where: after === undefined ? {} : { ${key.name}: MoreThan(after) },
        order: { ${key.name}: 'ASC' },
        take: limit,
      }),
    );
  }`
    : '';
  const replace = `

  /**
   * Replaces every member of the ${names.words} with the record's (an absent one becomes null), and
   * publishes ${constant}_UPDATED with the whole record in the same transaction; ${pascal}NotFoundError
   * when there is none (nothing stored, nothing published).
   */
  ${
    options.update === 'put'
      ? `update(key: ${key.type}, changes: ${pascal}ChangesDto): Promise<void> {
    const row = { ...pickWireScalars(${pascal}ChangesDto, changes), ${key.name}: key };`
      : `update(record: ${pascal}Dto): Promise<void> {
    // Validated: \`required\` guarantees the key by the time the DTO gets here.
    const key = record.${key.name}!;
    const row = { ...pickWireScalars(${pascal}Dto, record), ${key.name}: key };`
  }
    return this.unitOfWork.write(async (manager, publish) => {
      if (!(await manager.existsBy(${pascal}Entity, { ${key.name}: key }))) throw new ${pascal}NotFoundError(key);
      await manager.update(${pascal}Entity, { ${key.name}: key }, row);
      publish({ type: ${constant}_UPDATED, subject: String(key), time: new Date(), data: row });
    });
  }`;
  const upsert = `

  /**
   * Stores the ${names.words} the key names with the record's members (an absent one becomes null):
   * creates it when there is none, publishing ${constant}_CREATED, or replaces it, publishing
   * ${constant}_UPDATED, with the whole record in the same transaction; true when it created it. On
   * MariaDB the look-up locks the key, or its place when there is none, so a create of the key at the
   * same moment waits for this one (or deadlocks and is run again by the unit of work) and finds it.
   */
  upsert(key: ${key.type}, changes: ${pascal}ChangesDto): Promise<boolean> {
    const row = { ...pickWireScalars(${pascal}ChangesDto, changes), ${key.name}: key };
    return this.unitOfWork.write(async (manager, publish) => {
      const lock =
        manager.connection.options.type === 'better-sqlite3'
          ? {}
          : { lock: { mode: 'pessimistic_write' as const } };
      const stored = await manager.findOne(${pascal}Entity, {
        select: { ${key.name}: true },
        where: { ${key.name}: key },
        ...lock,
      });
      if (stored) await manager.update(${pascal}Entity, { ${key.name}: key }, row);
      else await manager.insert(${pascal}Entity, row);
      publish({
        type: stored ? ${constant}_UPDATED : ${constant}_CREATED,
        subject: String(key),
        time: new Date(),
        data: row,
      });
      return !stored;
    });
  }`;
  const update = !options.update ? '' : options.update === 'upsert' ? upsert : replace;
  return `import { Injectable } from '@nestjs/common';
${typeorm}import { UnitOfWork } from '../database/unit-of-work';
${wire}import { ${dtoImports.join(', ')} } from './dto/${names.kebab}.dto';
import { ${pascal}Entity } from './entities';
import { ${pascal}ExistsError, ${pascal}NotFoundError } from './${names.kebab}.errors';
import { ${eventImports.join(', ')} } from './${m.kebab}.events';

/** Reads and stores ${names.pluralWords}, through the unit of work only. */
@Injectable()
export class ${pascal}Service {
  constructor(private readonly unitOfWork: UnitOfWork) {}

${find}${list}

  /**
   * Stores a new ${names.words}, and its ${constant}_CREATED event in the same transaction;
   * ${pascal}ExistsError when its key is taken (nothing stored, nothing published).
   */
  create(record: ${pascal}Dto): Promise<void> {
    return this.unitOfWork.write(async (manager, publish) => {
      // Validated: \`required\` guarantees the key by the time the DTO gets here.
      const key = record.${key.name}!;
      if (await manager.existsBy(${pascal}Entity, { ${key.name}: key })) throw new ${pascal}ExistsError(key);
      await manager.insert(${pascal}Entity, { ...record, ${key.name}: key });
      publish({ type: ${constant}_CREATED, subject: String(key), time: new Date(), data: record });
    });
  }${update}
}
`;
}

function controller(names: ModuleNames, options: ModuleOptions): string {
  const key = keyOf(names, options);
  const { pascal, constant, pluralConstant, pluralKebab, pluralPascal } = names;
  const int = options.key === 'int';
  const nest = [
    'Body',
    'Controller',
    'Get',
    ...(options.update === 'put' || options.update === 'post' ? ['HttpCode'] : []),
    'Param',
    'Post',
    ...(keyInPath(options) ? ['Put'] : []),
    ...(options.list ? ['Query'] : []),
    'Res',
  ];
  const wire = [
    ...(int ? ['Int32ParamPipe'] : []),
    'WireCreated',
    'WireErrors',
    ...(keyInPath(options) ? ['WireParamPipe'] : []),
    'WireRequestBody',
    'WireResponse',
    'WireTag',
  ];
  const keyParam = `@Param('${key.name}'${int ? ', Int32ParamPipe' : ''}) key: ${key.type}`;
  // A key the update stores is held to the record's rules for it, as the body's members are.
  const storedKeyParam = `@Param('${key.name}', new WireParamPipe(${pascal}Dto)) key: ${key.type}`;
  const apiParam = `@ApiParam({ name: '${key.name}', ${int ? `type: 'integer', format: 'int32'` : `type: 'string'`}, example: ${key.literal(EXAMPLE.key)} })`;
  const swagger = [
    'ApiOperation',
    'ApiParam',
    ...(options.update === 'put' || options.update === 'post' ? ['ApiResponse'] : []),
  ];
  const dtos = [`${pascal}Dto`, ...(keyInPath(options) ? [`${pascal}ChangesDto`] : [])];
  const operations = [`Get${pascal}`, ...(options.list ? [`List${pluralPascal}`] : [])];
  const writes = [`Create${pascal}`, ...(options.update ? [`Update${pascal}`] : [])];
  const list = !options.list
    ? ''
    : `

  @Get('List${pluralPascal}')
  @ApiOperation({
    operationId: 'List${pluralPascal}',
    summary: '${capitalized(names.pluralWords)} page by page, in ${key.name} order.',
    description: 'Keyset paging: the next page starts after the last ${key.name} of this one (\`after\`); a page shorter than \`limit\` is the last.',
  })
  @WireResponse(${pascal}Dto, {
    list: true,
    description: 'One page (ArrayOf${pascal} in XML).',
    example: [${constant}_EXAMPLE],
  })
  @RequiresScope(${pluralConstant}_READ)
  @WireErrors(304, 400, AuthenticationError, RateLimitedError, 500, DatabaseUnavailableError)
  list(@Query() query: List${pluralPascal}Query): Promise<${pascal}Dto[]> {
    return this.${names.pluralCamel}.list(query.after, query.limit ?? PAGE_LIMIT.default);
  }`;
  const updateErrors = `@WireErrors(
    400,
    AuthenticationError,
    ${pascal}NotFoundError,
    413,
    415,
    RateLimitedError,
    500,
    DatabaseUnavailableError,
    CommitOutcomeUnknownError,
  )`;
  const update =
    options.update === 'put'
      ? `

  @Put('Update${pascal}/:${key.name}')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'Update${pascal}',
    summary: 'Replaces a ${names.words}.',
    description: 'Every member of the ${names.words} the path names becomes the body\\'s (an absent one null); 404 when there is none.',
  })
  ${apiParam}
  @WireRequestBody(${pascal}ChangesDto, 'The ${names.words}, without its key.', { name: '${exampleName(names)}', amount: ${EXAMPLE.amount} })
  @ApiResponse({ status: 204, description: 'Replaced.' })
  @RequiresScope(${pluralConstant}_WRITE)
  ${updateErrors}
  update(${storedKeyParam}, @Body() changes: ${pascal}ChangesDto): Promise<void> {
    return this.${names.pluralCamel}.update(key, changes);
  }`
      : options.update === 'upsert'
        ? `

  @Put('Update${pascal}/:${key.name}')
  @ApiOperation({
    operationId: 'Update${pascal}',
    summary: 'Creates or replaces a ${names.words}.',
    description: 'Stores the body as the ${names.words} the path names: creates it when there is none (201; Location says where to read it), or replaces every member of it with the body\\'s (an absent one null; 204).',
  })
  ${apiParam}
  @WireRequestBody(${pascal}ChangesDto, 'The ${names.words}, without its key.', { name: '${exampleName(names)}', amount: ${EXAMPLE.amount} })
  @WireCreated({ description: 'Created; Location is its Get${pascal} address.', replaced: 'Replaced.' })
  @RequiresScope(${pluralConstant}_WRITE)
  @WireErrors(
    400,
    AuthenticationError,
    413,
    415,
    RateLimitedError,
    500,
    DatabaseUnavailableError,
    CommitOutcomeUnknownError,
  )
  async update(
    ${storedKeyParam},
    @Body() changes: ${pascal}ChangesDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<void> {
    // Relative to this route's address, Update${pascal}/<key>.
    if (await this.${names.pluralCamel}.upsert(key, changes))
      response.status(201).location(\`../Get${pascal}/\${key}\`);
  }`
        : options.update === 'post'
          ? `

  @Post('Update${pascal}')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'Update${pascal}',
    summary: 'Replaces a ${names.words}.',
    description: 'Every member of the ${names.words} the body\\'s ${key.name} names becomes the body\\'s (an absent one null); 404 when there is none.',
  })
  @WireRequestBody(${pascal}Dto, 'A ${names.words}.', ${constant}_EXAMPLE)
  @ApiResponse({ status: 204, description: 'Replaced.' })
  @RequiresScope(${pluralConstant}_WRITE)
  ${updateErrors}
  update(@Body() record: ${pascal}Dto): Promise<void> {
    return this.${names.pluralCamel}.update(record);
  }`
          : '';
  const listImport = options.list
    ? `import { List${pluralPascal}Query, PAGE_LIMIT } from './dto/list-${pluralKebab}.query';\n`
    : '';
  return `import { ${nest.join(', ')} } from '@nestjs/common';
import { ${swagger.join(', ')} } from '@nestjs/swagger';
import { type Response } from 'express';
import { AuthenticationError } from '../auth/authenticator';
import { RateLimitedError } from '../auth/rate-limit.guard';
import { declareScope, RequiresScope } from '../auth/scopes';
import { CommitOutcomeUnknownError, DatabaseUnavailableError } from '../database/database-errors';
import { ${wire.join(', ')} } from '../wire';
import { ${dtos.join(', ')} } from './dto/${names.kebab}.dto';
${listImport}import { ${pascal}ExistsError, ${pascal}NotFoundError } from './${names.kebab}.errors';
import { ${pascal}Service } from './${names.kebab}.service';

/** Shown in the OpenAPI document under every media type. */
const ${constant}_EXAMPLE = ${exampleLiteral(names, key)};

/** What a caller must be granted to read ${names.pluralWords}, and to change them. */
export const ${pluralConstant}_READ = declareScope('${pluralKebab}:read', 'Read ${names.pluralWords} (${operations.join(', ')}).');
export const ${pluralConstant}_WRITE = declareScope('${pluralKebab}:write', 'Change ${names.pluralWords} (${writes.join(', ')}).');

@WireTag('${pascal}', '${capitalized(names.pluralWords)}: ${[
    'read one',
    ...(options.list ? ['list them'] : []),
    'create one',
    ...(options.update === 'upsert'
      ? ['create or replace one']
      : options.update
        ? ['replace one']
        : []),
  ].join(', ')}.')
@Controller('${pascal}')
export class ${pascal}Controller {
  constructor(private readonly ${names.pluralCamel}: ${pascal}Service) {}

  @Get('Get${pascal}/:${key.name}')
  @ApiOperation({
    operationId: 'Get${pascal}',
    summary: 'One ${names.words}.',
    description: 'The ${names.words} with this key, or 404. The ETag serves If-None-Match (304 while current).',
  })
  ${apiParam}
  @WireResponse(${pascal}Dto, { description: 'The ${names.words}.', example: ${constant}_EXAMPLE })
  @RequiresScope(${pluralConstant}_READ)
  @WireErrors(
    304,
    400,
    AuthenticationError,
    ${pascal}NotFoundError,
    RateLimitedError,
    500,
    DatabaseUnavailableError,
  )
  get${pascal}(${keyParam}): Promise<${pascal}Dto> {
    return this.${names.pluralCamel}.find(key);
  }${list}

  @Post('Create${pascal}')
  @ApiOperation({
    operationId: 'Create${pascal}',
    summary: 'Creates a ${names.words}.',
    description: 'Stores the ${names.words} under the key it carries (409 if taken); Location says where to read it.',
  })
  @WireRequestBody(${pascal}Dto, 'A ${names.words}.', ${constant}_EXAMPLE)
  @WireCreated({ description: 'Created; Location is its Get${pascal} address.' })
  @RequiresScope(${pluralConstant}_WRITE)
  @WireErrors(
    400,
    AuthenticationError,
    ${pascal}ExistsError,
    413,
    415,
    RateLimitedError,
    500,
    DatabaseUnavailableError,
    CommitOutcomeUnknownError,
  )
  async create(
    @Body() record: ${pascal}Dto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<void> {
    await this.${names.pluralCamel}.create(record);
    response.location(\`Get${pascal}/\${record.${key.name}}\`);
  }${update}
}
`;
}

/** The handlers of other modules' events: one method each, publishing the module's own event. */
function reactions({ module: names }: Names, options: ModuleOptions): string {
  const backfill = backfills(options);
  const byDoor = new Map<string, string[]>(
    backfill ? [['transaction', ['TransactionQueries']]] : [],
  );
  for (const event of options.reactsTo)
    byDoor.set(event.folder, [
      ...(byDoor.get(event.folder) ?? []),
      event.constant,
      `type ${event.payload}`,
    ]);
  const imports = [...byDoor]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([folder, imported]) => `import { ${imported.join(', ')} } from '../${folder}';`);
  const handlers = options.reactsTo.map(
    (event) => `
  /**
   * Each ${event.constant} of the ${event.folder} module, once it committed: in commit order, once
   * each, in a step of its own that also moves this handler's checkpoint
   * (${names.pascal}Reactions.${methodOf(event)}). What it writes through \`manager\` and hands to
   * \`publish\` commits with that step, or not at all; a failure is retried after a pause.
   */
  @OnIntegrationEvent(${event.constant})
  ${methodOf(event)}(event: ReceivedEvent<${event.payload}>, _manager: EntityManager, publish: Publish): void {
    // The reaction goes here: read what it needs through other modules' doors (their queries join this
    // step's transaction), write this module's tables through the manager, and publish what changed.
    publish({
      type: ${names.constant}_REACTED,
      subject: event.subject,
      time: new Date(),
      data: { event_id: event.id, event_type: event.type, subject: event.subject ?? null },
    });
  }`,
  );
  const backfillMethod = `

  /**
   * The transactions there were before this module, whose changes its handlers never heard: the
   * first time an instance starts with it against a database, a run over every transaction, a batch
   * at a time, each batch in a transaction of its own (${names.pascal}Reactions.backfill).
   */
  @BatchedReaction({ backfill: true })
  async backfill({ after, until, limit, publish }: ReactionBatch): Promise<number | undefined> {
    const ids = await this.transactions.idsAfter(after, limit, until);
    if (ids.length === 0) return undefined;
    // The back-fill goes here: for the transactions of \`ids\`, what the handlers above do for a change,
    // from each as it stands (this.transactions.agentChainsOf(ids), amountsOf(ids)), written through
    // the batch's \`manager\`, so that a transaction changed meanwhile ends the same either way.
    publish({
      type: ${names.constant}_BACKFILLED,
      time: new Date(),
      data: { transaction_id_from: ids[0], transaction_id_to: ids.at(-1)!, transactions: ids.length },
    });
    return ids.length < limit ? undefined : ids.at(-1);
  }`;
  return `import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
${backfill ? `import { BatchedReaction, type ReactionBatch } from '../events/batched-reaction';\n` : ''}import { OnIntegrationEvent, type ReceivedEvent } from '../events/event-handler.decorator';
import { type Publish } from '../events/integration-event';
${imports.join('\n')}
import { ${names.constant}_REACTED${backfill ? `, ${names.constant}_BACKFILLED` : ''} } from './${names.kebab}.events';

/**
 * What the ${names.words} module does when other modules' events commit: after commit, each handler
 * from its own checkpoint, so a slow or failing one holds up no request and no other handler${backfill ? ';\n * and once, over the transactions there were before it, its back-fill' : ''}.
 */
@Injectable()
export class ${names.pascal}Reactions {${backfill ? '\n  constructor(private readonly transactions: TransactionQueries) {}\n' : ''}${handlers.join('\n')}${backfill ? backfillMethod : ''}
}
`;
}

function moduleClass(names: Names, options: ModuleOptions): string {
  const { module: m, resource: r } = names;
  const reacts = options.reactsTo.length > 0;
  const providers = [`${r.pascal}Service`, ...(reacts ? [`${m.pascal}Reactions`] : [])];
  // Its back-fill reads the transactions through their module's door, which it imports.
  const imported = [
    `TypeOrmModule.forFeature(${m.constant}_ENTITIES)`,
    ...(backfills(options) ? ['TransactionModule'] : []),
  ];
  return `import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Publishes } from '../events/module-events';
${backfills(options) ? `import { TransactionModule } from '../transaction';\n` : ''}import { ${m.constant}_ENTITIES } from './entities';
import { ${r.pascal}Controller } from './${r.kebab}.controller';
import { ${publishedEvents(names, options).join(', ')} } from './${m.kebab}.events';
${reacts ? `import { ${m.pascal}Reactions } from './${m.kebab}.reactions';\n` : ''}import { ${r.pascal}Service } from './${r.kebab}.service';

/** ${capitalized(r.pluralWords)}: their table, routes, events and service; registered in src/app.module.ts. */
@Publishes(${publishedEvents(names, options).join(', ')})
@Module({
  imports: [${imported.join(', ')}],
  controllers: [${r.pascal}Controller],
  providers: [${providers.join(', ')}],
})
export class ${m.pascal}Module {}
`;
}

function e2eSuite({ module: m, resource: names }: Names, options: ModuleOptions): string {
  const key = keyOf(names, options);
  const { pascal, pluralKebab, constant } = names;
  const base = `/api/${pascal}`;
  const k = key.literal;
  const path = (operation: string, n: number) => `'${base}/${operation}/${key.text(n)}'`;
  const stimuli = options.reactsTo.map((event) => ({ event, ...stimulusOf(event) }));
  const stimulusScopes = [...new Set(stimuli.flatMap((stimulus) => stimulus.scopes))];
  const doorImports = new Map<string, string[]>([
    [
      m.kebab,
      [
        `${constant}_CREATED`,
        ...(options.update ? [`${constant}_UPDATED`] : []),
        ...(stimuli.length > 0 ? [`${m.constant}_REACTED`] : []),
        ...(backfills(options) ? [`${m.constant}_BACKFILLED`] : []),
        `${pascal}Dto`,
      ],
    ],
  ]);
  for (const { event } of stimuli)
    doorImports.set(event.folder, [...(doorImports.get(event.folder) ?? []), event.constant]);
  const supportImports = new Map<string, Set<string>>([
    ['./support/auth-credentials', new Set(['apiKeyEntry'])],
    ['./support/client-encoding', new Set(['encodeForm', 'encodeXml'])],
    ['./support/http-assertions', new Set(['expectProblem'])],
    ['./support/scenario', new Set(['asJson', 'Scenario'])],
    ['./support/test-app', new Set(['describeOnEachDatabase'])],
    ['./support/xml-inspection', new Set(['inspectXml'])],
  ]);
  if (backfills(options))
    supportImports.set(
      './support/fixtures',
      new Set([
        ...(supportImports.get('./support/fixtures') ?? []),
        'CATALOGUE',
        'transactionRecord',
      ]),
    );
  for (const stimulus of stimuli)
    for (const [from, imported] of Object.entries(stimulus.imports))
      for (const name of imported)
        supportImports.set(from, (supportImports.get(from) ?? new Set()).add(name));
  const imports = [
    ...[...doorImports]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([folder, imported]) => `import { ${imported.join(', ')} } from '../src/${folder}';`),
    `import { wireModelOf } from '../src/wire';`,
    ...(backfills(options)
      ? [
          `import { BatchedReactions } from '../src/event-relay/batched-reactions';`,
          `import { ${m.pascal}Reactions } from '../src/${m.kebab}/${m.kebab}.reactions';`,
        ]
      : []),
    ...[...supportImports]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([from, imported]) => `import { ${[...imported].join(', ')} } from '${from}';`),
  ];
  const setups = [
    ...new Set(stimuli.flatMap((stimulus) => (stimulus.setup ? [stimulus.setup] : []))),
  ];
  const declarations = [
    ...new Set(stimuli.flatMap((stimulus) => (stimulus.declaration ? [stimulus.declaration] : []))),
  ];
  const stimulator =
    stimulusScopes.length > 0
      ? `\n/** A key granted what the stimuli of the other modules need. */\nconst STIMULATOR = { 'X-Api-Key': '${m.kebab}-stimulator-7d3b9e5a2c8f4061' };\n`
      : '';
  const list = !options.list
    ? ''
    : `

    it('lists them in ${key.name} order, page by page, in JSON and XML', async () => {
      for (const n of [101, 102, 103, 104, 105])
        await context.http.post('${base}/Create${pascal}').set(WRITER).send({ ...RECORD, ${key.name}: ${key.ofVariable('n')} }).expect(201);
      const keys: unknown[] = [];
      let after: unknown;
      for (;;) {
        const page = await context.http
          .get('${base}/List${names.pluralPascal}')
          .query(after === undefined ? { limit: 2 } : { limit: 2, after })
          .set(READER)
          .expect(200);
        const records = page.body as Array<Record<string, unknown>>;
        expect(records.length).toBeLessThanOrEqual(2);
        keys.push(...records.map((record) => record.${key.name}));
        if (records.length < 2) break;
        after = records.at(-1)!.${key.name};
      }
      expect(keys).toEqual([...keys].sort(${key.type === 'number' ? '(a, b) => (a as number) - (b as number)' : ''}));
      expect(keys).toEqual(expect.arrayContaining([${[101, 102, 103, 104, 105].map((n) => k(n)).join(', ')}]));
      expect(new Set(keys).size).toBe(keys.length);

      const xml = await context.http.get('${base}/List${names.pluralPascal}').set(READER).set('Accept', 'application/xml').expect(200);
      expect(xml.text).toMatch(/^<ArrayOf${pascal} /);
      expect(xml.text.match(/<${pascal}>/g)).toHaveLength(keys.length);
    });

    it('answers 400 to a page larger than the largest', async () => {
      const response = await context.http.get('${base}/List${names.pluralPascal}').query({ limit: ${PAGE.max + 1} }).set(READER);
      expect(Object.keys(expectProblem(response, 400).ModelState as object)).toEqual(['limit']);
    });`;
  const updateCall = (body: string, n: number) =>
    keyInPath(options)
      ? `context.http.put(${path(`Update${pascal}`, n)}).set(WRITER).send(${body})`
      : `context.http.post('${base}/Update${pascal}').set(WRITER).send(${body})`;
  const changes = `{ name: 'Renamed ${names.words}' }`;
  const withKey = (n: number, body: string) =>
    keyInPath(options) ? body : `{ ...${body}, ${key.name}: ${k(n)} }`;
  const missingTest = `    it('answers 404 to an update of a missing ${names.words}, 400 to an invalid one, and changes nothing', async () => {
      const missing = await ${updateCall(withKey(999999, changes), 999999)};
      expect(expectProblem(missing, 404).type).toMatch(/${names.snake}_not_found$/);
      const invalid = await ${updateCall(withKey(EXAMPLE.key, '{ amount: -1 }'), EXAMPLE.key)};
      expect(Object.keys(expectProblem(invalid, 400).ModelState as object).sort()).toEqual(['${names.camel}.amount', '${names.camel}.name']);
      expect((await context.http.get(${path(`Get${pascal}`, EXAMPLE.key)}).set(READER)).body).toEqual(RECORD);
    });`;
  const upsertTests = `    it('creates one at a new key, answering 201 with Location, and publishes ${pascal}Created with the whole record', async () => {
      let location: string | undefined;
      const created = await new Scenario(() => context.running.app)
        .stimulate(async () => {
          const response = await ${updateCall(`{ name: 'Put ${names.words}' }`, 301)}.expect(201);
          location = response.headers.location;
        })
        .andWaitForEventOfType(${constant}_CREATED)
        .matching((event) => event.subject === '${key.text(301)}')
        .toArrive();
      const stored = { ...NONE, ${key.name}: ${k(301)}, name: 'Put ${names.words}' };
      expect(asJson(created.data)).toEqual(stored);
      // Relative to the PUT's address, as HTTP allows: it names the record's GET.
      const read = new URL(location!, \`http://service${base}/Update${pascal}/${key.text(301)}\`).pathname;
      expect(read).toBe('${base}/Get${pascal}/${key.text(301)}');
      expect((await context.http.get(read).set(READER).expect(200)).body).toEqual(stored);
    });

    it('answers 400 to a key in the path no ${names.words} may have, and to an invalid body, storing nothing', async () => {
      const badKey = await context.http.put('${base}/Update${pascal}/${key.otherCase?.(302) ?? '0'}').set(WRITER).send({ name: 'Bad key' });
      expect(Object.keys(expectProblem(badKey, 400).ModelState as object)).toEqual(['${key.name}']);
      const invalid = await ${updateCall('{ amount: -1 }', 302)};
      expect(Object.keys(expectProblem(invalid, 400).ModelState as object).sort()).toEqual(['${names.camel}.amount', '${names.camel}.name']);
      await context.http.get(${path(`Get${pascal}`, 302)}).set(READER).expect(404);
    });`;
  const update = !options.update
    ? ''
    : `

    it('replaces one (an absent member becomes null), answering 204, and publishes ${pascal}Updated with the whole record', async () => {
      await context.http.post('${base}/Create${pascal}').set(WRITER).send({ ...RECORD, ${key.name}: ${k(201)} }).expect(201);
      const updated = await new Scenario(() => context.running.app)
        .stimulate(() => ${updateCall(withKey(201, changes), 201)}.expect(204))
        .andWaitForEventOfType(${constant}_UPDATED)
        .toArrive();
      const stored = { ...NONE, ${key.name}: ${k(201)}, name: 'Renamed ${names.words}' };
      expect(updated.subject).toBe('${key.text(201)}');
      expect(asJson(updated.data)).toEqual(stored);
      const read = await context.http.get(${path(`Get${pascal}`, 201)}).set(READER).expect(200);
      expect(read.body).toEqual(stored);

      // A form post, as a browser or a legacy client sends one.
      await ${updateCall('encodeForm(' + withKey(201, `{ name: 'From a form', amount: 3 }`) + ', MODEL)', 201)}.set('Content-Type', 'application/x-www-form-urlencoded').expect(204);
      expect((await context.http.get(${path(`Get${pascal}`, 201)}).set(READER)).body).toMatchObject({ name: 'From a form', amount: 3 });
    });

${options.update === 'upsert' ? upsertTests : missingTest}`;
  const reactionTests = stimuli.map(
    ({ event, stimulated, description }) => `

    it('reacts to each ${titleOf(event)} once it committed (${description}), publishing ${m.pascal}Reacted in its step', async () => {
      const stimulated = ${stimulated};
      const heard = await stimulated.andWaitForEventOfType(${event.constant}).toArrive();
      const reacted = await stimulated
        .andWaitForEventOfType(${m.constant}_REACTED)
        .matching((received) => received.data.event_id === heard.id)
        .toArrive();
      expect(reacted.data).toEqual({ event_id: heard.id, event_type: heard.type, subject: heard.subject ?? null });
    });`,
  );
  const backfillTest = !backfills(options)
    ? ''
    : `

    it('back-fills the transactions there were before it, a batch at a time, publishing ${m.pascal}Backfilled', async () => {
      await context.running.seed({ requirements: CATALOGUE, transactions: [transactionRecord(4301), transactionRecord(4302)] });
      const batches = await new Scenario(() => context.running.app)
        // It ran at the first start on this database, empty then; started again, as after a rule change.
        .stimulate(() => context.running.app.get(BatchedReactions).start(${m.pascal}Reactions, 'backfill'))
        .andWaitForEventOfType(${m.constant}_BACKFILLED)
        .toArriveUntil((events) => events.some((event) => event.data.transaction_id_to! >= 4302));
      const covered = (id: number) =>
        batches.some(({ data }) => data.transaction_id_from! <= id && id <= data.transaction_id_to!);
      expect([covered(4301), covered(4302)]).toEqual([true, true]);
    });`;
  const keys = [
    `apiKeyEntry('${m.kebab}-writer', WRITER['X-Api-Key'], ['${pluralKebab}:read', '${pluralKebab}:write'])`,
    `apiKeyEntry('${m.kebab}-reader', READER['X-Api-Key'], ['${pluralKebab}:read'])`,
    ...(stimulusScopes.length > 0
      ? [
          `apiKeyEntry('${m.kebab}-stimulator', STIMULATOR['X-Api-Key'], [${stimulusScopes.map((scope) => `'${scope}'`).join(', ')}])`,
        ]
      : []),
  ];
  const otherCase = key.otherCase
    ? `

    it('answers 404 for a code in ${options.keyCase === 'upper' ? 'lower' : 'upper'} case, on both databases (MariaDB would match it ignoring case)', async () => {
      await context.http.get('${base}/Get${pascal}/${key.otherCase(EXAMPLE.key)}').set(READER).expect(404);
    });`
    : '';
  return `${imports.join('\n')}

/** A key granted both of the module's scopes, and one granted only the read. */
const WRITER = { 'X-Api-Key': '${m.kebab}-writer-4f9c2e7a1b8d3605' };
const READER = { 'X-Api-Key': '${m.kebab}-reader-0c4a9f1735c28d2b' };${stimulator}
const RECORD = ${exampleLiteral(names, key)};
const MODEL = wireModelOf(${pascal}Dto);
/** A record in XML as the service writes it, and a client may: members in the model's XML order. */
const asXml = (record: Record<string, unknown>) =>
  encodeXml(Object.fromEntries(MODEL.xmlMembers.map(({ name }) => [name, record[name]])), MODEL);${
    options.update
      ? `
/** Every member null: what a replacement leaves of each member its body does not give. */
const NONE = Object.fromEntries(MODEL.members.map(({ name }) => [name, null]));`
      : ''
  }
${declarations.map((declaration) => `\n${declaration}\n`).join('')}
describeOnEachDatabase(
  '${m.pascal}',
  (context) => {${
    setups.length > 0
      ? `
    beforeAll(async () => {
      ${setups.join('\n      ')}
    });
`
      : ''
  }
    it('creates one from JSON, one from XML and one from a form post, answering 201 with Location, and reads each in both', async () => {
      const fromXml = { ...RECORD, ${key.name}: ${k(EXAMPLE.key + 1)} };
      const fromForm = { ...RECORD, ${key.name}: ${k(EXAMPLE.key + 4)} };
      const created = [
        await context.http.post('${base}/Create${pascal}').set(WRITER).send(RECORD).expect(201),
        await context.http
          .post('${base}/Create${pascal}')
          .set(WRITER)
          .set('Content-Type', 'application/xml')
          .send(asXml(fromXml))
          .expect(201),
        await context.http
          .post('${base}/Create${pascal}')
          .set(WRITER)
          .set('Content-Type', 'application/x-www-form-urlencoded')
          .send(encodeForm(fromForm, MODEL))
          .expect(201),
      ];
      expect(created.map((response) => response.headers.location)).toEqual([
        'Get${pascal}/${key.text(EXAMPLE.key)}',
        'Get${pascal}/${key.text(EXAMPLE.key + 1)}',
        'Get${pascal}/${key.text(EXAMPLE.key + 4)}',
      ]);

      for (const record of [RECORD, fromXml, fromForm]) {
        const path = \`${base}/Get${pascal}/\${record.${key.name}}\`;
        const json = await context.http
          .get(path)
          .set(READER)
          .set('Accept', 'application/json')
          .expect(200);
        expect(json.body).toEqual(record);
        const xml = await context.http.get(path).set(READER).set('Accept', 'application/xml');
        expect(xml.headers['content-type']).toBe('application/xml; charset=utf-8');
        // Compared as XML (names, attributes, order, text), as a client's parser reads it.
        expect(inspectXml(xml.text)).toEqual(inspectXml(asXml(record)));
      }
    });

    it('publishes ${pascal}Created with the record, once the create committed', async () => {
      const record = { ...RECORD, ${key.name}: ${k(EXAMPLE.key + 5)} };
      const created = await new Scenario(() => context.running.app)
        .stimulate(() => context.http.post('${base}/Create${pascal}').set(WRITER).send(record).expect(201))
        .andWaitForEventOfType(${constant}_CREATED)
        .toArrive();
      expect(created.subject).toBe('${key.text(EXAMPLE.key + 5)}');
      expect(asJson(created.data)).toEqual(record);
    });

    it('answers 409 to a second create with the same key', async () => {
      const response = await context.http.post('${base}/Create${pascal}').set(WRITER).send(RECORD);
      expect(expectProblem(response, 409).type).toMatch(/${names.snake}_exists$/);
    });

    it('answers 404 for a missing key', async () => {
      const response = await context.http.get(${path(`Get${pascal}`, 999999)}).set(READER);
      expect(expectProblem(response, 404).type).toMatch(/${names.snake}_not_found$/);
    });${otherCase}

    it('answers 400 naming each invalid member, and stores nothing', async () => {
      const response = await context.http
        .post('${base}/Create${pascal}')
        .set(WRITER)
        .send({ ${key.name}: ${k(EXAMPLE.key + 2)}, amount: -1 });
      const body = expectProblem(response, 400);
      expect(Object.keys(body.ModelState as object).sort()).toEqual([
        '${names.camel}.amount',
        '${names.camel}.name',
      ]);
      await context.http.get(${path(`Get${pascal}`, EXAMPLE.key + 2)}).set(READER).expect(404);
    });

    it('answers 403 to a create by a key granted only ${pluralKebab}:read', async () => {
      const response = await context.http
        .post('${base}/Create${pascal}')
        .set(READER)
        .send({ ...RECORD, ${key.name}: ${k(EXAMPLE.key + 3)} });
      expect(expectProblem(response, 403).type).toMatch(/insufficient_scope$/);
      await context.http.get(${path(`Get${pascal}`, EXAMPLE.key + 3)}).set(READER).expect(404);
    });${list}${update}${reactionTests.join('')}${backfillTest}
  },
  {
    AUTH_MODE: 'apikey',
    AUTH_API_KEYS: [
      ${keys.join(',\n      ')},
    ].join(','),
  },
);
`;
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Every file of the module, its e2e suite included. */
export function moduleFiles(
  names: Names,
  options: ModuleOptions = DEFAULT_OPTIONS,
): GeneratedFile[] {
  const { module: m, resource: r } = names;
  const folder = `src/${m.kebab}`;
  return [
    { path: `${folder}/index.ts`, text: door(names, options) },
    { path: `${folder}/${m.kebab}.module.ts`, text: moduleClass(names, options) },
    { path: `${folder}/${r.kebab}.controller.ts`, text: controller(r, options) },
    { path: `${folder}/${r.kebab}.service.ts`, text: service(names, options) },
    { path: `${folder}/${r.kebab}.errors.ts`, text: errors(r, options) },
    { path: `${folder}/${m.kebab}.events.ts`, text: events(names, options) },
    ...(options.reactsTo.length > 0
      ? [{ path: `${folder}/${m.kebab}.reactions.ts`, text: reactions(names, options) }]
      : []),
    { path: `${folder}/dto/${r.kebab}.dto.ts`, text: dto(r, options) },
    ...(options.list
      ? [{ path: `${folder}/dto/list-${r.pluralKebab}.query.ts`, text: listQuery(r, options) }]
      : []),
    { path: `${folder}/entities/${r.kebab}.entity.ts`, text: entity(r, options) },
    { path: `${folder}/entities/index.ts`, text: entities(names) },
    { path: `test/${m.kebab}.e2e-spec.ts`, text: e2eSuite(names, options) },
  ];
}
