import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripts } from '../package.json';

const ROOT = join(__dirname, '..');

/** The container's start command: the exec form of the Dockerfile's last top-level CMD. */
function containerCommand(): string[] {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const commands = [...dockerfile.matchAll(/^CMD (\[.*\])$/gm)].map(
    (match) => JSON.parse(match[1]) as string[],
  );
  expect(commands.length).toBeGreaterThan(0);
  return commands.at(-1)!;
}

describe('how production starts the service', () => {
  it('runs the same command, Node.js flags included, in the container and with npm run start:prod', () => {
    // npm's shell hands its process to node (`exec`), so a signal to npm reaches the service.
    const [exec, ...command] = scripts['start:prod'].split(' ');
    expect(exec).toBe('exec');
    expect(containerCommand()).toEqual(command);
  });

  it('caps the old space and the young generation, which the peak RSS figures in the README depend on', () => {
    expect(containerCommand()).toEqual(
      expect.arrayContaining([
        '--max-old-space-size=256',
        '--max-semi-space-size=8',
        '--no-maglev',
      ]),
    );
  });
});
