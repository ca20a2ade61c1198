import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { EventCollector, TEST_BROKER_URL, uniqueExchange } from './support/event-collector';
import { REPO_ROOT } from './support/processes';
import { RunningApp } from './support/test-app';
import { createTestDatabase, type TestDatabase, testDatabaseKinds } from './support/test-database';

/**
 * The Prometheus alerting rules operators load (deploy/prometheus/alerts.yml): valid for promtool,
 * each alert shown firing and not firing by its unit tests (alerts.test.yml), each linked to its
 * runbook entry, and every metric they read one the service exports, scraped from a running service
 * on each database. Needs promtool (Debian's prometheus package; npm test installs it).
 */

const RULES_DIRECTORY = join(REPO_ROOT, 'deploy', 'prometheus');
const RULES = join(RULES_DIRECTORY, 'alerts.yml');
const RULE_TESTS = join(RULES_DIRECTORY, 'alerts.test.yml');
const OPERATIONS = join(REPO_ROOT, 'docs', 'operations.md');
/** Series Prometheus makes itself for every target, which no service exports. */
const PROMETHEUS_OWN = new Set(['up']);
interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
}

interface RuleTest {
  readonly alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[];
}

async function alertRules(): Promise<AlertRule[]> {
  const { groups } = parse(await readFile(RULES, 'utf8')) as { groups: { rules: AlertRule[] }[] };
  return groups.flatMap((group) => group.rules);
}

/** Runs promtool; its exit code and what it printed. */
function promtool(...args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    execFile('promtool', args, { cwd: RULES_DIRECTORY }, (error, stdout, stderr) => {
      if ((error as NodeJS.ErrnoException | null)?.code === 'ENOENT')
        reject(
          new Error(
            'promtool is not installed: apt-get install prometheus (npm test installs it).',
          ),
        );
      else resolve({ code: error ? Number(error.code) : 0, output: `${stdout}${stderr}` });
    });
  });
}

/** PromQL's keywords and the words that take a label list, which are not metric names. */
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset']);

/**
 * The metric names a PromQL expression reads: its identifiers that are not functions, aggregations or
 * keywords, once strings, label matchers, ranges and label lists are set aside.
 */
function metricNames(expression: string): string[] {
  const bare = expression
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names: string[] = [];
  for (const [, number, name, call] of bare.matchAll(/(\d[\w.]*)|([A-Za-z_:][\w:]*)(\s*\()?/g))
    if (number === undefined && call === undefined && !KEYWORDS.has(name)) names.push(name);
  return names;
}

/** The values an expression's label matchers give `label` (`route="/health/ready"`). */
const labelValues = (expression: string, label: string) =>
  [...expression.matchAll(new RegExp(`\\b${label}="([^"]*)"`, 'g'))].map(([, value]) => value);

/** The metric names a /metrics text exports: each `# TYPE`, with a histogram's series. */
function exportedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name);
    if (type === 'histogram' || type === 'summary')
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}

/** A heading's anchor as GitHub and most Markdown renderers make it. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\w\s-]/g, '')
    .replace(/\s/g, '-');

/** The anchors of a Markdown page's headings. */
async function anchorsOf(page: string): Promise<Set<string>> {
  const text = await readFile(page, 'utf8');
  return new Set([...text.matchAll(/^#{2,4} (.+)$/gm)].map(([, heading]) => anchorOf(heading)));
}

describe('Prometheus alerting rules (deploy/prometheus)', () => {
  it('are valid for promtool check rules', async () => {
    const rules = await alertRules();
    const { code, output } = await promtool('check', 'rules', 'alerts.yml');
    expect(output).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(code).toBe(0);
  });

  it('pass their unit tests (promtool test rules), which show each alert firing and not firing', async () => {
    const { code, output } = await promtool('test', 'rules', 'alerts.test.yml');
    expect(output).toContain('SUCCESS');
    expect(code).toBe(0);
    const { tests } = parse(await readFile(RULE_TESTS, 'utf8')) as { tests: RuleTest[] };
    const cases = tests.flatMap((test) => test.alert_rule_test ?? []);
    for (const { alert } of await alertRules()) {
      const outcomes = cases
        .filter(({ alertname }) => alertname === alert)
        .map(({ exp_alerts: expected = [] }) => (expected.length > 0 ? 'fires' : 'silent'));
      expect({ alert, outcomes: [...new Set(outcomes)].sort() }).toEqual({
        alert,
        outcomes: ['fires', 'silent'],
      });
    }
  });

  it('give each alert a severity, a summary and its runbook entry in docs/operations.md', async () => {
    const anchors = await anchorsOf(OPERATIONS);
    for (const { alert, labels, annotations } of await alertRules()) {
      expect({ alert, severity: labels?.severity }).toEqual({
        alert,
        severity: expect.stringMatching(/^(?:critical|warning)$/),
      });
      expect(annotations?.summary).toBeTruthy();
      const link = annotations?.runbook_url ?? '';
      expect({ alert, link }).toEqual({ alert, link: `docs/operations.md#${anchorOf(alert)}` });
      expect({ alert, documented: anchors.has(anchorOf(alert)) }).toEqual({
        alert,
        documented: true,
      });
    }
  });

  it('link each other page of the docs they name to a section there (the webhook alerts’ guide_url)', async () => {
    const links = (await alertRules()).flatMap(({ alert, annotations = {} }) =>
      Object.entries(annotations)
        .filter(([name]) => name !== 'runbook_url')
        .flatMap(([name, value]) =>
          [...value.matchAll(/\bdocs\/([\w-]+\.md)#([\w-]+)/g)].map(([link, page, anchor]) => ({
            alert,
            name,
            link,
            page,
            anchor,
          })),
        ),
    );
    expect(links.map(({ alert, name }) => `${alert} ${name}`)).toEqual([
      'PropertySalesWebhookDisabled guide_url',
      'PropertySalesWebhookDeliveriesFailing guide_url',
    ]);
    for (const { alert, link, page, anchor } of links)
      expect({
        alert,
        link,
        documented: (await anchorsOf(join(REPO_ROOT, 'docs', page))).has(anchor),
      }).toEqual({
        alert,
        link,
        documented: true,
      });
  });
});

for (const kind of testDatabaseKinds()) {
  describe(`the metrics the alerting rules read [${kind}]`, () => {
    let database: TestDatabase;
    let collector: EventCollector;
    let running: RunningApp;

    beforeAll(async () => {
      database = await createTestDatabase(kind);
      collector = await EventCollector.open(uniqueExchange('alert-rules'));
      running = await RunningApp.start(database.url, {
        EVENTS_URL: TEST_BROKER_URL,
        EVENTS_EXCHANGE: collector.exchange,
        WEBHOOKS: 'true',
      });
    });

    afterAll(async () => {
      await running?.close();
      await collector?.close();
      await database?.drop();
    });

    it('are each exported by the service, with the route labels they name', async () => {
      const rules = await alertRules();
      const routes = [...new Set(rules.flatMap(({ expr }) => labelValues(expr, 'route')))];
      for (const route of routes) await running.http.get(route);
      const text = (await running.http.get('/metrics').expect(200)).text;
      const exported = exportedNames(text);
      const read = [...new Set(rules.flatMap(({ expr }) => metricNames(expr)))].sort();
      expect(read).toEqual(expect.arrayContaining(['events_broker_connected', 'up']));
      expect(read.filter((name) => !PROMETHEUS_OWN.has(name) && !exported.has(name))).toEqual([]);
      for (const route of routes) expect(text).toContain(`route="${route}"`);
    });
  });
}
