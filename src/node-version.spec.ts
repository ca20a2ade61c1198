import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { engines, scripts } from '../package.json';
import { nodeVersionProblem } from './node-version';

describe('nodeVersionProblem', () => {
  it.each([
    ['24.11.0', '^24.11.0'],
    ['24.11.3', '^24.11.0'],
    ['24.21.0', '^24.11.0'],
    ['v24.12.0', '^24.11.0'],
    ['24.11.2', '^24.11.2'],
  ])('lets Node.js %s run a service that needs %s', (running, required) => {
    expect(nodeVersionProblem(running, required)).toBeUndefined();
  });

  it.each([
    ['20.20.2', '^24.11.0'],
    ['24.10.9', '^24.11.0'],
    ['24.11.1', '^24.11.2'],
    ['25.0.0', '^24.11.0'],
    ['22.21.0', '^24.11.0'],
  ])('stops Node.js %s when the service needs %s', (running, required) => {
    expect(nodeVersionProblem(running, required)).toContain(`this is Node.js ${running}.`);
  });

  it('says in one line which release is needed and how to get it', () => {
    expect(nodeVersionProblem('20.20.2', '^24.11.0')).toBe(
      'This service needs Node.js 24.11 or a later 24 release; this is Node.js 20.20.2. ' +
        'Install it with nvm (nvm install, which reads .nvmrc), fnm (fnm use) or Volta ' +
        '(volta install node@24).',
    );
  });

  it('refuses a range it cannot read rather than letting every version through', () => {
    expect(() => nodeVersionProblem('24.11.0', '>=24')).toThrow(/not a caret range/);
  });
});

describe('scripts/check-node.cjs, run first by npm start, npm test and every Jest run', () => {
  it.each([
    ['npm start', scripts.prestart],
    ['every Jest run (npm run test:quick, jest:shared…)', scripts.jest],
  ])('comes first in %s', (_, script) => {
    expect(script).toMatch(/^node scripts\/check-node\.cjs && /);
  });

  const check = (running: string) =>
    spawnSync(
      process.execPath,
      [
        '-e',
        `Object.defineProperty(process.versions, 'node', { value: '${running}' }); require('./scripts/check-node.cjs');`,
      ],
      { cwd: join(__dirname, '..'), encoding: 'utf8' },
    );

  it.each(['20.20.2', '22.21.0', '24.10.9', '25.0.0'])(
    'stops Node.js %s with the one line the service prints',
    (running) => {
      const { status, stderr } = check(running);
      expect(status).toBe(1);
      expect(stderr).toBe(`${nodeVersionProblem(running, engines.node)}\n`);
    },
  );

  it.each(['24.11.0', '24.22.3'])('lets Node.js %s go on, saying nothing', (running) => {
    expect(check(running)).toMatchObject({ status: 0, stderr: '' });
  });
});
