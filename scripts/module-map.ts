import { type INestApplicationContext } from '@nestjs/common';
import { MetadataScanner, ModulesContainer } from '@nestjs/core';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { getMetadataArgsStorage } from 'typeorm';
import ts from 'typescript';
import { BATCHED_REACTION, type BatchedReactionOptions } from '../src/events/batched-reaction';
import { EVENT_HANDLER, type EventHandlerMetadata } from '../src/events/event-handler.decorator';
import {
  declaredIntegrationEvents,
  type IntegrationEventType,
} from '../src/events/integration-event';
import { eventsPublishedBy } from '../src/events/module-events';
import { declaredWireModels, wireModelOf } from '../src/wire';
import { type DoorExports, doorEvents, featureFolders, loadDoors } from './doors';

/**
 * The module map (`npm run modules`, docs/modules.md): the feature modules, what each door exports,
 * who imports whose door, and the integration events each module publishes (@Publishes) and handles
 * (@OnIntegrationEvent, @OnIntegrationEventBatch, @BatchedReaction), drawn from the code as a Spring
 * Modulith module's documentation is: the modules from the application's Nest container, the doors
 * and the imports of them from the sources.
 */

/** What a door exports, by kind, in the order the page lists them. */
const KINDS = [
  'Module',
  'Queries',
  'Events',
  'Records',
  'Tables',
  'Providers',
  'Values',
  'Types',
] as const;
type Kind = (typeof KINDS)[number];

/** One handler of a module's provider. */
export interface MappedHandler {
  /** `TestLedger.agentsChanged`. */
  readonly name: string;
  /** The event it handles; undefined for a batched reaction. */
  readonly event?: IntegrationEventType;
  /** `after commit`, `after commit, in batches`, `in the publishing transaction`, or a reaction's. */
  readonly how: string;
}

export interface MappedModule {
  /** The door's folder, or the module class's name for a module without a door (a test's own). */
  readonly name: string;
  readonly className: string;
  /** What its door exports, by kind; undefined for a module without a door. */
  readonly door?: ReadonlyMap<Kind, readonly string[]>;
  readonly publishes: readonly IntegrationEventType[];
  readonly handlers: readonly MappedHandler[];
  /** The doors its files import, with the names they import of each. */
  readonly uses: ReadonlyMap<string, readonly string[]>;
}

export interface ModuleMap {
  readonly modules: readonly MappedModule[];
  /** The name each event has in the door that exports it (`AGENTS_CHANGED`). */
  readonly eventNames: ReadonlyMap<IntegrationEventType, string>;
}

/** The TypeScript files of a folder, but specs. */
function sourcesOf(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /(?<!\.spec)\.ts$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** The import and re-export declarations of a source: module specifier and names (`type X` marked). */
function declarationsOf(file: string): Array<{ from: string; names: string[] }> {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const found: Array<{ from: string; names: string[] }> = [];
  for (const statement of source.statements) {
    if (
      (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) ||
      !statement.moduleSpecifier ||
      !ts.isStringLiteral(statement.moduleSpecifier)
    )
      continue;
    const bindings = ts.isImportDeclaration(statement)
      ? statement.importClause?.namedBindings
      : statement.exportClause;
    const names =
      bindings && (ts.isNamedImports(bindings) || ts.isNamedExports(bindings))
        ? bindings.elements.map((element) => element.name.text)
        : ['*'];
    found.push({ from: statement.moduleSpecifier.text, names });
  }
  return found;
}

/** The feature folder a relative import from `file` reaches through its door, if it does. */
function doorReached(root: string, file: string, from: string, folders: ReadonlySet<string>) {
  if (!from.startsWith('.')) return undefined;
  const target = relative(join(root, 'src'), resolve(dirname(file), from)).replace(/\/index$/, '');
  return folders.has(target) ? target : undefined;
}

/** Each feature module's uses of other modules' doors: importing folder → door → names. */
function doorUses(root: string, folders: readonly string[]) {
  const known = new Set(folders);
  const uses = new Map<string, Map<string, Set<string>>>();
  for (const folder of folders) {
    const byDoor = new Map<string, Set<string>>();
    for (const file of sourcesOf(join(root, 'src', folder)))
      for (const { from, names } of declarationsOf(file)) {
        const door = doorReached(root, file, from, known);
        if (door === undefined || door === folder) continue;
        const used = byDoor.get(door) ?? new Set<string>();
        for (const name of names) used.add(name);
        byDoor.set(door, used);
      }
    uses.set(folder, byDoor);
  }
  return uses;
}

/** The kind of one name a door exports: `value` is undefined for a name types alone carry. */
function kindOf(value: unknown, exported: ReadonlySet<unknown>): Kind {
  if (value === undefined) return 'Types';
  if (declaredIntegrationEvents().includes(value as IntegrationEventType)) return 'Events';
  if (typeof value === 'function') {
    if (Reflect.hasMetadata('imports', value) || Reflect.hasMetadata('providers', value))
      return 'Module';
    if (exported.has(value)) return 'Queries';
    if (declaredWireModels().some((model) => model.type === value)) return 'Records';
    if (getMetadataArgsStorage().tables.some((table) => table.target === value)) return 'Tables';
    if (Reflect.hasMetadata('__injectable__', value)) return 'Providers';
  }
  const isEntity = (item: unknown) =>
    getMetadataArgsStorage().tables.some((table) => table.target === item);
  if (Array.isArray(value) && value.length > 0 && value.every(isEntity)) return 'Tables';
  return 'Values';
}

/** What a door exports, by kind: the names its index.ts exports, whether values or types. */
function doorOf(
  root: string,
  folder: string,
  exports: DoorExports,
  moduleExports: ReadonlySet<unknown>,
): Map<Kind, string[]> {
  const byKind = new Map<Kind, string[]>();
  const names = declarationsOf(join(root, 'src', folder, 'index.ts')).flatMap(({ names }) => names);
  for (const name of names) {
    const kind = kindOf(exports[name], moduleExports);
    byKind.set(kind, [...(byKind.get(kind) ?? []), name]);
  }
  return byKind;
}

/** The handlers and batched reactions of a module's own providers. */
function handlersOf(providers: readonly object[]): MappedHandler[] {
  const scanner = new MetadataScanner();
  const handlers: MappedHandler[] = [];
  for (const instance of providers) {
    const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
    for (const method of scanner.getAllMethodNames(prototype)) {
      const name = `${instance.constructor.name}.${method}`;
      const handler = Reflect.getMetadata(EVENT_HANDLER, prototype[method] as object) as
        EventHandlerMetadata | undefined;
      if (handler)
        handlers.push({
          name,
          event: handler.type,
          how:
            handler.phase === 'in-transaction'
              ? 'in the publishing transaction'
              : handler.batch
                ? 'after commit, in batches'
                : 'after commit',
        });
      const reaction = Reflect.getMetadata(BATCHED_REACTION, prototype[method] as object) as
        BatchedReactionOptions | undefined;
      if (reaction)
        handlers.push({
          name,
          how:
            `batched reaction, up to ${reaction.batchSize ?? 500} keys a batch` +
            (reaction.backfill ? ', over every key once at its first start' : ''),
        });
    }
  }
  return handlers.sort((a, b) => (a.name < b.name ? -1 : 1));
}

/**
 * The map of the application's modules: its feature modules (a folder of src/ behind a door, in the
 * order of their names), then any other mounted module that publishes or handles events. `root` is
 * the repository; the doors are loaded from `sources` (src/, or dist/src/ once compiled), which the
 * application must have loaded too.
 */
export function moduleMap(app: INestApplicationContext, root: string, sources: string): ModuleMap {
  const folders = featureFolders(root);
  const doors = loadDoors(sources, folders);
  const uses = doorUses(root, folders);
  const modules: MappedModule[] = [];
  const others: MappedModule[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    const metatype = module.metatype;
    const folder = folders.find((candidate) =>
      Object.values(doors.get(candidate)!).includes(metatype),
    );
    const providers = [...module.providers.values()]
      .filter((wrapper) => wrapper.metatype === wrapper.token && wrapper.instance)
      .map((wrapper) => wrapper.instance as object);
    const publishes = eventsPublishedBy(metatype);
    const handlers = handlersOf(providers);
    if (folder !== undefined) {
      const exported = new Set([...module.exports].map((token) => token as unknown));
      modules.push({
        name: folder,
        className: metatype.name,
        door: doorOf(root, folder, doors.get(folder)!, exported),
        publishes,
        handlers,
        uses: new Map([...uses.get(folder)!].map(([door, names]) => [door, [...names].sort()])),
      });
    } else if (publishes.length > 0 || handlers.length > 0)
      others.push({
        name: metatype.name,
        className: metatype.name,
        publishes,
        handlers,
        uses: new Map(),
      });
  }
  const byName = (a: MappedModule, b: MappedModule) => (a.name < b.name ? -1 : 1);
  return {
    modules: [...modules.sort(byName), ...others.sort(byName)],
    eventNames: new Map(doorEvents(doors).map(({ event, constant }) => [event, constant])),
  };
}

/** A Mermaid node id: letters, digits and underscores. */
const idOf = (prefix: string, name: string) => `${prefix}_${name.replace(/\W/g, '_')}`;

/** An event as the map names it: as its door exports it, else by its record's name. */
const eventName = (map: ModuleMap, event: IntegrationEventType) =>
  map.eventNames.get(event) ?? wireModelOf(event.payload).name;

const code = (names: readonly string[]) => names.map((name) => `\`${name}\``).join(', ');

/** The map as a Mermaid flowchart: modules, the doors they use, the events they publish and handle. */
export function mermaidOf(map: ModuleMap): string {
  const lines = ['flowchart LR'];
  const events = new Set<IntegrationEventType>();
  for (const module of map.modules) {
    lines.push(`  ${idOf('m', module.name)}["${module.name}<br/>${module.className}"]`);
    for (const event of module.publishes) events.add(event);
    for (const { event } of module.handlers) if (event) events.add(event);
  }
  for (const event of declaredIntegrationEvents().filter((declared) => events.has(declared)))
    lines.push(
      `  ${idOf('e', event.routingKey)}{{"${eventName(map, event)}<br/>${event.routingKey}"}}`,
    );
  for (const module of map.modules)
    for (const [door, names] of module.uses)
      lines.push(`  ${idOf('m', module.name)} -->|"${names.join('<br/>')}"| ${idOf('m', door)}`);
  for (const module of map.modules)
    for (const event of module.publishes)
      lines.push(`  ${idOf('m', module.name)} -.->|publishes| ${idOf('e', event.routingKey)}`);
  for (const module of map.modules)
    for (const { name, event, how } of module.handlers)
      if (event)
        lines.push(
          `  ${idOf('e', event.routingKey)} -.->|"${name}<br/>${how}"| ${idOf('m', module.name)}`,
        );
  return lines.join('\n');
}

/** The page: the diagram, then each module with its door, its events and the doors it uses. */
export async function modulePage(map: ModuleMap, root: string): Promise<string> {
  const usedBy = (door: string) => map.modules.filter((module) => module.uses.has(door));
  const sections = map.modules.map((module) => {
    const lines = [`## ${module.name}`, ''];
    if (module.door) {
      lines.push(
        `\`${module.className}\`. Its door, \`src/${module.name}/index.ts\`, exports:`,
        '',
        '| Kind | Names |',
        '| --- | --- |',
        ...KINDS.filter((kind) => module.door!.has(kind)).map(
          (kind) => `| ${kind} | ${code(module.door!.get(kind)!)} |`,
        ),
        '',
      );
    } else lines.push(`Mounted without a door of its own in \`src/\`.`, '');
    const events = (list: readonly IntegrationEventType[]) =>
      list.map((event) => `\`${eventName(map, event)}\` (\`${event.routingKey}\`)`).join(', ') ||
      'none';
    lines.push(`- Publishes: ${events(module.publishes)}`);
    lines.push(
      `- Handles: ${
        module.handlers
          .map(
            ({ name, event, how }) =>
              `\`${name}\`${event ? ` on \`${eventName(map, event)}\` (\`${event.routingKey}\`)` : ''}, ${how}`,
          )
          .join('; ') || 'none'
      }`,
    );
    if (module.door) {
      lines.push(
        `- Uses the doors of: ${
          [...module.uses].map(([door, names]) => `${door} (${code(names)})`).join('; ') || 'none'
        }`,
      );
      lines.push(
        `- Its door is used by: ${
          usedBy(module.name)
            .map(({ name }) => name)
            .join(', ') || 'none'
        }`,
      );
    }
    return lines.join('\n');
  });
  const page = `# Modules

<!-- Written by \`npm run modules\` from the code; test/module-map.e2e-spec.ts fails while it is stale. -->

The service's feature modules as the code declares them: each folder of \`src/\` behind a door (its
\`index.ts\`, the one file another module may import: the dependency-cruiser rule
\`modules-through-their-door\`), what the door exports, which doors each module's files import, and
the integration events each module publishes (\`@Publishes\`) and handles (\`@OnIntegrationEvent\`,
\`@OnIntegrationEventBatch\`, \`@BatchedReaction\`). \`src/app.module.ts\` mounts them all. Drawn by
\`npm run modules\` from the application's modules and the sources; to add a module, see
[Adding a module](adding-a-module.md).

Solid arrows: a module imports another's door (the names it imports). Dotted arrows: a module
publishes an event, and an event is handled by a module's provider.

\`\`\`mermaid
${mermaidOf(map)}
\`\`\`

${sections.join('\n\n')}
`;
  const path = join(root, 'docs', 'modules.md');
  return format(page, { ...(await resolveConfig(path)), filepath: path });
}
