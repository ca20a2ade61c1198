import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeOnSqlite } from './support/test-app';

/**
 * Every curl example of README.md and docs/*.md, run as written against the service on the demo
 * data (the event feed on): each must answer a success, and a read must answer something. An example that cannot run
 * here (it needs a key or a broker) is marked in its page with `<!-- docs-example: skip (why) -->`
 * just before its block.
 */
const ROOT = join(__dirname, '..');
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

interface Example {
  readonly page: string;
  /** The command as written, backslash continuations joined. */
  readonly command: string;
}

/** The commands of each fenced sh block that is not marked to be skipped. */
function examplesOf(page: string): Example[] {
  const text = readFileSync(join(ROOT, page), 'utf8');
  const blocks = text.matchAll(/(<!-- docs-example: skip[^>]*-->\s*)?```sh\n([\s\S]*?)```/g);
  return [...blocks]
    .filter(([, skip]) => skip === undefined)
    .flatMap(([, , body]) =>
      body
        .replace(/\\\n\s*/g, '')
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => /^(\w+=\$\()?curl /.test(line))
        .map((command) => ({ page, command })),
    );
}

/** Splits a command as a POSIX shell does for the quoting these examples use. */
function words(command: string, variables: ReadonlyMap<string, string>): string[] {
  const result: string[] = [];
  const pattern = /'([^']*)'|"((?:[^"\\]|\\.)*)"|([^\s'"]+)|(\s+)/g;
  let current: string | undefined;
  for (const [, single, double, bare, space] of command.matchAll(pattern)) {
    if (space !== undefined) {
      if (current !== undefined) result.push(current);
      current = undefined;
      continue;
    }
    const expand = (part: string) =>
      part.replace(/\$(\w+)/g, (_, name: string) => variables.get(name) ?? '');
    current = (current ?? '') + (single ?? expand(double ?? bare));
  }
  if (current !== undefined) result.push(current);
  return result;
}

interface CurlRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
  /** `-w '%header{name}'`: the header the command prints. */
  readonly printedHeader?: string;
}

function requestOf(args: readonly string[]): CurlRequest {
  const headers: Record<string, string> = {};
  let method: string | undefined;
  let body: string | undefined;
  let path: string | undefined;
  let printedHeader: string | undefined;
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (arg === '-X') method = args[++index];
    else if (arg === '-H') {
      const [name, ...value] = args[++index].split(':');
      headers[name.trim()] = value.join(':').trim();
    } else if (arg === '-d' || arg === '--data' || arg === '--data-binary') body = args[++index];
    else if (arg === '-o') index++;
    else if (arg === '-w') printedHeader = /%header\{([^}]+)\}/.exec(args[++index])?.[1];
    else if (!arg.startsWith('-')) path = arg.replace(/^(https?:\/\/)?localhost:3000/, '');
  }
  if (path === undefined) throw new Error(`No URL in curl ${args.join(' ')}`);
  // curl posts -d data as a form unless told otherwise.
  if (body !== undefined && !Object.keys(headers).some((name) => /^content-type$/i.test(name))) {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
  }
  return {
    method: method ?? (body === undefined ? 'GET' : 'POST'),
    path,
    headers,
    body,
    printedHeader,
  };
}

const examples = PAGES.flatMap(examplesOf);

describeOnSqlite(
  'the curl examples of the README and docs, on the demo data',
  (context) => {
    // Examples run in page order, as a reader runs them: a variable set by one is read by the next.
    const variables = new Map<string, string>();

    it('finds the examples', () => {
      expect(examples.length).toBeGreaterThan(10);
    });

    it.each(examples.map((example) => [example.page, example.command, example] as const))(
      '%s: %s',
      async (_page, _command, { command }) => {
        const assignment = /^(\w+)=\$\((.*)\)$/.exec(command);
        const request = requestOf(words(assignment?.[2] ?? command, variables).slice(1));
        const response = await fetch(`${context.running.baseUrl}${request.path}`, {
          method: request.method,
          headers: request.headers,
          body: request.body,
        });
        const text = await response.text();
        expect(response.status).toBeGreaterThanOrEqual(200);
        expect(response.status).toBeLessThan(400);
        if (request.method === 'GET') {
          expect(text).not.toBe('');
          // A list answers at least one item on the demo data.
          expect(text).not.toMatch(/"transactions":\[\]|<transactions\s*\/>|^\[\]$/);
        }
        if (assignment && request.printedHeader) {
          const value = response.headers.get(request.printedHeader);
          expect(value).not.toBeNull();
          variables.set(assignment[1], value ?? '');
        }
      },
    );
  },
  // The event feed on, so that its examples run too.
  { DEMO_DATA: 'true', EVENTS_FEED: 'true', EVENTS_POLL_MS: '50' },
);
