import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { allowScripts } from '../package.json';
import { REPO_ROOT } from './support/processes';

/**
 * npm runs a dependency's install scripts only as `allowScripts` in package.json says, and none is
 * needed: better-sqlite3 13 ships its binding built (npm would compile it again, from the binding.gyp
 * it also ships), swagger-ui-dist's install telemetry (@scarf/scarf)
 * is refused, so is protobufjs's version-scheme warning, the file watcher's build from source
 * (@parcel/watcher, Jest's, whose binary comes in its platform package), and esbuild's check of its
 * binary (orval's bundler; the binary, too, comes in its platform package). npm itself is asked
 * whether any installed script is left unreviewed.
 */
describe('the install-script policy', () => {
  it('leaves no installed dependency with an install script unreviewed', async () => {
    const { stdout } = await promisify(execFile)('npm', ['install-scripts', 'ls', '--json'], {
      cwd: REPO_ROOT,
    });
    expect(JSON.parse(stdout)).toEqual({ allowScripts: [] });
  });

  it('runs no install script at all', () => {
    expect(allowScripts).toEqual({
      'better-sqlite3': false,
      '@scarf/scarf': false,
      protobufjs: false,
      '@parcel/watcher': false,
      esbuild: false,
    });
  });
});
