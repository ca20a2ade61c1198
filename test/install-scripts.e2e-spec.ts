import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { allowScripts } from '../package.json';
import { REPO_ROOT } from './support/processes';

/**
 * npm runs a dependency's install scripts only as `allowScripts` in package.json says: better-sqlite3
 * builds its binding (every SQLite suite loads it), and swagger-ui-dist's install telemetry
 * (@scarf/scarf) is refused, and so is protobufjs's version-scheme warning. npm itself is asked whether any installed script is left unreviewed.
 */
describe('the install-script policy', () => {
  it('leaves no installed dependency with an install script unreviewed', async () => {
    const { stdout } = await promisify(execFile)('npm', ['install-scripts', 'ls', '--json'], {
      cwd: REPO_ROOT,
    });
    expect(JSON.parse(stdout)).toEqual({ allowScripts: [] });
  });

  it("allows better-sqlite3's build and refuses the install telemetry", () => {
    expect(allowScripts).toEqual({
      'better-sqlite3': true,
      '@scarf/scarf': false,
      protobufjs: false,
    });
  });
});
