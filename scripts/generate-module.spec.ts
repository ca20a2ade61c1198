import { DATA_IMPORTED } from '../src/data-import';
import { AGENTS_CHANGED } from '../src/transaction';
import { type DoorEvent } from './doors';
import {
  addImport,
  addToArray,
  declarationsOf,
  GeneratorError,
  moduleNames,
  namesOf,
  parseCommand,
  refuseClashes,
  registerEntities,
  registerMigration,
  registerModule,
  resolveReactions,
} from './generate-module';
import { DEFAULT_OPTIONS, moduleFiles, type ModuleOptions } from './module-template/module-files';
import { stimulusOf } from './module-template/stimuli';

describe('generate:module', () => {
  it('spells a PascalCase name for files, tables, constants and scopes', () => {
    expect(moduleNames('Commission')).toEqual({
      pascal: 'Commission',
      camel: 'commission',
      kebab: 'commission',
      snake: 'commission',
      constant: 'COMMISSION',
      pluralPascal: 'Commissions',
      pluralCamel: 'commissions',
      pluralKebab: 'commissions',
      pluralConstant: 'COMMISSIONS',
      pluralWords: 'commissions',
      words: 'commission',
    });
    expect(moduleNames('SalesTarget')).toMatchObject({
      camel: 'salesTarget',
      kebab: 'sales-target',
      snake: 'sales_target',
      pluralKebab: 'sales-targets',
      pluralPascal: 'SalesTargets',
      pluralCamel: 'salesTargets',
    });
    expect(moduleNames('PropertyAddress').pluralKebab).toBe('property-addresses');
    expect(moduleNames('Agency').pluralKebab).toBe('agencies');
    expect(moduleNames('Survey2').snake).toBe('survey2');
  });

  it.each(['commission', 'XMLFeed', 'Sales_Target', 'Sales-Target', '2Fast', 'A', '', 'Café'])(
    'refuses %j, saying what a name must be',
    (name) => {
      expect(() => moduleNames(name)).toThrow(GeneratorError);
      expect(() => moduleNames(name)).toThrow(/PascalCase/);
    },
  );

  it('refuses a name that would declare a reserved word, and one too long', () => {
    expect(() => moduleNames('Delete')).toThrow(/reserved word/);
    expect(() => moduleNames(`Long${'name'.repeat(10)}`)).toThrow(/longer than 40/);
  });

  const APP_MODULE = `import { Module } from '@nestjs/common';
import { AuthModule } from './auth/auth.module';
import { DataImportModule } from './data-import';

export const FEATURE_MODULES = [
  DataImportModule,
] as const;

export class AppModule {
  static forRoot(modules = [], features = [...FEATURE_MODULES]) {
    return {
      imports: [AuthModule.forRoot(config), ...features, ...modules],
    };
  }
}
`;

  it('registers the module last among the feature modules', () => {
    const registered = registerModule(APP_MODULE, moduleNames('Commission'));
    expect(registered).toContain(
      "import { AuthModule } from './auth/auth.module';\n" +
        "import { CommissionModule } from './commission';\n" +
        "import { DataImportModule } from './data-import';\n",
    );
    expect(registered).toContain('DataImportModule, CommissionModule,\n] as const;');
    expect(registered).toContain('imports: [AuthModule.forRoot(config), ...features, ...modules]');
    expect(() => registerModule(registered, moduleNames('Commission'))).toThrow(/already/);
  });

  it('registers the entities, and the migrations last in their list', () => {
    const entities = registerEntities(
      "import { EVENT_ENTITIES } from './events/entities';\n\nexport const APP_ENTITIES = [...EVENT_ENTITIES];\n",
      moduleNames('Commission'),
    );
    expect(entities).toBe(
      "import { COMMISSION_ENTITIES } from './commission';\n" +
        "import { EVENT_ENTITIES } from './events/entities';\n\n" +
        'export const APP_ENTITIES = [...EVENT_ENTITIES, ...COMMISSION_ENTITIES];\n',
    );
    const index = registerMigration(
      "import { Initial1 } from './1-Initial';\n\nexport const SQLITE_MIGRATIONS = [\n  Initial1,\n];\n",
      '2-AddCommission',
    );
    expect(index).toBe(
      "import { Initial1 } from './1-Initial';\nimport { AddCommission2 } from './2-AddCommission';\n\n" +
        'export const SQLITE_MIGRATIONS = [\n  Initial1, AddCommission2,\n];\n',
    );
  });

  it('refuses a file whose shape it does not know, rather than guess', () => {
    expect(() => addToArray('const x = 1;\n', 'export const APP_ENTITIES = [', 'X')).toThrow(
      /No `export const APP_ENTITIES = \[`/,
    );
    expect(() => addImport("import { A } from './a';\n", 'A', './a')).toThrow(/already/);
    expect(() => registerMigration('export const X = [];\n', 'AddCommission')).toThrow(/timestamp/);
  });

  it('reads its options, each defaulted, and --reacts-to as often as given', () => {
    expect(parseCommand(['Commission'])).toEqual({
      name: 'Commission',
      options: { list: false, update: undefined, key: 'int', keyCase: 'upper' },
      reactsTo: [],
    });
    expect(
      parseCommand([
        '--list',
        'Commission',
        '--update',
        'upsert',
        '--key=text',
        '--key-case',
        'lower',
        '--reacts-to',
        'transaction.agents-changed',
        '--reacts-to',
        'data.imported',
      ]),
    ).toEqual({
      name: 'Commission',
      options: { list: true, update: 'upsert', key: 'text', keyCase: 'lower' },
      reactsTo: ['transaction.agents-changed', 'data.imported'],
    });
  });

  it.each([
    [[], /Usage/],
    [['A1', 'B1'], /Usage/],
    [['Commission', '--update', 'patch'], /--update takes put, post or upsert, not "patch"/],
    [['Commission', '--key', 'uuid'], /--key takes int or text, not "uuid"/],
    [['Commission', '--key', 'text', '--key-case', 'mixed'], /--key-case takes upper or lower/],
    [['Commission', '--key-case', 'lower'], /give it with --key text/],
    [['Commission', '--paged'], /Unknown option '--paged'[\s\S]*Usage/],
    [['Commission', '--reacts-to', 'a.b', '--reacts-to', 'a.b'], /--reacts-to a.b is given twice/],
  ])('refuses the arguments %j, saying why', (args, message) => {
    expect(() => parseCommand(args)).toThrow(GeneratorError);
    expect(() => parseCommand(args)).toThrow(message);
  });

  const DOOR_EVENTS: DoorEvent[] = [
    {
      folder: 'transaction',
      constant: 'AGENTS_CHANGED',
      event: AGENTS_CHANGED,
      payload: 'AgentsChangedDto',
    },
    { folder: 'data-import', constant: 'DATA_IMPORTED', event: DATA_IMPORTED },
  ];

  it('finds an event by its routing key or CloudEvents type, with its door and payload', () => {
    const expected = {
      folder: 'transaction',
      constant: 'AGENTS_CHANGED',
      payload: 'AgentsChangedDto',
      routingKey: 'transaction.agents-changed',
    };
    expect(resolveReactions(['transaction.agents-changed'], DOOR_EVENTS)).toEqual([expected]);
    expect(resolveReactions(['property-sales.transaction.agents-changed'], DOOR_EVENTS)).toEqual([
      expected,
    ]);
  });

  it('refuses an event no door exports, naming those they do, and one whose payload its door keeps', () => {
    expect(() => resolveReactions(['transaction.deleted'], DOOR_EVENTS)).toThrow(
      "No module's door exports an event transaction.deleted. The doors export: " +
        'transaction.agents-changed (src/transaction), data.imported (src/data-import).',
    );
    expect(() => resolveReactions(['data.imported'], DOOR_EVENTS)).toThrow(
      'src/data-import/index.ts exports DATA_IMPORTED but not its payload class DataImportedDto',
    );
    // Another door's DATA_IMPORTED under the name the transaction door gives its own event.
    const twice: DoorEvent[] = [
      { folder: 'other', constant: 'AGENTS_CHANGED', event: DATA_IMPORTED, payload: 'X' },
      ...DOOR_EVENTS,
    ];
    expect(() => resolveReactions(['transaction.agents-changed', 'data.imported'], twice)).toThrow(
      /exported as AGENTS_CHANGED/,
    );
  });

  /** The generated files of a module, by path. */
  const filesOf = (options: Partial<ModuleOptions>) =>
    new Map(
      moduleFiles(namesOf({ name: 'SalesTarget' }), { ...DEFAULT_OPTIONS, ...options }).map(
        (file) => [file.path, file.text],
      ),
    );

  it('writes the files each option needs, and no other', () => {
    const base = [
      'src/sales-target/index.ts',
      'src/sales-target/sales-target.module.ts',
      'src/sales-target/sales-target.controller.ts',
      'src/sales-target/sales-target.service.ts',
      'src/sales-target/sales-target.errors.ts',
      'src/sales-target/sales-target.events.ts',
      'src/sales-target/dto/sales-target.dto.ts',
      'src/sales-target/entities/sales-target.entity.ts',
      'src/sales-target/entities/index.ts',
      'test/sales-target.e2e-spec.ts',
    ];
    expect([...filesOf({}).keys()].sort()).toEqual([...base].sort());
    const reactsTo = [
      {
        folder: 'transaction',
        constant: 'AGENTS_CHANGED',
        payload: 'AgentsChangedDto',
        routingKey: 'transaction.agents-changed',
      },
    ];
    expect([...filesOf({ list: true, reactsTo }).keys()].sort()).toEqual(
      [
        ...base,
        'src/sales-target/dto/list-sales-targets.query.ts',
        'src/sales-target/sales-target.reactions.ts',
      ].sort(),
    );
  });

  it('names the record, its table, routes, scopes and events after --resource, and the module after its name', () => {
    expect(parseCommand(['Commission', '--resource', 'CommissionSplit']).resource).toBe(
      'CommissionSplit',
    );
    expect(() => namesOf({ name: 'Commission', resource: 'commission_split' })).toThrow(
      /"commission_split" is not a module name in PascalCase/,
    );
    const files = new Map(
      moduleFiles(namesOf({ name: 'Commission', resource: 'CommissionSplit' }), {
        ...DEFAULT_OPTIONS,
        list: true,
        update: 'put',
        reactsTo: [
          {
            folder: 'transaction',
            constant: 'AGENTS_CHANGED',
            payload: 'AgentsChangedDto',
            routingKey: 'transaction.agents-changed',
          },
        ],
      }).map((file) => [file.path, file.text]),
    );
    expect([...files.keys()].sort()).toEqual([
      'src/commission/commission-split.controller.ts',
      'src/commission/commission-split.errors.ts',
      'src/commission/commission-split.service.ts',
      'src/commission/commission.events.ts',
      'src/commission/commission.module.ts',
      'src/commission/commission.reactions.ts',
      'src/commission/dto/commission-split.dto.ts',
      'src/commission/dto/list-commission-splits.query.ts',
      'src/commission/entities/commission-split.entity.ts',
      'src/commission/entities/index.ts',
      'src/commission/index.ts',
      'test/commission.e2e-spec.ts',
    ]);
    const file = (path: string) => files.get(`src/commission/${path}`)!;
    expect(file('dto/commission-split.dto.ts')).toContain(
      "@WireRecord({ name: 'CommissionSplit' })\nexport class CommissionSplitDto extends CommissionSplitChangesDto {\n  @IntField({ required: true, min: 1 }) commission_split_id?: number | null;",
    );
    expect(file('entities/commission-split.entity.ts')).toContain(
      "@Entity('commission_split')\n@WireColumns(CommissionSplitDto)\nexport class CommissionSplitEntity {",
    );
    expect(file('entities/index.ts')).toContain(
      'export const COMMISSION_ENTITIES = [CommissionSplitEntity];',
    );
    const controller = file('commission-split.controller.ts');
    expect(controller).toContain("@Controller('CommissionSplit')");
    for (const operation of [
      "operationId: 'GetCommissionSplit'",
      "operationId: 'ListCommissionSplits'",
      "operationId: 'CreateCommissionSplit'",
      "@Put('UpdateCommissionSplit/:commission_split_id')",
      "declareScope('commission-splits:read'",
      "declareScope('commission-splits:write'",
    ])
      expect(controller).toContain(operation);
    const events = file('commission.events.ts');
    expect(events).toContain("routingKey: 'commission-split.created'");
    expect(events).toContain("routingKey: 'commission-split.updated'");
    expect(events).toContain("routingKey: 'commission.reacted'");
    expect(file('commission.module.ts')).toContain(
      '@Publishes(COMMISSION_SPLIT_CREATED, COMMISSION_SPLIT_UPDATED, COMMISSION_REACTED, COMMISSION_BACKFILLED)',
    );
    expect(file('commission.module.ts')).toContain(
      'controllers: [CommissionSplitController],\n  providers: [CommissionSplitService, CommissionReactions],\n})\nexport class CommissionModule {}',
    );
    expect(file('index.ts')).toContain(
      "export { CommissionSplitDto, CommissionSplitChangesDto } from './dto/commission-split.dto';",
    );
    expect(file('commission-split.errors.ts')).toContain(
      "readonly code = 'commission_split_not_found';",
    );
    const suite = files.get('test/commission.e2e-spec.ts')!;
    expect(suite).toContain("context.http.post('/api/CommissionSplit/CreateCommissionSplit')");
    expect(suite).toContain("'commission-splits:read', 'commission-splits:write'");
    expect(suite).toContain('.andWaitForEventOfType(COMMISSION_REACTED)');
  });

  it('reads the tables, wire schemas, event types and routing keys a source declares', () => {
    expect(
      declarationsOf(
        "@Entity('sales_target')\n" +
          'const TABLE = `CREATE TABLE IF NOT EXISTS fixture_split (id INT)`;\n' +
          "@WireRecord({ name: 'SalesTarget' })\n" +
          "@WireRecord({ name: 'SalesTarget', schemaName: 'SalesTargetChanges' })\n" +
          "@PrimaryColumn({ type: 'varchar' })\n" +
          "declareIntegrationEvent({ type: 'property-sales.sales-target.created', routingKey: 'sales-target.created' })",
      ),
    ).toEqual([
      "the table 'sales_target'",
      "the table 'fixture_split'",
      "the wire schema 'SalesTarget'",
      "the wire schema 'SalesTargetChanges'",
      "the event type 'property-sales.sales-target.created'",
      "the routing key 'sales-target.created'",
    ]);
  });

  it.each([
    [
      "@Entity('sales_target')",
      "src/sales-target/entities/sales-target.entity.ts would declare the table 'sales_target'",
    ],
    [
      'CREATE TABLE IF NOT EXISTS sales_target (id INT)',
      "src/sales-target/entities/sales-target.entity.ts would declare the table 'sales_target'",
    ],
    [
      "@WireRecord({ name: 'Target', schemaName: 'SalesTarget' })",
      "src/sales-target/dto/sales-target.dto.ts would declare the wire schema 'SalesTarget'",
    ],
    [
      "declareIntegrationEvent({ type: 'property-sales.sales-target.created' })",
      "src/sales-target/sales-target.events.ts would declare the event type 'property-sales.sales-target.created'",
    ],
  ])(
    'refuses a module declaring what a module or fixture declares already, naming both: %s',
    (declared, message) => {
      const files = moduleFiles(namesOf({ name: 'SalesTarget' }), DEFAULT_OPTIONS);
      const fixture = 'test/support/targets/targets.ts';
      expect(() =>
        refuseClashes(files, [
          ['src/other/other.ts', 'nothing'],
          [fixture, declared],
        ]),
      ).toThrow(`${message}, which ${fixture} declares already: choose another name.`);
      expect(() => refuseClashes(files, [['src/other/other.ts', 'nothing']])).not.toThrow();
    },
  );

  it('declares the events it publishes on the module, for the AsyncAPI document and the module map', () => {
    const published = (options: Partial<ModuleOptions>) =>
      /@Publishes\(([^)]*)\)/.exec(
        filesOf(options).get('src/sales-target/sales-target.module.ts')!,
      )![1];
    expect(published({})).toBe('SALES_TARGET_CREATED');
    expect(
      published({
        update: 'post',
        reactsTo: [
          {
            folder: 'data-import',
            constant: 'DATA_IMPORTED',
            payload: 'DataImportedDto',
            routingKey: 'data.imported',
          },
        ],
      }),
    ).toBe(
      'SALES_TARGET_CREATED, SALES_TARGET_UPDATED, SALES_TARGET_REACTED, SALES_TARGET_BACKFILLED',
    );
  });

  it('routes the update as asked: PUT with the key in the path, or POST with the key in the body', () => {
    const controller = (options: Partial<ModuleOptions>) =>
      filesOf(options).get('src/sales-target/sales-target.controller.ts')!;
    expect(controller({ update: 'put' })).toContain(
      "@Put('UpdateSalesTarget/:sales_target_id')\n  @HttpCode(204)",
    );
    expect(controller({ update: 'post', key: 'text' })).toContain(
      "@Post('UpdateSalesTarget')\n  @HttpCode(204)",
    );
    expect(controller({ key: 'text' })).toContain("@Get('GetSalesTarget/:sales_target_code')");
    expect(controller({})).not.toContain('UpdateSalesTarget');
    // A key the update stores is held to the record's rules for it.
    expect(controller({ update: 'put', key: 'text' })).toContain(
      "@Param('sales_target_code', new WireParamPipe(SalesTargetDto)) key: string",
    );
  });

  it('keys a record by codes of the case asked, both databases comparing them alike', () => {
    const dto = (keyCase: 'upper' | 'lower') =>
      filesOf({ key: 'text', keyCase }).get('src/sales-target/dto/sales-target.dto.ts')!;
    expect(dto('upper')).toContain(
      'export const SALES_TARGET_CODE = /^[A-Z0-9]+(?:-[A-Z0-9]+)*$/;',
    );
    expect(dto('lower')).toContain(
      'export const SALES_TARGET_CODE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;',
    );
    const suite = filesOf({ key: 'text', keyCase: 'lower', list: true }).get(
      'test/sales-target.e2e-spec.ts',
    )!;
    expect(suite).toContain("const RECORD = { sales_target_code: 'ex-7',");
    expect(suite).toContain('sales_target_code: `ex-${n}`');
    expect(suite).toContain("it('answers 404 for a code in upper case");
    expect(suite).toContain("context.http.get('/api/SalesTarget/GetSalesTarget/EX-7')");
  });

  it('creates or replaces with --update upsert: a PUT answering 201 with Location when it created, 204 when it replaced', () => {
    const files = filesOf({ update: 'upsert' });
    const controller = files.get('src/sales-target/sales-target.controller.ts')!;
    expect(controller).toContain("@Put('UpdateSalesTarget/:sales_target_id')\n  @ApiOperation({");
    expect(controller).toContain(
      "@WireCreated({ description: 'Created; Location is its GetSalesTarget address.', replaced: 'Replaced.' })",
    );
    expect(controller).toContain(
      'if (await this.salesTargets.upsert(key, changes))\n      response.status(201).location(`../GetSalesTarget/${key}`);',
    );
    expect(controller).not.toContain('SalesTargetNotFoundError,\n    413');
    const service = files.get('src/sales-target/sales-target.service.ts')!;
    expect(service).toContain(
      'upsert(key: number, changes: SalesTargetChangesDto): Promise<boolean> {',
    );
    expect(service).toContain('type: stored ? SALES_TARGET_UPDATED : SALES_TARGET_CREATED,');
    expect(files.get('src/sales-target/dto/sales-target.dto.ts')).toContain(
      'export class SalesTargetChangesDto {',
    );
    const suite = files.get('test/sales-target.e2e-spec.ts')!;
    expect(suite).toContain("it('creates one at a new key, answering 201 with Location");
    expect(suite).toContain("context.http.put('/api/SalesTarget/UpdateSalesTarget/0')");
    expect(suite).not.toContain('answers 404 to an update of a missing');
  });

  it('back-fills the transactions there were before a module that reacts to their changes, and no other rows', () => {
    const reacting = (folder: string, constant: string) =>
      filesOf({
        reactsTo: [{ folder, constant, payload: 'XDto', routingKey: `${folder}.x` }],
      });
    for (const folder of ['transaction', 'data-import']) {
      const files = reacting(folder, 'X_HAPPENED');
      const reactions = files.get('src/sales-target/sales-target.reactions.ts')!;
      expect(reactions).toContain(
        'constructor(private readonly transactions: TransactionQueries) {}',
      );
      expect(reactions).toContain(
        '@BatchedReaction({ backfill: true })\n  async backfill({ after, until, limit, publish }: ReactionBatch)',
      );
      expect(reactions).toContain('await this.transactions.idsAfter(after, limit, until);');
      expect(files.get('src/sales-target/sales-target.module.ts')).toContain(
        'imports: [TypeOrmModule.forFeature(SALES_TARGET_ENTITIES), TransactionModule],',
      );
      expect(files.get('src/sales-target/sales-target.events.ts')).toContain(
        "routingKey: 'sales-target.backfilled',",
      );
      expect(files.get('test/sales-target.e2e-spec.ts')).toContain(
        ".stimulate(() => context.running.app.get(BatchedReactions).start(SalesTargetReactions, 'backfill'))",
      );
    }
    const other = reacting('branch-office', 'BRANCH_OFFICE_UPDATED');
    expect(other.get('src/sales-target/sales-target.reactions.ts')).not.toContain('backfill');
    expect(other.get('src/sales-target/sales-target.module.ts')).not.toContain('TransactionModule');
  });

  it("stimulates the service's events through their modules, and any other as its module would publish it", () => {
    const reacted = (routingKey: string) => ({
      folder: 'x',
      constant: 'X_HAPPENED',
      payload: 'XDto',
      routingKey,
    });
    expect(stimulusOf(reacted('transaction.agents-changed')).stimulated).toContain(
      "post('/api/Transaction/UpdateAgents')",
    );
    expect(stimulusOf(reacted('transaction.agents-changed')).scopes).toEqual([
      'transactions:write',
    ]);
    expect(stimulusOf(reacted('data.imported')).stimulated).toContain('context.running.seed(');
    expect(stimulusOf(reacted('x.happened')).stimulated).toBe(
      'new Scenario(() => context.running.app).publish(X_HAPPENED)',
    );
    // Every event the service's modules publish is stimulated through its module.
    for (const { routingKey } of [AGENTS_CHANGED, DATA_IMPORTED])
      expect(stimulusOf(reacted(routingKey)).stimulated).not.toContain('.publish(');
  });
});
