import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { childEnvironment, REPO_ROOT } from './processes';

/** Where the examples the docs link to live. */
export const EXAMPLES_DIRECTORY = join(REPO_ROOT, 'docs', 'examples');

/** How an example is started: a program and its arguments. */
export type ExampleCommand = readonly [string, string[]];

/**
 * Compiles a C# example of docs/examples as its page says, with Mono's C# compiler (a warning fails
 * it), to `program`; rejects with the compiler's words, and the Debian packages it needs.
 */
export const compileCSharpExample = (
  file: string,
  program: string,
  { references = [], packages }: { references?: readonly string[]; packages: string },
) =>
  new Promise<void>((resolve, reject) =>
    execFile(
      'mcs',
      [
        '-warnaserror+',
        `-out:${program}`,
        ...references.map((reference) => `-r:${reference}`),
        join(EXAMPLES_DIRECTORY, file),
      ],
      (error, stdout, stderr) =>
        error
          ? reject(
              new Error(
                `mcs did not build docs/examples/${file}: ${
                  (error as NodeJS.ErrnoException).code === 'ENOENT'
                    ? 'there is no mcs'
                    : `${stdout}${stderr}`.trim()
                }\nIt needs ${packages} (apt-get install ${packages}; npm test installs them).`,
              ),
            )
          : resolve(),
    ),
  );

/** An example of the docs running as a child process: its stdout and stderr kept as text. */
export class ExampleProcess {
  private stdoutText = '';
  private stderrText = '';
  private readonly exited: Promise<number | null>;

  private constructor(private readonly child: ChildProcess) {
    child.stdout!.on('data', (chunk: Buffer) => (this.stdoutText += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (this.stderrText += chunk.toString()));
    // A program that cannot start (not installed): said where a failure to come ready shows it.
    child.on('error', (error) => (this.stderrText += `${error.message}\n`));
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  }

  /** Starts it from the project's root; resolves once its stderr says `ready`. */
  static async start(
    [file, args]: ExampleCommand,
    env: Record<string, string>,
    ready: string,
  ): Promise<ExampleProcess> {
    const example = new ExampleProcess(
      spawn(file, args, {
        cwd: REPO_ROOT,
        env: childEnvironment(env),
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    try {
      await example.until(() => example.log.includes(ready), `to say “${ready}”`);
    } catch (error) {
      await example.stop();
      throw error;
    }
    return example;
  }

  /** Every complete line it printed on stdout. */
  get lines(): string[] {
    return this.stdoutText.split('\n').slice(0, -1);
  }

  get log(): string {
    return this.stderrText;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  async until(condition: () => boolean, what: string, ms = 15_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!condition()) {
      if (!this.running || Date.now() > deadline)
        throw new Error(
          `The example did not come ${what}${this.running ? ` within ${ms} ms` : ' (it exited)'}:\n` +
            `${this.stdoutText}${this.stderrText}`,
        );
      await sleep(25);
    }
  }

  /** SIGTERM, as Ctrl-C or an orchestrator stops it; its exit code. */
  async stop(): Promise<number | null> {
    if (this.running) this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
