import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { parse, parseAllDocuments } from 'yaml';
import { REPO_ROOT } from './support/processes';

/**
 * The Helm chart a platform team installs (deploy/helm/property-sales-service), rendered by helm
 * (scripts/prepare-tests.sh installs the pinned release; npm test runs it) and every object it makes
 * checked against its Kubernetes schema twice: by the schema's validator (types, required fields,
 * formats) and by the TypeScript types generated from the same schema, whose excess-property check
 * finds a misspelt field at any depth. The ServiceMonitor and PrometheusRule use the Prometheus
 * Operator's.
 */

const CHART = join(REPO_ROOT, 'deploy', 'helm', 'property-sales-service');
const HELM = join(REPO_ROOT, 'node_modules', '.cache', 'helm', 'helm');
const ALERTS = join(REPO_ROOT, 'deploy', 'prometheus', 'alerts.yml');
const RELEASE = 'sales';

interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly labels?: Record<string, string>;
    readonly annotations?: Record<string, string>;
  };
  readonly [field: string]: unknown;
}

interface Container {
  readonly name: string;
  readonly command?: string[];
  readonly ports?: { name: string; containerPort: number }[];
  readonly env?: { name: string; value?: string; valueFrom?: unknown }[];
  readonly envFrom?: { secretRef?: { name: string } }[];
  readonly securityContext?: Record<string, unknown>;
  readonly resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  readonly [probe: string]: unknown;
}

interface PodSpec {
  readonly containers: Container[];
  readonly securityContext?: Record<string, unknown>;
  readonly terminationGracePeriodSeconds?: number;
  readonly automountServiceAccountToken?: boolean;
}

/** What a release needs: the database, the broker, Redis and the API keys. */
const VALUES = {
  database: { url: 'mariadb://sales:database-password@db:3306/sales' },
  rabbitmq: { url: 'amqp://sales:broker-password@rabbitmq:5672' },
  redis: { url: 'redis://:redis-password@redis:6379/0' },
  auth: {
    apiKeys: 'gateway=sha256:4c88089bdf15cb0dffde5c179461a2f99fa7cfb0bed250a8d87f8aa1d80eaa11',
  },
};

/** Runs helm with `input` on its standard input; what it printed, or its error. */
function helm(
  args: string[],
  input = '',
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(HELM, args, { cwd: REPO_ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'ENOENT'
          ? new Error(
              `helm is not installed at ${HELM}: run bash scripts/prepare-tests.sh (npm test runs it).`,
            )
          : error,
      ),
    );
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
    child.stdin.end(input);
  });
}

/**
 * The chart (its folder, or a package of it) rendered with `values` (JSON is YAML) as a release in
 * namespace sales; fails if helm does.
 */
async function render(values: object, chart = CHART): Promise<KubeObject[]> {
  const { code, stdout, stderr } = await helm(
    ['template', RELEASE, chart, '--namespace', 'sales', '--values', '-'],
    JSON.stringify(values),
  );
  if (code !== 0) throw new Error(`helm template failed: ${stderr}`);
  return parseAllDocuments(stdout)
    .map((document) => document.toJS() as KubeObject | null)
    .filter((object): object is KubeObject => object !== null);
}

/** What helm said when it refused to render `values`. */
async function refusal(values: object): Promise<string> {
  const { code, stderr } = await helm(
    ['template', RELEASE, CHART, '--values', '-'],
    JSON.stringify(values),
  );
  expect(code).not.toBe(0);
  return stderr;
}

const withValues = (changes: Record<string, unknown>) => ({ ...VALUES, ...changes });

function only(objects: KubeObject[], kind: string, name?: string): KubeObject {
  const found = objects.filter(
    (object) => object.kind === kind && (name === undefined || object.metadata.name === name),
  );
  expect(found.map((object) => `${object.kind} ${object.metadata.name}`)).toHaveLength(1);
  return found[0];
}

const podSpec = (object: KubeObject) =>
  (object.spec as { template: { spec: PodSpec } }).template.spec;

/** The module of the model of an object's kind: the Kubernetes API's, or the Prometheus Operator's. */
const modelModule = ({ apiVersion, kind }: KubeObject) =>
  `${apiVersion.startsWith('monitoring.coreos.com/') ? '@kubernetes-models/prometheus-operator' : 'kubernetes-models'}/${apiVersion}/${kind}`;

/** What the schema's validator says of each object that breaks it. */
async function schemaViolations(objects: KubeObject[]): Promise<string[]> {
  const violations: string[] = [];
  for (const object of objects) {
    // The models are ES modules: Jest loads them only through import().
    const model = (await import(modelModule(object))) as Record<
      string,
      new (data: unknown) => { validate(): void }
    >;
    try {
      new model[object.kind](object).validate();
    } catch (error) {
      violations.push(`${object.kind} ${object.metadata.name}: ${(error as Error).message}`);
    }
  }
  return violations;
}

/**
 * What TypeScript says of the objects written as literals of their kinds' generated types: a field the
 * schema does not have, or of another type, each named by its object. The literals are an ES module,
 * as the models are.
 */
function typeViolations(objects: KubeObject[]): string[] {
  const file = join(REPO_ROOT, 'test', 'rendered-chart.mts');
  const declarations = objects.map(
    (object, index) =>
      `import type { I${object.kind} as Kind${index} } from '${modelModule(object)}';\n` +
      `export const object${index}: Kind${index} = ${JSON.stringify(object, null, 1)};\n`,
  );
  const text = declarations.join('');
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.Node20,
    moduleResolution: ts.ModuleResolutionKind.Node16,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile: read } = host;
  host.getSourceFile = (name, ...rest) =>
    name === file
      ? ts.createSourceFile(name, text, ts.ScriptTarget.ES2022)
      : getSourceFile(name, ...rest);
  host.fileExists = (name) => name === file || fileExists(name);
  host.readFile = (name) => (name === file ? text : read(name));
  /** The object whose declaration holds a position of the text. */
  const objectAt = (position: number) => {
    let end = 0;
    return objects[declarations.findIndex((declaration) => (end += declaration.length) > position)];
  };
  return ts.getPreEmitDiagnostics(ts.createProgram([file], options, host)).map((diagnostic) => {
    const object = objectAt(diagnostic.start ?? 0);
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
    return `${object.kind} ${object.metadata.name}: ${message}`;
  });
}

/** Every variable the service container is given, and how: a value or a reference. */
const environment = (container: Container) =>
  Object.fromEntries(
    (container.env ?? []).map(({ name, value, valueFrom }) => [name, value ?? valueFrom]),
  );

describe('the Helm chart (deploy/helm/property-sales-service)', () => {
  it('passes helm lint --strict', async () => {
    const { code, stdout, stderr } = await helm(
      ['lint', CHART, '--strict', '--values', '-'],
      JSON.stringify(VALUES),
    );
    expect({ code, stdout, stderr }).toEqual(expect.objectContaining({ code: 0 }));
    expect(stdout).toContain('0 chart(s) failed');
  });

  it('renders only objects valid against their Kubernetes and Prometheus Operator schemas', async () => {
    const everything = await render(
      withValues({ serviceMonitor: { enabled: true }, prometheusRule: { enabled: true } }),
    );
    expect(everything.map(({ kind }) => kind).sort()).toEqual([
      'Deployment',
      'HorizontalPodAutoscaler',
      'Job',
      'PodDisruptionBudget',
      'PrometheusRule',
      'Secret',
      'Secret',
      'Service',
      'Service',
      'ServiceMonitor',
    ]);
    const fixedSize = await render(withValues({ autoscaling: { enabled: false } }));
    const ownSecret = await render({ existingSecret: 'sales-credentials' });
    const objects = [...everything, ...fixedSize, ...ownSecret];
    expect(await schemaViolations(objects)).toEqual([]);
    expect(typeViolations(objects)).toEqual([]);
  });

  it('finds a field the schema lacks, and one of the wrong type', async () => {
    const deployment = only(await render(VALUES), 'Deployment');
    const [container] = podSpec(deployment).containers;
    const broken = {
      ...deployment,
      spec: {
        ...(deployment.spec as object),
        template: {
          spec: {
            ...podSpec(deployment),
            containers: [{ ...container, securityContext: { readOnlyRootFilesystm: true } }],
            terminationGracePeriodSeconds: 'twenty',
          },
        },
      },
    };
    expect(await schemaViolations([broken])).toEqual([
      expect.stringContaining('terminationGracePeriodSeconds must be integer'),
    ]);
    expect(typeViolations([broken])).toEqual([
      expect.stringMatching(
        /^Deployment sales-property-sales-service: Type 'string' is not assignable/,
      ),
      expect.stringMatching(/known properties, and '"readOnlyRootFilesystm"' does not exist/),
    ]);
  });

  it('runs the service as non-root on a read-only root filesystem, its probes on the health port, its resources bounded', async () => {
    const deployment = only(await render(VALUES), 'Deployment');
    const pod = podSpec(deployment);
    const [container] = pod.containers;
    expect(pod.securityContext).toEqual(
      expect.objectContaining({ runAsNonRoot: true, runAsUser: expect.any(Number) }),
    );
    expect(pod.securityContext?.runAsUser).not.toBe(0);
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(container.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    const health = container.ports?.find(({ name }) => name === 'health');
    expect(environment(container)).toEqual(
      expect.objectContaining({
        PORT: '3000',
        HEALTH_PORT: String(health?.containerPort),
        METRICS: 'health-port',
      }),
    );
    expect({
      startupProbe: container.startupProbe,
      livenessProbe: container.livenessProbe,
      readinessProbe: container.readinessProbe,
    }).toEqual({
      startupProbe: expect.objectContaining({ httpGet: { path: '/health/live', port: 'health' } }),
      livenessProbe: expect.objectContaining({ httpGet: { path: '/health/live', port: 'health' } }),
      readinessProbe: expect.objectContaining({
        httpGet: { path: '/health/ready', port: 'health' },
      }),
    });
    expect(container.resources).toEqual({
      requests: { cpu: expect.any(String), memory: expect.any(String) },
      limits: { cpu: expect.any(String), memory: expect.any(String) },
    });
    // Long enough for the drain and the in-flight requests before the kubelet kills the process.
    expect(environment(container)).toEqual(
      expect.objectContaining({ SHUTDOWN_DRAIN_MS: '5000', SHUTDOWN_TIMEOUT_MS: '10000' }),
    );
    expect(pod.terminationGracePeriodSeconds).toBe(20);
    const service = only(await render(VALUES), 'Service');
    expect(service.spec).toEqual(
      expect.objectContaining({ ports: [{ name: 'http', port: 80, targetPort: 'http' }] }),
    );
  });

  it('gives the pods their credentials from the Secret, never in the pod spec', async () => {
    const objects = await render(VALUES);
    const [container] = podSpec(only(objects, 'Deployment')).containers;
    const secret = only(objects, 'Secret', `${RELEASE}-property-sales-service`);
    expect(secret.stringData).toEqual({
      DATABASE_URL: VALUES.database.url,
      EVENTS_URL: VALUES.rabbitmq.url,
      REDIS_URL: VALUES.redis.url,
      AUTH_API_KEYS: VALUES.auth.apiKeys,
    });
    expect(container.envFrom).toEqual([{ secretRef: { name: secret.metadata.name } }]);
    const podText = JSON.stringify(objects.filter(({ kind }) => kind !== 'Secret'));
    for (const password of ['database-password', 'broker-password', 'redis-password'])
      expect(podText).not.toContain(password);
  });

  it('reads an existing Secret in place of its own, and refuses credentials in the values beside it', async () => {
    const objects = await render({ existingSecret: 'sales-credentials' });
    expect(objects.filter(({ kind }) => kind === 'Secret')).toEqual([]);
    const [container] = podSpec(only(objects, 'Deployment')).containers;
    expect(container.envFrom).toEqual([{ secretRef: { name: 'sales-credentials' } }]);
    const [migrations] = podSpec(only(objects, 'Job')).containers;
    expect(environment(migrations)).toEqual({
      DATABASE_URL: { secretKeyRef: { name: 'sales-credentials', key: 'DATABASE_URL' } },
    });
    expect(await refusal(withValues({ existingSecret: 'sales-credentials' }))).toContain(
      'existingSecret sales-credentials is set: give AUTH_API_KEYS, DATABASE_URL, EVENTS_URL, REDIS_URL in that Secret',
    );
  });

  it('refuses a release without a database, a value it does not know, and a credential or a setting of its own in env', async () => {
    expect(await refusal({})).toContain('database.url is required');
    expect(await refusal(withValues({ serviceMonitor: { enable: true } }))).toContain(
      "at '/serviceMonitor': additional properties 'enable' not allowed",
    );
    expect(await refusal(withValues({ env: { DATABASE_URL: 'mysql://x' } }))).toContain(
      'env.DATABASE_URL: set by the chart',
    );
    expect(await refusal(withValues({ env: { HEALTH_PORT: '9100' } }))).toContain(
      'env.HEALTH_PORT: set by the chart',
    );
    const [container] = podSpec(
      only(
        await render(withValues({ env: { TRUST_PROXY: '10.0.0.0/8', RATE_LIMIT: 600 } })),
        'Deployment',
      ),
    ).containers;
    expect(environment(container)).toEqual(
      expect.objectContaining({ TRUST_PROXY: '10.0.0.0/8', RATE_LIMIT: '600' }),
    );
  });

  it('runs the migrations as a Job before install and upgrade, with the command compose runs', async () => {
    const objects = await render(VALUES);
    const job = only(objects, 'Job');
    const [migrations] = podSpec(job).containers;
    const compose = parse(await readFile(join(REPO_ROOT, 'compose.yaml'), 'utf8')) as {
      services: { migrate: { command: string[] } };
    };
    expect(migrations.command).toEqual(compose.services.migrate.command);
    expect(podSpec(job).securityContext).toEqual(
      podSpec(only(objects, 'Deployment')).securityContext,
    );
    expect(migrations.securityContext).toEqual(
      expect.objectContaining({ readOnlyRootFilesystem: true }),
    );
    expect(job.metadata.annotations).toEqual(
      expect.objectContaining({ 'helm.sh/hook': 'pre-install,pre-upgrade' }),
    );
    // Its DATABASE_URL comes from a hook Secret made before it: the release's own is not there yet
    // on install.
    const source = only(objects, 'Secret', `${RELEASE}-property-sales-service-migrations`);
    expect(environment(migrations)).toEqual({
      DATABASE_URL: { secretKeyRef: { name: source.metadata.name, key: 'DATABASE_URL' } },
    });
    expect(source.stringData).toEqual({ DATABASE_URL: VALUES.database.url });
    expect(source.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    expect(Number(source.metadata.annotations?.['helm.sh/hook-weight'])).toBeLessThan(
      Number(job.metadata.annotations?.['helm.sh/hook-weight']),
    );
    const without = await render(withValues({ migrations: { enabled: false } }));
    expect(without.map(({ kind, metadata }) => `${kind} ${metadata.name}`)).not.toEqual(
      expect.arrayContaining([expect.stringMatching(/migrations$/)]),
    );
  });

  it('leaves the replica count to the autoscaler, or sets it, and keeps a disruption budget', async () => {
    const scaled = await render(VALUES);
    expect(only(scaled, 'Deployment').spec).not.toHaveProperty('replicas');
    expect(only(scaled, 'HorizontalPodAutoscaler').spec).toEqual(
      expect.objectContaining({
        scaleTargetRef: {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          name: only(scaled, 'Deployment').metadata.name,
        },
        minReplicas: 2,
      }),
    );
    expect(only(scaled, 'PodDisruptionBudget').spec).toEqual({
      maxUnavailable: 1,
      selector: (only(scaled, 'Deployment').spec as { selector: unknown }).selector,
    });
    const fixed = await render(
      withValues({
        autoscaling: { enabled: false },
        replicaCount: 3,
        podDisruptionBudget: { enabled: false },
      }),
    );
    expect(only(fixed, 'Deployment').spec).toEqual(expect.objectContaining({ replicas: 3 }));
    expect(fixed.map(({ kind }) => kind)).not.toEqual(
      expect.arrayContaining(['HorizontalPodAutoscaler', 'PodDisruptionBudget']),
    );
  });

  it('makes no ServiceMonitor or PrometheusRule unless asked', async () => {
    const kinds = (await render(VALUES)).map(({ kind }) => kind);
    expect(kinds).not.toContain('ServiceMonitor');
    expect(kinds).not.toContain('PrometheusRule');
  });

  it('scrapes the health port as the job the alerting rules select, and loads deploy/prometheus/alerts.yml as they are', async () => {
    const alerts = parse(await readFile(ALERTS, 'utf8')) as {
      groups: { rules: { expr: string }[] }[];
    };
    const jobs = new Set(
      alerts.groups.flatMap(({ rules }) =>
        rules.flatMap(({ expr }) => [...expr.matchAll(/\bjob="([^"]+)"/g)].map(([, job]) => job)),
      ),
    );
    expect(jobs.size).toBe(1);
    const objects = await render(
      withValues({
        serviceMonitor: { enabled: true, labels: { release: 'monitoring' } },
        prometheusRule: { enabled: true, labels: { release: 'monitoring' } },
      }),
    );
    const monitor = only(objects, 'ServiceMonitor');
    const rule = only(objects, 'PrometheusRule');
    expect(monitor.metadata.labels?.release).toBe('monitoring');
    expect(rule.metadata.labels?.release).toBe('monitoring');
    expect(rule.spec).toEqual({ groups: alerts.groups });
    const { selector, endpoints } = monitor.spec as {
      selector: { matchLabels: Record<string, string> };
      endpoints: { port: string; path: string; relabelings: unknown[] }[];
    };
    const scraped = objects.filter(
      ({ kind, metadata }) =>
        kind === 'Service' &&
        Object.entries(selector.matchLabels).every(
          ([label, value]) => metadata.labels?.[label] === value,
        ),
    );
    expect(scraped.map(({ metadata }) => metadata.name)).toEqual([
      `${RELEASE}-property-sales-service-metrics`,
    ]);
    const [container] = podSpec(only(objects, 'Deployment')).containers;
    const health = container.ports?.find(({ name }) => name === 'health');
    expect(scraped[0].spec).toEqual(
      expect.objectContaining({
        ports: [{ name: 'health', port: health?.containerPort, targetPort: 'health' }],
      }),
    );
    expect(endpoints).toEqual([
      expect.objectContaining({
        port: 'health',
        path: '/metrics',
        relabelings: [{ action: 'replace', targetLabel: 'job', replacement: [...jobs][0] }],
      }),
    ]);
  });

  it('carries the alerting rules in its package', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'chart-'));
    try {
      const { code, stderr } = await helm(['package', CHART, '--destination', directory]);
      expect({ code, stderr }).toEqual(expect.objectContaining({ code: 0 }));
      const [file] = await readdir(directory);
      const rule = only(
        await render(withValues({ prometheusRule: { enabled: true } }), join(directory, file)),
        'PrometheusRule',
      );
      const alerts = parse(await readFile(ALERTS, 'utf8')) as { groups: unknown[] };
      expect(rule.spec).toEqual({ groups: alerts.groups });
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
