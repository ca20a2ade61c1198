import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  declaredIntegrationEvents,
  type IntegrationEventType,
} from '../src/events/integration-event';

/**
 * The feature modules' doors, as the dependency-cruiser rule `modules-through-their-door` defines them:
 * each folder of src/ that the rule guards, and its index.ts, the one file another module may import.
 */

interface DoorRule {
  readonly name: string;
  readonly to: { readonly path: string; readonly pathNot: readonly string[] };
}

/** The folders of `root`/src whose files the rule lets no other folder import, but through the door. */
export function featureFolders(root: string): string[] {
  // The plan is the one source of which folders are modules; a folder it shares is not one.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const plan = require(join(root, '.dependency-cruiser.cjs')) as { forbidden: DoorRule[] };
  const rule = plan.forbidden.find(({ name }) => name === 'modules-through-their-door');
  if (!rule) throw new Error('.dependency-cruiser.cjs has no rule modules-through-their-door.');
  // A file inside the folder, imported from a top-level file of src: guarded unless a pathNot lets it.
  const guards = (folder: string) => {
    const inside = `src/${folder}/a-file-inside.ts`;
    return (
      new RegExp(rule.to.path).test(inside) &&
      !rule.to.pathNot.some((pattern) => new RegExp(pattern.replace('$1', '\0')).test(inside))
    );
  };
  return readdirSync(join(root, 'src'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(root, 'src', entry.name, 'index.ts')))
    .map((entry) => entry.name)
    .filter(guards)
    .sort();
}

/** What a door exports at run time, by name. */
export type DoorExports = Readonly<Record<string, unknown>>;

/**
 * The doors of `folders`, loaded from `sources` (src/, or dist/src/ once compiled): the same module
 * instances the application loads, so their values compare with the container's.
 */
export function loadDoors(sources: string, folders: readonly string[]): Map<string, DoorExports> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return new Map(folders.map((folder) => [folder, require(join(sources, folder)) as DoorExports]));
}

/** An integration event a door exports, with the name of its payload class there. */
export interface DoorEvent {
  readonly folder: string;
  /** The name the door exports it under: `AGENTS_CHANGED`. */
  readonly constant: string;
  readonly event: IntegrationEventType;
  /** The name the door exports its payload class under; undefined when it does not export it. */
  readonly payload?: string;
}

/** Every integration event the doors export. */
export function doorEvents(doors: ReadonlyMap<string, DoorExports>): DoorEvent[] {
  const declared = new Set(declaredIntegrationEvents());
  return [...doors].flatMap(([folder, exports]) =>
    Object.entries(exports)
      .filter(([, value]) => declared.has(value as IntegrationEventType))
      .map(([constant, value]) => {
        const event = value as IntegrationEventType;
        const payload = Object.entries(exports).find(([, other]) => other === event.payload)?.[0];
        return { folder, constant, event, payload };
      }),
  );
}
