import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllDocuments, parse } from 'yaml';
import { loadConfig } from '../../config/load.ts';
import { importFeatures } from '../../core/kernel/loader.ts';
import { ServiceRegistry } from '../../core/kernel/registry.ts';
import { coreServiceFactories } from '../../core/kernel/runtime.ts';
import { engineFeaturesOf, wireFeatures } from '../../core/kernel/wiring.ts';
import { KUBE_VERSION, readText, requireTools, run, type DeployTools } from './tools.ts';

/**
 * The chart (helm/vieneu-tts) checked by the real tools: `helm lint`, `helm
 * template` for the default values and for ci/production-values.yaml, and
 * every rendered manifest validated by kubeconform against the Kubernetes
 * 1.33 schemas, offline. ServiceMonitor and PrometheusRule are CRDs with no
 * schema there: kubeconform skips them (-skip) and the tests below check
 * their fields. Then what the tools cannot know: every pod would pass the
 * platform's own configuration check, and the chart keeps the rules of
 * issue 15 (node directly, probes on the ops port, grace above the shutdown
 * timeout, one Deployment per pipelines entry, GPU inference), every
 * background worker of the API pods' plugins runs in some Deployment (wired
 * as the kernel wires it), and no values entry overrides a variable the chart
 * sets itself.
 */
const CHART = path.resolve('helm/vieneu-tts');
const PRODUCTION = path.join(CHART, 'ci/production-values.yaml');
const CRDS = ['ServiceMonitor', 'PrometheusRule'];

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> }; spec?: any; data?: Record<string, string> };

type Rendered = { status: number | null; manifests: Manifest[]; text: string; stderr: string };
const rendered = new Map<string, Rendered>();

/** `helm template` once per set of values (tests read the parsed manifests, never change them). */
function template(tools: DeployTools, values: readonly string[] = [], sets: string[] = []): Rendered {
  const args = ['template', 'rel', CHART, '--namespace', 'tts', '--kube-version', KUBE_VERSION, ...values.flatMap((v) => ['-f', v]), ...sets.flatMap((s) => ['--set', s])];
  const key = args.join('\u0000');
  let result = rendered.get(key);
  if (!result) {
    const out = run(tools.helm, args);
    const manifests = out.status === 0 ? parseAllDocuments(out.stdout).map((d) => d.toJS() as Manifest).filter(Boolean) : [];
    result = { status: out.status, manifests, text: out.stdout, stderr: out.stderr };
    rendered.set(key, result);
  }
  return result;
}

function kubeconform(tools: DeployTools, text: string) {
  return run(tools.kubeconform, [
    '-strict', '-summary', '-output', 'json', '-kubernetes-version', KUBE_VERSION,
    '-schema-location', tools.schemaLocation, '-skip', CRDS.join(','), '-',
  ], { input: text });
}

const byKind = (manifests: Manifest[], kind: string) => manifests.filter((m) => m.kind === kind);
const named = (manifests: Manifest[], kind: string, name: string) => manifests.find((m) => m.kind === kind && m.metadata.name === name);

for (const [label, values] of [['default values', []], ['production values', [PRODUCTION]]] as const) {
  test(`helm lint passes with the ${label}`, async (t) => {
    const tools = await requireTools(t);
    if (!tools) return;
    const result = run(tools.helm, ['lint', CHART, '--strict', ...values.flatMap((v) => ['-f', v])]);
    t.is(result.status, 0, result.stdout + result.stderr);
  });

  test(`every manifest rendered with the ${label} is valid Kubernetes ${KUBE_VERSION} (kubeconform, strict)`, async (t) => {
    const tools = await requireTools(t);
    if (!tools) return;
    const chart = template(tools, values);
    t.is(chart.status, 0, chart.stderr);
    const result = kubeconform(tools, chart.text);
    t.is(result.status, 0, result.stdout + result.stderr);
    const summary = JSON.parse(result.stdout).summary as { valid: number; invalid: number; errors: number; skipped: number };
    const crds = chart.manifests.filter((m) => CRDS.includes(m.kind)).length;
    t.deepEqual(summary, { valid: chart.manifests.length - crds, invalid: 0, errors: 0, skipped: crds });
    t.true(summary.valid >= 20);
  });
}

test('kubeconform with these schemas does refuse a broken manifest (the check can fail)', async (t) => {
  const tools = await requireTools(t);
  if (!tools) return;
  const broken = template(tools).text.replace(/terminationGracePeriodSeconds: (\d+)/, 'terminationGracePeriodSeconds: "$1s"').replace('automountServiceAccountToken: false', 'automountServiceAcountToken: false');
  const result = kubeconform(tools, broken);
  t.not(result.status, 0);
  t.regex(result.stdout, /terminationGracePeriodSeconds/);
  t.regex(result.stdout, /automountServiceAcountToken/);
});

test('values.schema.json refuses bad values at lint time', async (t) => {
  const tools = await requireTools(t);
  if (!tools) return;
  for (const bad of ['api.port=0', 'shutdownTimeoutSeconds=0', 'config.ROLES=api', 'pipelines.deployments[0].modules=plugins/speech', 'terminationGraceMarginSeconds=1', 'image.pullPolicy=Sometimes']) {
    const result = run(tools.helm, ['lint', CHART, '--set', bad]);
    t.not(result.status, 0, `${bad} was accepted`);
  }
});

test('each role is its own Deployment; pipelines has one per values entry, each with its own MODULES', async (t) => {
  const tools = await requireTools(t);
  if (!tools) return;
  for (const values of [[], [PRODUCTION]] as const) {
    const { manifests } = template(tools, values);
    const deployments = byKind(manifests, 'Deployment');
    const settings = parse(readText(values[0] ?? path.join(CHART, 'values.yaml')));
    const entries = (settings.pipelines?.deployments ?? parse(readText(path.join(CHART, 'values.yaml'))).pipelines.deployments) as Array<{ name: string; modules: string }>;
    t.is(deployments.length, 2 + entries.length);
    for (const entry of entries) {
      const d = named(manifests, 'Deployment', `rel-${entry.name}`)!;
      t.truthy(d, entry.name);
      const env = envOf(d);
      t.like(env, { ROLES: 'pipelines', MODULES: entry.modules });
      t.is(d.spec.template.metadata.labels['vieneu.io/deployment'], entry.name);
    }
    t.like(envOf(named(manifests, 'Deployment', 'rel-api')!), { ROLES: 'api', MODULES: 'inference', INFERENCE_URL: 'http://rel-inference:9090' });
    t.like(envOf(named(manifests, 'Deployment', 'rel-inference')!), { ROLES: 'inference', MODULES: 'inference', INFERENCE_PORT: '9090' });
  }
});

function envOf(deployment: Manifest): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of deployment.spec.template.spec.containers[0].env as Array<{ name: string; value?: string }>) if (e.value !== undefined) env[e.name] = e.value;
  return env;
}

test('pods run node dist/core/main.js under the image entrypoint, probe /healthz and /readyz on the ops port, and get more grace than the shutdown timeout', async (t) => {
  const tools = await requireTools(t);
  if (!tools) return;
  for (const values of [[], [PRODUCTION]] as const) {
    const { manifests } = template(tools, values);
    for (const d of byKind(manifests, 'Deployment')) {
      const pod = d.spec.template.spec;
      const container = pod.containers[0];
      t.is(container.command, undefined, `${d.metadata.name}: the entrypoint (tini) stays`);
      t.deepEqual(container.args, ['node', 'dist/core/main.js'], d.metadata.name);
      t.false(JSON.stringify(container).includes('npm'), `${d.metadata.name} never runs npm`);
      const env = envOf(d);
      const shutdown = Number(env.SHUTDOWN_TIMEOUT_SECONDS);
      t.true(shutdown > 0);
      const preStop = container.lifecycle.preStop.sleep.seconds as number;
      t.true(pod.terminationGracePeriodSeconds > shutdown + preStop + 2, `${d.metadata.name}: grace ${pod.terminationGracePeriodSeconds} vs shutdown ${shutdown} + preStop ${preStop} + the 2 s force-exit margin`);
      const ops = container.ports.find((p: { name: string }) => p.name === 'ops');
      t.is(String(ops.containerPort), env.OPS_PORT);
      t.like(container.livenessProbe, { httpGet: { path: '/healthz', port: 'ops' } });
      t.like(container.startupProbe, { httpGet: { path: '/healthz', port: 'ops' } });
      t.like(container.readinessProbe, { httpGet: { path: '/readyz', port: 'ops' } });
      t.truthy(container.resources.requests?.cpu && container.resources.limits?.memory, `${d.metadata.name} has resources`);
      t.like(container.securityContext, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
      t.like(pod.securityContext, { runAsNonRoot: true, runAsUser: 10001 });
      t.true(byKind(manifests, 'PodDisruptionBudget').some((b) => b.metadata.name === d.metadata.name) || d.metadata.name === 'rel-reconciler', `${d.metadata.name} has a PDB`);
    }
  }
});

test('inference runs on GPU nodes: nvidia.com/gpu limit, node selector, toleration, the -gpu image, HPA on the tts.jobs lag', async (t) => {
  const tools = await requireTools(t);
  if (!tools) return;
  const { manifests } = template(tools, [PRODUCTION]);
  const d = named(manifests, 'Deployment', 'rel-inference')!;
  const pod = d.spec.template.spec;
  t.is(pod.containers[0].resources.limits['nvidia.com/gpu'], 1);
  t.deepEqual(pod.nodeSelector, { 'nvidia.com/gpu.present': 'true' });
  t.true(pod.tolerations.some((x: { key: string }) => x.key === 'nvidia.com/gpu'));
  t.is(pod.containers[0].image, 'registry.vieneu.vn/platform/vieneu-tts:0.1.0-gpu');
  t.like(pod.containers[0].volumeMounts.find((m: { name: string }) => m.name === 'models'), { mountPath: '/models', readOnly: true });
  t.is(d.spec.replicas, undefined, 'the HPA owns the replica count');
  const hpa = named(manifests, 'HorizontalPodAutoscaler', 'rel-inference')!;
  t.like(hpa.spec, { scaleTargetRef: { kind: 'Deployment', name: 'rel-inference' }, minReplicas: 4, maxReplicas: 16 });
  t.like(hpa.spec.metrics[0], { type: 'External', external: { metric: { name: 'bus_consumer_lag', selector: { matchLabels: { topic: 'tts.jobs', group: 'inference' } } }, target: { type: 'AverageValue', averageValue: '10' } } });
  const api = named(manifests, 'HorizontalPodAutoscaler', 'rel-api')!;
  t.like(api.spec.metrics[0], { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 65 } } });
  t.like(named(manifests, 'HorizontalPodAutoscaler', 'rel-usage-aggregator')!.spec.metrics[0].external.metric.selector.matchLabels, { topic: 'request.outcomes', group: 'usage-aggregator' });

  const cpu = template(tools, [], ['inference.gpu.enabled=false', 'inference.nodeSelector=null', 'inference.tolerations=null']).manifests;
  const plain = named(cpu, 'Deployment', 'rel-inference')!.spec.template.spec;
  t.is(plain.containers[0].resources.limits['nvidia.com/gpu'], undefined);
  t.is(plain.containers[0].image, 'registry.example.com/vieneu-tts:0.1.0');
});

test('settings come from the ConfigMap, secrets from existing Secrets by name and key; the chart makes a Secret only when asked', async (t) => {
  const tools = await requireTools(t);
  if (!tools) return;
  const { manifests } = template(tools, [PRODUCTION]);
  t.is(byKind(manifests, 'Secret').length, 0);
  const config = named(manifests, 'ConfigMap', 'rel-config')!;
  t.like(config.data, { KAFKA_BROKERS: 'kafka-0.kafka.data:9092,kafka-1.kafka.data:9092,kafka-2.kafka.data:9092', CLICKHOUSE_URL: 'http://clickhouse.data:8123' });
  const api = named(manifests, 'Deployment', 'rel-api')!.spec.template.spec.containers[0];
  t.deepEqual(api.envFrom, [{ configMapRef: { name: 'rel-config' } }]);
  const secretEnv = Object.fromEntries((api.env as Array<{ name: string; valueFrom?: { secretKeyRef: unknown } }>).filter((e) => e.valueFrom).map((e) => [e.name, e.valueFrom!.secretKeyRef]));
  t.deepEqual(secretEnv.MONGODB_URL, { name: 'mongo-vieneu-credentials', key: 'connectionString', optional: false });
  t.deepEqual(secretEnv.ADMIN_TOKEN, { name: 'vieneu-tts-app', key: 'ADMIN_TOKEN', optional: false });
  t.deepEqual(Object.keys(secretEnv).sort(), ['ADMIN_TOKEN', 'CLICKHOUSE_PASSWORD', 'METRICS_TOKEN', 'MONGODB_URL', 'REDIS_URL', 'URL_SIGNING_SECRET']);

  const made = template(tools, [], ['secrets.existingSecret=', 'secrets.values.ADMIN_TOKEN=a-long-admin-token-123']);
  t.like(named(made.manifests, 'Secret', 'rel-secrets'), { type: 'Opaque', stringData: { ADMIN_TOKEN: 'a-long-admin-token-123' } } as any);
  const none = template(tools, [], ['secrets.existingSecret=']);
  t.not(none.status, 0);
  t.regex(none.stderr, /set secrets.existingSecret/);
});

test('every rendered pod passes the platform\'s own configuration check, and its PLUGINS and MODULES load', async (t) => {
  const tools = await requireTools(t);
  if (!tools) return;
  const secrets = SECRETS;
  for (const values of [[], [PRODUCTION]] as const) {
    const { manifests } = template(tools, values);
    const configMap = named(manifests, 'ConfigMap', 'rel-config')!.data!;
    for (const d of byKind(manifests, 'Deployment')) {
      const env = { ...configMap, ...secrets, ...envOf(d) } as NodeJS.ProcessEnv;
      const config = loadConfig(env);
      const features = await importFeatures(config);
      for (const { definition } of features) {
        const problem = definition.config?.validate(env, { allowUnknown: true, convert: true }).error;
        t.falsy(problem, `${d.metadata.name}: ${definition.id}: ${problem?.message}`);
      }
      t.true(features.length > 0, d.metadata.name);
    }
  }
});

test('one ServiceMonitor scrapes every pod\'s ops port through the headless metrics Service; the PrometheusRule is the checked rules file', async (t) => {
  const tools = await requireTools(t);
  if (!tools) return;
  const { manifests } = template(tools, [PRODUCTION]);
  const monitor = byKind(manifests, 'ServiceMonitor')[0]!;
  t.is(monitor.apiVersion, 'monitoring.coreos.com/v1');
  t.like(monitor.metadata.labels, { release: 'kube-prometheus-stack' });
  const service = named(manifests, 'Service', 'rel-metrics')!;
  for (const [k, v] of Object.entries(monitor.spec.selector.matchLabels as Record<string, string>)) t.is(service.metadata.labels![k], v, `the ServiceMonitor selects the metrics Service by ${k}`);
  t.is(service.spec.clusterIP, 'None');
  t.deepEqual(monitor.spec.endpoints.map((e: { port: string; path: string }) => [e.port, e.path]), [['ops', '/metrics']]);
  t.true(service.spec.ports.some((p: { name: string }) => p.name === 'ops'));
  for (const d of byKind(manifests, 'Deployment')) {
    const labels = d.spec.template.metadata.labels as Record<string, string>;
    t.true(Object.entries(service.spec.selector).every(([k, v]) => labels[k] === v), `${d.metadata.name} is behind the metrics Service`);
  }
  const rule = byKind(manifests, 'PrometheusRule')[0]!;
  t.deepEqual(rule.spec, parse(readText(path.join(CHART, 'alerts/vieneu-tts.rules.yaml'))));
  const dashboard = named(manifests, 'ConfigMap', 'rel-dashboard')!;
  t.deepEqual(JSON.parse(dashboard.data!['vieneu-tts.json']!), JSON.parse(readText(path.join(CHART, 'dashboards/vieneu-tts.json'))));
});

test('NetworkPolicies: the ops port only from monitoring, the synthesis port only from the API pods', async (t) => {
  const tools = await requireTools(t);
  if (!tools) return;
  const { manifests } = template(tools, [PRODUCTION]);
  const policies = byKind(manifests, 'NetworkPolicy');
  t.deepEqual(policies.map((p) => p.spec.podSelector.matchLabels['app.kubernetes.io/component']).sort(), ['api', 'inference', 'pipelines']);
  const inference = policies.find((p) => p.metadata.name === 'rel-inference')!;
  const synth = inference.spec.ingress.find((r: { ports: Array<{ port: number }> }) => r.ports[0]!.port === 9090);
  t.deepEqual(synth.from, [{ podSelector: { matchLabels: { 'app.kubernetes.io/instance': 'rel', 'app.kubernetes.io/component': 'api' } } }]);
  for (const policy of policies) {
    const ops = policy.spec.ingress.find((r: { ports: Array<{ port: number }> }) => r.ports[0]!.port === 9464);
    t.deepEqual(ops.from, [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }]);
  }
  const ingress = named(manifests, 'Ingress', 'rel-api')!;
  t.like(ingress.spec.rules[0].http.paths[0].backend, { service: { name: 'rel-api', port: { number: 80 } } });
  const annotations = (ingress.metadata as { annotations?: Record<string, string> }).annotations ?? {};
  t.deepEqual(Object.keys(annotations), ['cert-manager.io/cluster-issuer'], 'the rest of the site (OAuth pages, /mcp, /docs, downloads) has no edge limits');
});

test('SPEC Limits "Edge" as ingress-nginx annotations: /api/v1 at 3000 a minute and 300 connections, the stream route at 500 and 20, each its own location', async (t) => {
  const tools = await requireTools(t);
  if (!tools) return;
  const { manifests } = template(tools, [PRODUCTION]);
  const annotationsOf = (m: Manifest) => (m.metadata as { annotations?: Record<string, string> }).annotations ?? {};
  const edge = named(manifests, 'Ingress', 'rel-api-edge')!;
  const stream = named(manifests, 'Ingress', 'rel-api-stream')!;
  t.like(annotationsOf(edge), {
    'nginx.ingress.kubernetes.io/limit-rpm': '3000', 'nginx.ingress.kubernetes.io/limit-connections': '300',
    'nginx.ingress.kubernetes.io/limit-burst-multiplier': '1', 'cert-manager.io/cluster-issuer': 'letsencrypt',
  });
  t.like(annotationsOf(stream), {
    'nginx.ingress.kubernetes.io/limit-rpm': '500', 'nginx.ingress.kubernetes.io/limit-connections': '20', 'nginx.ingress.kubernetes.io/proxy-buffering': 'off',
  });
  t.like(edge.spec.rules[0], { host: 'api.vieneu.vn', http: { paths: [{ path: '/api/v1', pathType: 'Prefix', backend: { service: { name: 'rel-api', port: { number: 80 } } } }] } });
  t.like(stream.spec.rules[0], { host: 'api.vieneu.vn', http: { paths: [{ path: '/api/v1/tts/stream', pathType: 'Exact' }] } });
  t.deepEqual(edge.spec.tls, named(manifests, 'Ingress', 'rel-api')!.spec.tls, 'the same TLS');
  // The API must believe the ingress's X-Forwarded-For, and the setting must pass the platform's own check.
  const config = named(manifests, 'ConfigMap', 'rel-config')!.data!;
  t.is(config.TRUSTED_PROXIES, '10.0.0.0/8');
  t.deepEqual(loadConfig({ TRUSTED_PROXIES: config.TRUSTED_PROXIES } as NodeJS.ProcessEnv).trustedProxies, ['10.0.0.0/8']);

  const off = template(tools, [PRODUCTION], ['api.ingress.edgeLimits.stream.connections=0', 'api.ingress.annotations.nginx\\.ingress\\.kubernetes\\.io/limit-rpm=stray']);
  t.is(off.status, 0, off.stderr);
  const offStream = annotationsOf(named(off.manifests, 'Ingress', 'rel-api-stream')!);
  t.false('nginx.ingress.kubernetes.io/limit-connections' in offStream, '0 leaves the limit out');
  t.is(offStream['nginx.ingress.kubernetes.io/limit-rpm'], '500', 'the edge values win over a stray annotation');
  const disabled = template(tools, [PRODUCTION], ['api.ingress.edgeLimits.enabled=false']);
  t.deepEqual(byKind(disabled.manifests, 'Ingress').map((m) => m.metadata.name), ['rel-api']);
});

test('the chart README documents every key of values.yaml', async (t) => {
  const readme = readText(path.join(CHART, 'README.md'));
  const keys: string[] = [];
  const walk = (value: unknown, prefix: string) => {
    if (value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0 && !['config', 'secrets.env', 'secrets.values', 'nodeSelector', 'labels', 'resources', 'selector', 'annotations', 'podSecurityContext', 'securityContext'].some((leaf) => prefix === leaf || prefix.endsWith(`.${leaf}`))) {
      for (const [k, v] of Object.entries(value)) walk(v, prefix ? `${prefix}.${k}` : k);
    } else {
      keys.push(prefix);
    }
  };
  walk(parse(readText(path.join(CHART, 'values.yaml'))), '');
  const missing = keys.filter((k) => !readme.includes(`\`${k}\``));
  t.deepEqual(missing, [], 'values without a row in helm/vieneu-tts/README.md');
});

test('the production values file is what the schema accepts and names no value the chart ignores', async (t) => {
  const schema = JSON.parse(readText(path.join(CHART, 'values.schema.json')));
  const dir = mkdtempSync(path.join(tmpdir(), 'vieneu-values-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // additionalProperties: false at every level the chart reads, so a typo in a key is an error, not a silent default.
  t.false(schema.additionalProperties);
  t.false(schema.properties.api.additionalProperties);
  t.false(schema.properties.pipelines.properties.deployments.items.additionalProperties);
  const tools = await requireTools(t);
  if (!tools) return;
  writeFileSync(path.join(dir, 'typo.yaml'), 'api:\n  replica: 3\n');
  t.not(run(tools.helm, ['lint', CHART, '-f', path.join(dir, 'typo.yaml')]).status, 0, 'api.replica (typo) is refused');
});

const SECRETS: Record<string, string> = {
  MONGODB_URL: 'mongodb://mongo:27017/?replicaSet=rs0', REDIS_URL: 'redis://redis:6379', CLICKHOUSE_PASSWORD: 'x',
  ADMIN_TOKEN: 'admin-token-0123456789', URL_SIGNING_SECRET: 'signing-secret-0123456789', METRICS_TOKEN: 'metrics-token-0123456789',
};

/**
 * The background workers a process with this environment registers, by the
 * kernel's own wiring (core/kernel/platform.ts: core's services, then every
 * PLUGINS and MODULES feature's register), on the embedded adapters in place
 * of MongoDB, Redis, Kafka and ClickHouse. Rejects as start-up would, e.g.
 * `plugin "audiobooks" cannot start: "audiobooks" needs service "core.engine"`
 * when no loaded module provides the engine. The kernel starts a worker only
 * where its role is in ROLES.
 */
async function wiredWorkers(env: NodeJS.ProcessEnv): Promise<Array<{ name: string; role: string }>> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vieneu-wiring-'));
  const { MONGODB_URL: _m, REDIS_URL: _r, KAFKA_BROKERS: _k, CLICKHOUSE_URL: _c, VOICE_MODELS: _v, ...embedded } = env;
  const config = loadConfig({ ...embedded, DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const features = await importFeatures(config);
  const registry = new ServiceRegistry();
  const core = coreServiceFactories(config, {
    lifecycle: { shuttingDown: new AbortController().signal, deadline: () => null },
    engineFeatures: () => engineFeaturesOf(features), credentialVerifiers: () => [],
  });
  for (const factory of core.factories) registry.provide(factory, 'core');
  try {
    const wired = await wireFeatures(features, registry, config.source);
    return wired.workers.map(({ name, role }) => ({ name, role }));
  } finally {
    await registry.close(() => undefined);
    await core.closeLast();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

test('every background worker of the plugins the API pods load runs in some Deployment that loads the plugin, has the worker\'s role and the services it needs (audiobooks render)', async (t) => {
  const tools = await requireTools(t);
  if (!tools) return;
  for (const values of [[], [PRODUCTION]] as const) {
    const label = values.length ? 'production values' : 'default values';
    const { manifests } = template(tools, values);
    const configMap = named(manifests, 'ConfigMap', 'rel-config')!.data!;
    const pods = byKind(manifests, 'Deployment').map((d) => ({ name: d.metadata.name, env: { ...configMap, ...SECRETS, ...envOf(d) } as NodeJS.ProcessEnv }));
    const api = pods.find((p) => p.name === 'rel-api')!;
    const apiPlugins = loadConfig(api.env).plugins;
    // Wired from the API pods' own PLUGINS: every worker of those plugins, whatever its role (the api role's run there).
    const needed = (await wiredWorkers(api.env)).filter((w) => apiPlugins.includes(w.name.split(':')[0]!) && w.role !== 'api');
    // The defect this guards against: a started book stays `queued` when these run nowhere.
    for (const [name, role] of [['audiobooks:scheduler', 'pipelines'], ['audiobooks:mastering', 'pipelines'], ['audiobooks:renderer', 'inference']]) {
      t.true(needed.some((w) => w.name === name && w.role === role), `${label}: the wiring finds ${name} (${role})`);
    }
    const runs = new Map<string, string[]>();
    for (const pod of pods.filter((p) => p !== api)) {
      const roles = loadConfig(pod.env).roles as string[];
      let workers: Array<{ name: string; role: string }> = [];
      try {
        workers = await wiredWorkers(pod.env);
      } catch (err) {
        t.fail(`${label}: ${pod.name} would not start: ${(err as Error).message}`);
      }
      for (const w of workers.filter((x) => roles.includes(x.role))) runs.set(w.name, [...(runs.get(w.name) ?? []), pod.name]);
      // A process with the engine's module but without the inference role reaches the inference Service, never a local engine.
      const modules = pod.env.MODULES!.split(',');
      if (modules.includes('inference') && !roles.includes('inference')) t.is(pod.env.INFERENCE_URL, 'http://rel-inference:9090', `${label}: ${pod.name} has INFERENCE_URL`);
    }
    for (const w of needed) t.true(runs.has(w.name), `${label}: ${w.name} (role ${w.role}) runs in no Deployment: add its plugin to the PLUGINS of a ${w.role} Deployment`);
    t.like(envOf(named(manifests, 'Deployment', 'rel-audiobooks')!), { ROLES: 'pipelines', MODULES: 'inference', PLUGINS: 'audiobooks', INFERENCE_URL: 'http://rel-inference:9090' });
    t.true(envOf(named(manifests, 'Deployment', 'rel-inference')!).PLUGINS!.split(',').includes('audiobooks'), `${label}: the inference pods load audiobooks`);
  }
});

test('the chart refuses values that would leave audiobooks without their scheduler or renderer', async (t) => {
  const tools = await requireTools(t);
  if (!tools) return;
  const dir = mkdtempSync(path.join(tmpdir(), 'vieneu-values-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const entries = parse(readText(path.join(CHART, 'values.yaml'))).pipelines.deployments as Array<{ name: string }>;
  const without = path.join(dir, 'without-audiobooks.json');
  writeFileSync(without, JSON.stringify({ pipelines: { deployments: entries.filter((e) => e.name !== 'audiobooks') } }));
  const noScheduler = template(tools, [without]);
  t.not(noScheduler.status, 0);
  t.regex(noScheduler.stderr, /no pipelines\.deployments entry runs their scheduler and mastering/);
  const noRenderer = template(tools, [], ['inference.plugins=closed']);
  t.not(noRenderer.status, 0);
  t.regex(noRenderer.stderr, /inference\.plugins leaves audiobooks out/);
  // Without audiobooks in the API pods, nothing is asked of the workers.
  const off = template(tools, [without], ['api.plugins=catalog\\,account\\,speech\\,jobs\\,admin', 'inference.plugins=closed']);
  t.is(off.status, 0, off.stderr);
});

test('no environment entry of the values may set a variable the chart sets itself (a second SHUTDOWN_TIMEOUT_SECONDS would outlive the grace period)', async (t) => {
  const tools = await requireTools(t);
  if (!tools) return;
  const { manifests } = template(tools);
  const values = parse(readText(path.join(CHART, 'values.yaml')));
  const entries = values.pipelines.deployments as Array<{ name: string; env?: Record<string, string> }>;
  // Every variable the chart writes into a pod's env itself, read from the rendering: not the values' own env maps, not secrets.
  const fromValues = new Set([...entries.flatMap((e) => Object.keys(e.env ?? {})), ...Object.keys(values.secrets.env)]);
  const chartSet = [...new Set(byKind(manifests, 'Deployment').flatMap((d) => Object.keys(envOf(d))))].filter((n) => !fromValues.has(n)).sort();
  t.true(['ROLES', 'MODULES', 'PLUGINS', 'SHUTDOWN_TIMEOUT_SECONDS', 'PORT', 'INFERENCE_URL'].every((n) => chartSet.includes(n)), chartSet.join());

  const dir = mkdtempSync(path.join(tmpdir(), 'vieneu-values-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const refused = (result: Rendered, where: string, name: string) => {
    t.not(result.status, 0, `${where} may set ${name}`);
    t.true(result.stderr.includes(`${where} sets ${name}, which the chart already sets`), `${where} ${name}: ${result.stderr}`);
  };
  for (const name of chartSet) refused(template(tools, [], [`extraEnv[0].name=${name}`, 'extraEnv[0].value=1']), 'extraEnv', name);
  for (const where of ['api.extraEnv', 'pipelines.extraEnv', 'inference.extraEnv']) {
    refused(template(tools, [], [`${where}[0].name=SHUTDOWN_TIMEOUT_SECONDS`, `${where}[0].value=600`]), where, 'SHUTDOWN_TIMEOUT_SECONDS');
  }
  refused(template(tools, [], ['secrets.env.SHUTDOWN_TIMEOUT_SECONDS.optional=true']), 'secrets.env', 'SHUTDOWN_TIMEOUT_SECONDS');
  const envFile = path.join(dir, 'deployment-env.json');
  writeFileSync(envFile, JSON.stringify({ pipelines: { deployments: entries.map((e, i) => (i === 0 ? { ...e, env: { ...e.env, SHUTDOWN_TIMEOUT_SECONDS: '600' } } : e)) } }));
  refused(template(tools, [envFile]), `pipelines.deployments[${entries[0]!.name}].env`, 'SHUTDOWN_TIMEOUT_SECONDS');

  // Other names pass, and INFERENCE_URL is the operator's to set when the chart runs no inference Deployment.
  t.is(template(tools, [], ['extraEnv[0].name=NODE_OPTIONS', 'extraEnv[0].value=--max-old-space-size=400']).status, 0);
  const external = template(tools, [], ['inference.enabled=false', 'api.extraEnv[0].name=INFERENCE_URL', 'api.extraEnv[0].value=http://inference.gpu:9090']);
  t.is(external.status, 0, external.stderr);
  t.is(envOf(named(external.manifests, 'Deployment', 'rel-api')!).INFERENCE_URL, 'http://inference.gpu:9090');
});
