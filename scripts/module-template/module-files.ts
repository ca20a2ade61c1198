/**
 * What `npm run generate:module -- <Name>` writes: a module in the style of src/transaction and
 * docs/adding-a-module.md, as file paths (from the repository root) and their text. Prettier formats
 * each file after; the text here only has to be valid TypeScript.
 */

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

/** One file to write: its path from the repository root and its text. */
export interface GeneratedFile {
  readonly path: string;
  readonly text: string;
}

/** The members of the generated record: its key, a name and an amount. */
function members(names: ModuleNames) {
  return {
    id: `${names.snake}_id`,
    example: { id: 7, name: `Example ${names.words}`, amount: 1250.5 },
  };
}

function dto(names: ModuleNames): string {
  const { id } = members(names);
  return `import { DecimalField, IntField, TextField, WireRecord } from '../../wire';

/** One ${names.words}, as clients read and create it. */
@WireRecord({ name: '${names.pascal}' })
export class ${names.pascal}Dto {
  @IntField({ required: true, min: 1 }) ${id}?: number | null;
  @TextField({ required: true, maxLength: 200 }) name?: string | null;
  @DecimalField({ exactMin: 0 }) amount?: number | null;
}
`;
}

function events(names: ModuleNames): string {
  const { id, example } = members(names);
  return `import { declareIntegrationEvent } from '../events/integration-event';
import { ${names.pascal}Dto } from './dto/${names.kebab}.dto';

/** A ${names.words} was created: published by the unit of work that stored it, once it committed. */
export const ${names.constant}_CREATED = declareIntegrationEvent({
  type: 'property-sales.${names.kebab}.created',
  routingKey: '${names.kebab}.created',
  payload: ${names.pascal}Dto,
  summary: 'A ${names.words} was created.',
  description: 'The ${names.words} as Create${names.pascal} stored it, once it committed.',
  subject: 'The ${id}, as text.',
  example: { ${id}: ${example.id}, name: '${example.name}', amount: ${example.amount} },
  exampleSubject: '${example.id}',
});
`;
}

function entity(names: ModuleNames): string {
  const { id } = members(names);
  return `import { Entity, PrimaryColumn } from 'typeorm';
import { WireColumns, type WireColumnsOf } from '../../database/wire-columns';
import { ${names.pascal}Dto } from '../dto/${names.kebab}.dto';

/** A stored ${names.words}: a column for every scalar member of the wire ${names.pascal}, named as on the wire. */
@Entity('${names.snake}')
@WireColumns(${names.pascal}Dto)
export class ${names.pascal}Entity {
  @PrimaryColumn({ type: 'int' }) ${id}!: number;
}

// The columns @WireColumns adds, typed for the compiler (declaration merging, allowed for entities).
export interface ${names.pascal}Entity extends WireColumnsOf<${names.pascal}Dto, '${id}'> {}
`;
}

function entities(names: ModuleNames): string {
  return `import { ${names.pascal}Entity } from './${names.kebab}.entity';

export { ${names.pascal}Entity } from './${names.kebab}.entity';

/** The tables this module owns, registered with TypeORM by the module itself. */
export const ${names.constant}_ENTITIES = [${names.pascal}Entity];
`;
}

/** The module's door: what another module may import of it (the rule modules-through-their-door). */
function door(names: ModuleNames): string {
  return `/** The ${names.words} module's door: all that another module may use of it. */
export { ${names.pascal}Module } from './${names.kebab}.module';

// The event it publishes, and the record it and the routes carry.
export { ${names.constant}_CREATED } from './${names.kebab}.events';
export { ${names.pascal}Dto } from './dto/${names.kebab}.dto';

// Its tables, for the data source (src/app.entities.ts).
export { ${names.constant}_ENTITIES } from './entities';
`;
}

function errors(names: ModuleNames): string {
  const { id } = members(names);
  return `import { DomainError } from '../common/domain-error';

export class ${names.pascal}NotFoundError extends DomainError {
  static readonly status = 404;
  static readonly description = 'No such ${names.words}.';
  static readonly example = new ${names.pascal}NotFoundError(7);
  readonly code = '${names.snake}_not_found';
  readonly title = '${names.pascal} not found';
  constructor(id: number) {
    super(\`No ${names.words} with ${id} \${id} exists.\`);
  }
}

export class ${names.pascal}ExistsError extends DomainError {
  static readonly status = 409;
  static readonly description = 'A ${names.words} with this id exists already.';
  static readonly example = new ${names.pascal}ExistsError(7);
  readonly code = '${names.snake}_exists';
  readonly title = '${names.pascal} exists';
  constructor(id: number) {
    super(\`A ${names.words} with ${id} \${id} exists already.\`);
  }
}
`;
}

function service(names: ModuleNames): string {
  const { id } = members(names);
  const { pascal } = names;
  return `import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../database/unit-of-work';
import { ${pascal}Dto } from './dto/${names.kebab}.dto';
import { ${pascal}Entity } from './entities';
import { ${pascal}ExistsError, ${pascal}NotFoundError } from './${names.kebab}.errors';
import { ${names.constant}_CREATED } from './${names.kebab}.events';

/** Reads and stores ${names.pluralWords}, through the unit of work only. */
@Injectable()
export class ${pascal}Service {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  /** The ${names.words} with this id; ${pascal}NotFoundError when there is none. */
  async find(id: number): Promise<${pascal}Entity> {
    const row = await this.unitOfWork.read((manager) =>
      manager.findOneBy(${pascal}Entity, { ${id}: id }),
    );
    if (!row) throw new ${pascal}NotFoundError(id);
    return row;
  }

  /**
   * Stores a new ${names.words}, and its ${names.constant}_CREATED event in the same transaction;
   * ${pascal}ExistsError when its id is taken (nothing stored, nothing published).
   */
  create(record: ${pascal}Dto): Promise<void> {
    return this.unitOfWork.write(async (manager, publish) => {
      // Validated: \`required\` guarantees the key by the time the DTO gets here.
      const id = record.${id}!;
      if (await manager.existsBy(${pascal}Entity, { ${id}: id })) throw new ${pascal}ExistsError(id);
      await manager.insert(${pascal}Entity, { ...record, ${id}: id });
      publish({ type: ${names.constant}_CREATED, subject: String(id), time: new Date(), data: record });
    });
  }
}
`;
}

function controller(names: ModuleNames): string {
  const { id, example } = members(names);
  const { pascal, constant, pluralConstant, pluralKebab } = names;
  return `import { Body, Controller, Get, Param, Post, Res } from '@nestjs/common';
import { ApiOperation, ApiParam } from '@nestjs/swagger';
import { type Response } from 'express';
import { AuthenticationError } from '../auth/authenticator';
import { RateLimitedError } from '../auth/rate-limit.guard';
import { declareScope, RequiresScope } from '../auth/scopes';
import { CommitOutcomeUnknownError, DatabaseUnavailableError } from '../database/database-errors';
import { Int32ParamPipe, WireCreated, WireErrors, WireRequestBody, WireResponse, WireTag } from '../wire';
import { ${pascal}Dto } from './dto/${names.kebab}.dto';
import { ${pascal}ExistsError, ${pascal}NotFoundError } from './${names.kebab}.errors';
import { ${pascal}Service } from './${names.kebab}.service';

/** Shown in the OpenAPI document under every media type. */
const ${constant}_EXAMPLE = { ${id}: ${example.id}, name: '${example.name}', amount: ${example.amount} };

/** What a caller must be granted to read ${names.pluralWords}, and to create them. */
export const ${pluralConstant}_READ = declareScope('${pluralKebab}:read', 'Read ${names.pluralWords} (Get${pascal}).');
export const ${pluralConstant}_WRITE = declareScope('${pluralKebab}:write', 'Create ${names.pluralWords} (Create${pascal}).');

@WireTag('${pascal}', '${capitalized(names.pluralWords)}: read one, create one.')
@Controller('${pascal}')
export class ${pascal}Controller {
  constructor(private readonly ${names.pluralCamel}: ${pascal}Service) {}

  @Get('Get${pascal}/:${id}')
  @ApiOperation({
    operationId: 'Get${pascal}',
    summary: 'One ${names.words}.',
    description: 'The ${names.words} with this id, or 404. The ETag serves If-None-Match (304 while current).',
  })
  @ApiParam({ name: '${id}', type: 'integer', format: 'int32', example: ${example.id} })
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
  get${pascal}(@Param('${id}', Int32ParamPipe) id: number): Promise<${pascal}Dto> {
    return this.${names.pluralCamel}.find(id);
  }

  @Post('Create${pascal}')
  @ApiOperation({
    operationId: 'Create${pascal}',
    summary: 'Creates a ${names.words}.',
    description: 'Stores the ${names.words} under the id it carries (409 if taken); Location says where to read it.',
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
    response.location(\`Get${pascal}/\${record.${id}}\`);
  }
}
`;
}

function moduleClass(names: ModuleNames): string {
  const { pascal } = names;
  return `import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ${names.constant}_ENTITIES } from './entities';
import { ${pascal}Controller } from './${names.kebab}.controller';
import { ${pascal}Service } from './${names.kebab}.service';

/** ${capitalized(names.pluralWords)}: their table, routes and service; registered in src/app.module.ts. */
@Module({
  imports: [TypeOrmModule.forFeature(${names.constant}_ENTITIES)],
  controllers: [${pascal}Controller],
  providers: [${pascal}Service],
})
export class ${pascal}Module {}
`;
}

function e2eSuite(names: ModuleNames): string {
  const { id, example } = members(names);
  const { pascal, pluralKebab } = names;
  const base = `/api/${pascal}`;
  return `import { ${pascal}Dto } from '../src/${names.kebab}';
import { wireModelOf } from '../src/wire';
import { apiKeyEntry } from './support/auth-credentials';
import { encodeForm, encodeXml } from './support/client-encoding';
import { expectProblem } from './support/http-assertions';
import { describeOnEachDatabase } from './support/test-app';

/** A key granted both of the module's scopes, and one granted only the read. */
const WRITER = { 'X-Api-Key': '${names.kebab}-writer-4f9c2e7a1b8d3605' };
const READER = { 'X-Api-Key': '${names.kebab}-reader-0c4a9f1735c28d2b' };

const RECORD = { ${id}: ${example.id}, name: '${example.name}', amount: ${example.amount} };
const MODEL = wireModelOf(${pascal}Dto);
/** A record in XML as the service writes it, and a client may: members in the model's XML order. */
const asXml = (record: Record<string, unknown>) =>
  encodeXml(Object.fromEntries(MODEL.xmlMembers.map(({ name }) => [name, record[name]])), MODEL);

describeOnEachDatabase(
  '${pascal}',
  (context) => {
    it('creates one from JSON, one from XML and one from a form post, answering 201 with Location, and reads each in both', async () => {
      const fromXml = { ...RECORD, ${id}: ${example.id + 1} };
      const fromForm = { ...RECORD, ${id}: ${example.id + 4} };
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
        'Get${pascal}/${example.id}',
        'Get${pascal}/${example.id + 1}',
        'Get${pascal}/${example.id + 4}',
      ]);

      for (const record of [RECORD, fromXml, fromForm]) {
        const path = \`${base}/Get${pascal}/\${record.${id}}\`;
        const json = await context.http
          .get(path)
          .set(READER)
          .set('Accept', 'application/json')
          .expect(200);
        expect(json.body).toEqual(record);
        const xml = await context.http.get(path).set(READER).set('Accept', 'application/xml');
        expect(xml.headers['content-type']).toBe('application/xml; charset=utf-8');
        expect(xml.text).toBe(asXml(record));
      }
    });

    it('answers 409 to a second create with the same id', async () => {
      const response = await context.http.post('${base}/Create${pascal}').set(WRITER).send(RECORD);
      expect(expectProblem(response, 409).type).toMatch(/${names.snake}_exists$/);
    });

    it('answers 404 for a missing id', async () => {
      const response = await context.http.get('${base}/Get${pascal}/999999').set(READER);
      expect(expectProblem(response, 404).type).toMatch(/${names.snake}_not_found$/);
    });

    it('answers 400 naming each invalid member, and stores nothing', async () => {
      const response = await context.http
        .post('${base}/Create${pascal}')
        .set(WRITER)
        .send({ ${id}: ${example.id + 2}, amount: -1 });
      const body = expectProblem(response, 400);
      expect(Object.keys(body.ModelState as object).sort()).toEqual([
        '${names.camel}.amount',
        '${names.camel}.name',
      ]);
      await context.http.get('${base}/Get${pascal}/${example.id + 2}').set(READER).expect(404);
    });

    it('answers 403 to a create by a key granted only ${pluralKebab}:read', async () => {
      const response = await context.http
        .post('${base}/Create${pascal}')
        .set(READER)
        .send({ ...RECORD, ${id}: ${example.id + 3} });
      expect(expectProblem(response, 403).type).toMatch(/insufficient_scope$/);
      await context.http.get('${base}/Get${pascal}/${example.id + 3}').set(READER).expect(404);
    });
  },
  {
    AUTH_MODE: 'apikey',
    AUTH_API_KEYS: [
      apiKeyEntry('${names.kebab}-writer', WRITER['X-Api-Key'], ['${pluralKebab}:read', '${pluralKebab}:write']),
      apiKeyEntry('${names.kebab}-reader', READER['X-Api-Key'], ['${pluralKebab}:read']),
    ].join(','),
  },
);
`;
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Every file of the module, its e2e suite included. */
export function moduleFiles(names: ModuleNames): GeneratedFile[] {
  const folder = `src/${names.kebab}`;
  return [
    { path: `${folder}/index.ts`, text: door(names) },
    { path: `${folder}/${names.kebab}.module.ts`, text: moduleClass(names) },
    { path: `${folder}/${names.kebab}.controller.ts`, text: controller(names) },
    { path: `${folder}/${names.kebab}.service.ts`, text: service(names) },
    { path: `${folder}/${names.kebab}.errors.ts`, text: errors(names) },
    { path: `${folder}/${names.kebab}.events.ts`, text: events(names) },
    { path: `${folder}/dto/${names.kebab}.dto.ts`, text: dto(names) },
    { path: `${folder}/entities/${names.kebab}.entity.ts`, text: entity(names) },
    { path: `${folder}/entities/index.ts`, text: entities(names) },
    { path: `test/${names.kebab}.e2e-spec.ts`, text: e2eSuite(names) },
  ];
}
