import { parse as parseContentType } from 'content-type';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { major, satisfies } from 'semver';
import { devDependencies, engines } from '../package.json';
import { REPO_ROOT } from './support/processes';

interface Manifest {
  readonly version: string;
  readonly dependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
}

const manifest = (name: string): Manifest =>
  JSON.parse(
    readFileSync(join(REPO_ROOT, 'node_modules', name, 'package.json'), 'utf8'),
  ) as Manifest;

/** The newest TypeScript major, which the dependencies below do not take yet. */
const TYPESCRIPT_NEXT = '7.0.0';

/**
 * The majors this project stays behind on, each for the reason the README's dependency notes give.
 * Each test states the reason as it stands in the installed packages, so it fails on the day the
 * reason is gone (an upgrade of the package that held it back): move then, and drop the test.
 */
describe('the majors held back', () => {
  it.each([
    ['ts-jest', 'peerDependencies'],
    ['typescript-eslint', 'peerDependencies'],
    ['@nestjs/swagger', 'peerDependencies'],
    ['@nestjs/cli', 'dependencies'],
  ] as const)('TypeScript 7: %s does not take it yet (its %s)', (name, field) => {
    const range = manifest(name)[field]?.typescript;
    expect(range).toBeDefined();
    expect(satisfies(TYPESCRIPT_NEXT, range!)).toBe(false);
  });

  it('@types/node: the types are those of the Node.js major the service runs on', () => {
    const runtime = major(engines.node.replace(/^\^/, ''));
    expect(major(manifest('@types/node').version)).toBe(runtime);
    expect(devDependencies['@types/node']).toMatch(new RegExp(`^\\^${runtime}\\.`));
  });

  it("content-type 1: the fuzzing oracle needs its strict parser, which refuses what 3's accepts", () => {
    expect(major(manifest('content-type').version)).toBe(1);
    for (const outside of ['', ';', 'application/xml;;charset=utf-8'])
      expect(() => parseContentType(outside)).toThrow(TypeError);
  });
});
