import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { REPO_ROOT } from './support/processes';

/**
 * Statements made and dropped, then an idle event loop: the collector finishes its work from a task,
 * with no JavaScript running and no context entered, as an idle service's collector does.
 */
const IDLE_COLLECTION = `
  const Database = require(process.argv[1]);
  const database = new Database(':memory:');
  for (let round = 0; round < 20; round++) {
    for (let i = 0; i < 5000; i++) database.prepare('SELECT ' + i).get();
  }
  setTimeout(() => console.log('idle over'), 3000);
`;

/**
 * The SQLite binding survives the collector of any Node.js 24: statements collected by an idle
 * collection, from a task of the event loop with no context entered. better-sqlite3 12 (built on
 * node::ObjectWrap) aborts the process there on Node.js 24.19 and 24.20 (`Assertion failed: (env) !=
 * nullptr` in `Statement::~Statement`, nodejs/node#65446): this test, run with better-sqlite3 12
 * built against Node.js 24 headers, aborted on 24.20 in three runs of three. better-sqlite3 13
 * (Node-API) does not; neither does 24.21's runtime, whatever the binding.
 */
describe('the SQLite binding under an idle collection', () => {
  it('collects dropped statements from a task of the event loop and goes on', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        // The memory reducer, which collects an idle heap from a task, starts at once.
        '--gc-memory-reducer-start-delay-ms=100',
        '-e',
        IDLE_COLLECTION,
        require.resolve('better-sqlite3', { paths: [REPO_ROOT] }),
      ],
      { timeout: 60000, maxBuffer: 16 * 1024 * 1024 },
    );
    expect(stdout).toBe('idle over\n');
  });
});
