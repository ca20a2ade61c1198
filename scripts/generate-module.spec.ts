import {
  addImport,
  addToArray,
  GeneratorError,
  moduleNames,
  registerEntities,
  registerMigration,
  registerModule,
} from './generate-module';

describe('generate:module', () => {
  it('spells a PascalCase name for files, tables, constants and scopes', () => {
    expect(moduleNames('Commission')).toEqual({
      pascal: 'Commission',
      camel: 'commission',
      kebab: 'commission',
      snake: 'commission',
      constant: 'COMMISSION',
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

export class AppModule {
  static forRoot(modules = []) {
    return {
      imports: [
        AuthModule.forRoot(config),
        DataImportModule,
        ...modules,
      ],
      providers: [DemoDataLoader],
    };
  }
}
`;

  it('registers the module among the imports, before the modules a test mounts', () => {
    const registered = registerModule(APP_MODULE, moduleNames('Commission'));
    expect(registered).toContain(
      "import { AuthModule } from './auth/auth.module';\n" +
        "import { CommissionModule } from './commission';\n" +
        "import { DataImportModule } from './data-import';\n",
    );
    expect(registered).toContain('DataImportModule,\n        CommissionModule, ...modules,');
    expect(registered).toContain('providers: [DemoDataLoader]');
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
});
