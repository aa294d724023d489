// The deployables (k8s/, docker-compose.yml, Dockerfile) checked against the real CLI and the
// devcluster: every container runs an olmq entry point with flags and env vars that exist, the
// manifests apply (server-side dry run, then for real), and each component's RBAC lets it do
// its job and no more.
import { execFile, spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { commands } from '../../cli/commands.js';
import { functionNames, functionQueues, type FunctionName } from '../../functions/index.js';
import { mirroredKinds } from '../../watcher/kinds.js';
import { workConsumerName } from '../../shared/bus/work-queue.js';
import type { Command } from '../../cli/commands.js';
import { kubectl, startCluster, type ClusterFixture } from '../harness/devcluster.js';
import { natsServerFor } from '../harness/nats.js';
import { runOlmq } from '../harness/cli.js';
import { olmqBin, repoRoot } from '../harness/repo.js';
import { waitFor } from '../harness/wait.js';

const k8sDir = join(repoRoot, 'k8s');
const namespace = 'olmq-system';

/** One Kubernetes object as the manifests hold it (only what the checks read is typed). */
interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
}

interface EnvVar {
  name: string;
}

interface Container {
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  readinessProbe?: { httpGet?: { path?: string; port?: string | number } };
  livenessProbe?: { httpGet?: { path?: string; port?: string | number } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: {
    runAsNonRoot?: boolean;
    readOnlyRootFilesystem?: boolean;
    allowPrivilegeEscalation?: boolean;
    capabilities?: { drop?: string[] };
  };
  ports?: { name?: string; containerPort?: number }[];
}

interface PodSpec {
  serviceAccountName?: string;
  securityContext?: { runAsNonRoot?: boolean; seccompProfile?: { type?: string } };
  containers: Container[];
}

interface DeploymentSpec {
  replicas?: number;
  selector: { matchLabels: Record<string, string> };
  template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
}

/** The olmq objects as `kubectl apply -k k8s/` sends them, in file order. */
async function renderedManifests(fixture?: ClusterFixture): Promise<Manifest[]> {
  const text = await runKustomize(fixture);
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
}

function runKustomize(fixture?: ClusterFixture): Promise<string> {
  if (fixture !== undefined) {
    return kubectl(fixture, ['kustomize', k8sDir]).then((r) => {
      if (r.code !== 0) throw new Error(`kubectl kustomize k8s/ failed: ${r.stderr}`);
      return r.stdout;
    });
  }
  return new Promise((resolve, reject) => {
    execFile('kubectl', ['kustomize', k8sDir], (error, stdout, stderr) =>
      error ? reject(new Error(`kubectl kustomize k8s/ failed: ${stderr}`)) : resolve(stdout),
    );
  });
}

/** Runs the built olmq CLI without any olmq env var set; resolves with its exit code. */
function olmq(args: readonly string[]): Promise<{ code: number; stderr: string }> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !k.startsWith('OLMQ_') && k !== 'NATS_URL' && k !== 'KUBECONFIG',
    ),
  );
  return runOlmq(args, env);
}

/** The olmq command a container's argv (after `olmq`) selects, or undefined. */
function commandOf(argv: readonly string[]): Command | undefined {
  return Object.values(commands as Record<string, Command>).find((c) =>
    c.words.every((w, i) => argv[i] === w),
  );
}

/** Env vars the configuration reference documents for a command. */
function documentedEnv(command: Command): Set<string> {
  return new Set(
    Object.values(command.options)
      .map((o) => o.env)
      .filter((e): e is string => e !== undefined),
  );
}

const byKind = (manifests: Manifest[], kind: string): Manifest[] =>
  manifests.filter((m) => m.kind === kind);

const componentNames = ['watcher', ...functionNames];
/** Components deployed in a cluster only: the aggregated package API must be reachable by kube-apiserver. */
const clusterComponentNames = [...componentNames, 'packageserver'];

t.test('deployables - kustomization lists every manifest file in k8s/', (t) => {
  const kustomization = parse(readFileSync(join(k8sDir, 'kustomization.yaml'), 'utf8')) as {
    resources: string[];
  };
  const files = readdirSync(k8sDir).filter(
    (f) => f.endsWith('.yaml') && f !== 'kustomization.yaml',
  );
  t.same([...kustomization.resources].sort(), files.sort());
  t.end();
});

t.test('deployables - every Deployment runs an olmq entry point whose flags exist', async (t) => {
  const deployments = byKind(await renderedManifests(), 'Deployment');
  t.same(
    deployments.map((d) => d.metadata.name).sort(),
    clusterComponentNames.map((c) => `olmq-${c}`).sort(),
  );
  for (const deployment of deployments) {
    const spec = deployment.spec as unknown as DeploymentSpec;
    for (const container of spec.template.spec.containers) {
      const [binary, ...words] = container.command ?? [];
      t.equal(binary, 'olmq', `${deployment.metadata.name} runs olmq`);
      const argv = [...words, ...(container.args ?? [])];
      const result = await olmq([...argv, '--help']);
      t.equal(result.code, 0, `olmq ${argv.join(' ')} --help exits 0 ${result.stderr}`);
    }
  }
});

t.test('deployables - functions are run by their real names, the watcher as watcher', async (t) => {
  for (const deployment of byKind(await renderedManifests(), 'Deployment')) {
    const container = (deployment.spec as unknown as DeploymentSpec).template.spec.containers[0];
    const component = deployment.metadata.name.replace(/^olmq-/, '');
    if (component === 'watcher') t.same(container?.command, ['olmq', 'watcher']);
    else if (component === 'packageserver') t.same(container?.command, ['olmq', 'packageserver']);
    else {
      t.ok((functionNames as readonly string[]).includes(component), `${component} is a function`);
      t.same(container?.command, ['olmq', 'run', component]);
    }
  }
});

// Node's own settings (heap size), which docs/deployment.md explains, are not olmq options.
const runtimeEnv = new Set(['NODE_OPTIONS']);

t.test('deployables - Deployments set only env vars the reference documents', async (t) => {
  const deploymentDoc = readFileSync(join(repoRoot, 'docs', 'deployment.md'), 'utf8');
  for (const name of runtimeEnv)
    t.match(deploymentDoc, name, `docs/deployment.md explains ${name}`);
  for (const deployment of byKind(await renderedManifests(), 'Deployment')) {
    const container = (deployment.spec as unknown as DeploymentSpec).template.spec.containers[0];
    const command = commandOf(container?.command?.slice(1) ?? []);
    if (command === undefined) {
      t.fail(`${deployment.metadata.name} runs no known command`);
      continue;
    }
    const documented = documentedEnv(command);
    for (const { name } of container?.env ?? []) {
      t.ok(
        documented.has(name) || runtimeEnv.has(name),
        `${deployment.metadata.name}: ${name} is documented`,
      );
    }
    const names = (container?.env ?? []).map((e) => e.name);
    t.ok(names.includes('NATS_URL'), `${deployment.metadata.name} is given NATS_URL`);
    t.ok(names.includes('OLMQ_CLUSTER'), `${deployment.metadata.name} is given OLMQ_CLUSTER`);
  }
});

t.test('deployables - the watcher is named in its Lease after its pod', async (t) => {
  const watcher = byKind(await renderedManifests(), 'Deployment').find(
    (d) => d.metadata.name === 'olmq-watcher',
  );
  const env = (watcher?.spec as unknown as DeploymentSpec).template.spec.containers[0]?.env as
    { name: string; valueFrom?: { fieldRef?: { fieldPath?: string } } }[] | undefined;
  const identity = env?.find((e) => e.name === 'OLMQ_IDENTITY');
  t.equal(identity?.valueFrom?.fieldRef?.fieldPath, 'metadata.name');
});

t.test('deployables - Deployments run 2 hardened replicas with probes and resources', async (t) => {
  for (const deployment of byKind(await renderedManifests(), 'Deployment')) {
    const name = deployment.metadata.name;
    const spec = deployment.spec as unknown as DeploymentSpec;
    t.equal(spec.replicas, 2, `${name} replicas`);
    t.equal(spec.template.spec.serviceAccountName, name, `${name} has its own ServiceAccount`);
    t.equal(spec.template.spec.securityContext?.runAsNonRoot, true, `${name} non-root`);
    t.equal(spec.template.spec.securityContext?.seccompProfile?.type, 'RuntimeDefault');
    for (const c of spec.template.spec.containers) {
      t.equal(c.readinessProbe?.httpGet?.path, '/readyz', `${name} readiness`);
      t.equal(c.livenessProbe?.httpGet?.path, '/healthz', `${name} liveness`);
      t.ok(c.resources?.requests?.memory && c.resources.limits?.memory, `${name} memory`);
      t.equal(c.securityContext?.readOnlyRootFilesystem, true, `${name} read-only root`);
      t.equal(c.securityContext?.allowPrivilegeEscalation, false, `${name} no escalation`);
      t.same(c.securityContext?.capabilities?.drop, ['ALL'], `${name} drops all caps`);
      t.ok(
        c.ports?.some((p) => p.name === 'metrics' && p.containerPort === 8080),
        `${name} metrics port`,
      );
    }
  }
});

t.test(
  'deployables - each Deployment has a PodDisruptionBudget and a metrics Service',
  async (t) => {
    const manifests = await renderedManifests();
    for (const deployment of byKind(manifests, 'Deployment')) {
      const name = deployment.metadata.name;
      const podLabels = (deployment.spec as unknown as DeploymentSpec).template.metadata.labels;
      const matches = (selector: Record<string, string> | undefined): boolean =>
        selector !== undefined &&
        Object.keys(selector).length > 0 &&
        Object.entries(selector).every(([k, v]) => podLabels[k] === v);
      const pdb = byKind(manifests, 'PodDisruptionBudget').find((p) => p.metadata.name === name);
      const pdbSpec = pdb?.spec as { selector?: { matchLabels?: Record<string, string> } };
      t.ok(matches(pdbSpec?.selector?.matchLabels), `${name} PDB selects its pods`);
      const service = byKind(manifests, 'Service').find((s) => s.metadata.name === name);
      const serviceSpec = service?.spec as {
        selector?: Record<string, string>;
        ports?: { name?: string }[];
      };
      t.ok(matches(serviceSpec?.selector), `${name} Service selects its pods`);
      t.ok(
        serviceSpec?.ports?.some((p) => p.name === 'metrics'),
        `${name} Service exposes metrics`,
      );
    }
  },
);

t.test('deployables - the ServiceMonitor selects every olmq Service', async (t) => {
  const manifests = await renderedManifests();
  const [monitor] = byKind(manifests, 'ServiceMonitor');
  const spec = monitor?.spec as {
    selector: { matchLabels: Record<string, string> };
    endpoints: { port: string }[];
  };
  t.same(
    spec.endpoints.map((e) => e.port),
    ['metrics'],
  );
  for (const service of byKind(manifests, 'Service')) {
    const labels = service.metadata.labels ?? {};
    t.ok(
      Object.entries(spec.selector.matchLabels).every(([k, v]) => labels[k] === v),
      `${service.metadata.name} selected`,
    );
  }
});

t.test(
  'deployables - KEDA scales each function on its JetStream consumer, not the watcher',
  async (t) => {
    const scaled = byKind(await renderedManifests(), 'ScaledObject');
    t.same(scaled.map((s) => s.metadata.name).sort(), functionNames.map((f) => `olmq-${f}`).sort());
    for (const object of scaled) {
      const fn = object.metadata.name.replace(/^olmq-/, '');
      const spec = object.spec as {
        scaleTargetRef: { name: string };
        minReplicaCount: number;
        triggers: { type: string; metadata: Record<string, string> }[];
      };
      t.equal(spec.scaleTargetRef.name, object.metadata.name);
      t.ok(spec.minReplicaCount >= 2, `${fn} keeps 2 replicas`);
      // One trigger per queue of the function (per work-key type): KEDA scales on the largest lag.
      const queues = functionQueues[fn as FunctionName];
      t.same(
        spec.triggers.map((trigger) => trigger.metadata['consumer']),
        queues.map((queue) => workConsumerName(queue, 'in-cluster')),
        `${fn} scales on the work consumer of each of its queues in its cluster`,
      );
      for (const trigger of spec.triggers) {
        t.equal(trigger.type, 'nats-jetstream');
        t.match(trigger.metadata, {
          account: '$G',
          stream: 'OLMQ_WORK',
          natsServerMonitoringEndpoint: /:8222$/,
          lagThreshold: /^\d+$/,
        });
      }
    }
  },
);

/** A docker-compose service (only what the checks read). */
interface ComposeService {
  image?: string;
  build?: string;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  user?: string;
  read_only?: boolean;
  deploy?: { replicas?: number };
}

function composeServices(): Record<string, ComposeService> {
  const compose = parse(readFileSync(join(repoRoot, 'docker-compose.yml'), 'utf8'), {
    merge: true,
  }) as { services: Record<string, ComposeService> };
  return compose.services;
}

t.test('deployables - compose runs nats with JetStream and monitoring on 8222', (t) => {
  const nats = composeServices().nats;
  t.equal(nats?.image, 'nats:2.10-alpine');
  t.ok(nats?.command?.includes('--jetstream'), 'JetStream on');
  t.equal(nats?.command?.[nats.command.indexOf('--http_port') + 1], '8222');
  t.end();
});

t.test('deployables - every compose olmq service runs an olmq entry point', async (t) => {
  const services = Object.entries(composeServices()).filter(([name]) => name !== 'nats');
  t.same(services.map(([name]) => name).sort(), [...componentNames].sort());
  for (const [name, service] of services) {
    const argv = service.command ?? [];
    const result = await olmq([...argv, '--help']);
    t.equal(result.code, 0, `${name}: olmq ${argv.join(' ')} --help exits 0 ${result.stderr}`);
    if (name === 'watcher') t.equal(argv[0], 'watcher');
    else t.same(argv.slice(0, 2), ['run', name]);
  }
});

t.test('deployables - compose services are built here, replicated and given a kubeconfig', (t) => {
  for (const [name, service] of Object.entries(composeServices())) {
    if (name === 'nats') continue;
    t.equal(service.build, '.', `${name} built from the Dockerfile`);
    t.equal(service.deploy?.replicas, 2, `${name} replicas`);
    t.not(service.user?.split(':')[0], '0', `${name} non-root`);
    t.equal(service.read_only, true, `${name} read-only`);
    const kubeconfig = service.environment?.KUBECONFIG;
    t.ok(
      service.volumes?.includes(`./.olmq/kubeconfig:${kubeconfig}:ro`),
      `${name} mounts ./.olmq/kubeconfig read-only at KUBECONFIG`,
    );
    t.match(service.environment?.NATS_URL, /^nats:\/\/nats:4222$/);
    const command = commandOf(service.command ?? []);
    const documented = command === undefined ? new Set<string>() : documentedEnv(command);
    for (const variable of Object.keys(service.environment ?? {})) {
      t.ok(documented.has(variable), `${name}: ${variable} is documented`);
    }
  }
  t.end();
});

t.test('deployables - the Dockerfile builds with npm ci and runs the CLI as non-root', (t) => {
  const lines = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('#'));
  const from = lines.filter((l) => l.startsWith('FROM '));
  t.ok(from.length > 0 && from.every((l) => /^FROM node:20-slim\b/.test(l)), 'node:20-slim');
  t.ok(lines.some((l) => /RUN .*npm ci/.test(l)));
  t.ok(lines.some((l) => /RUN .*npm run build/.test(l)));
  const users = lines.filter((l) => l.startsWith('USER '));
  t.ok(users.length > 0 && !/^USER (0|root)\b/.test(users.at(-1) ?? ''), 'ends as non-root');
  t.equal(
    lines.filter((l) => l.startsWith('ENTRYPOINT ')).at(-1),
    'ENTRYPOINT ["node", "dist/cli/main.js"]',
  );
  t.end();
});

t.test('deployables - the manifests apply to the devcluster', async (t) => {
  const fixture = await startCluster();
  t.teardown(() => fixture.close());
  const run = async (args: string[], input?: string): Promise<string> => {
    const result = await kubectl(fixture, args, input);
    if (result.code !== 0)
      throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
    return result.stdout;
  };
  const fixtures = join(repoRoot, 'test', 'fixtures', 'deployables');
  await run(['apply', '-f', join(repoRoot, 'crds'), '-f', fixtures]);
  await run([
    'wait',
    '--for=condition=Established',
    '--timeout=30s',
    '-f',
    join(repoRoot, 'crds'),
    '-f',
    fixtures,
  ]);

  // Every kind the manifests ship (PodDisruptionBudgets included) must be served and applied.
  // apiVersion/kind -> resource name, from discovery.
  const served = new Map(
    (await run(['api-resources', '--no-headers']))
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l): [string, string] => {
        const cols = l.trim().split(/\s+/);
        // NAME [SHORTNAMES] APIVERSION NAMESPACED KIND: find the apiVersion column.
        const at = cols.findIndex((c, i) => i > 0 && /^(v1|[a-z0-9.-]+\/v[0-9a-z]+)$/.test(c));
        return [`${cols[at]}/${cols[at + 2]}`, cols[0] ?? ''];
      }),
  );
  const manifests = await renderedManifests(fixture);
  const applicable = manifests.filter((m) => served.has(`${m.apiVersion}/${m.kind}`));
  const left = manifests.filter((m) => !served.has(`${m.apiVersion}/${m.kind}`));
  t.same(
    left.map((m) => `${m.kind} ${m.metadata.name}`),
    [],
    'every kind is served by the devcluster',
  );
  t.ok(
    applicable.some((m) => m.kind === 'PodDisruptionBudget'),
    'the PodDisruptionBudgets are applied',
  );

  const namespaceDoc = manifests.filter((m) => m.kind === 'Namespace');
  const rest = applicable.filter((m) => m.kind !== 'Namespace');
  const asYaml = (objects: Manifest[]): string => objects.map((o) => stringify(o)).join('---\n');

  await t.test('server-side dry run accepts every object', async (t) => {
    await run(['apply', '-f', '-'], asYaml(namespaceDoc));
    const out = await run(['apply', '--dry-run=server', '-f', '-'], asYaml(rest));
    for (const m of rest) {
      t.match(
        out,
        new RegExp(`/${m.metadata.name} created \\(server dry run\\)`),
        `${m.kind} ${m.metadata.name}`,
      );
    }
    t.equal(out.match(/created \(server dry run\)/g)?.length, rest.length);
  });

  await t.test('applied for real, each ServiceAccount can do its job and no more', async (t) => {
    await run(['apply', '-f', '-'], asYaml(rest));
    const pdbs = await run(['get', 'pdb', '-A', '-o', 'name']);
    for (const m of rest.filter((m) => m.kind === 'PodDisruptionBudget'))
      t.match(
        pdbs,
        `poddisruptionbudget.policy/${m.metadata.name}`,
        `PDB ${m.metadata.name} stored`,
      );
    const can = async (sa: string, ...args: string[]): Promise<string> => {
      const r = await kubectl(fixture, [
        'auth',
        'can-i',
        `--as=system:serviceaccount:${namespace}:olmq-${sa}`,
        ...args,
      ]);
      return r.stdout.trim();
    };
    const checks: [string, string[], 'yes' | 'no'][] = [
      ['watcher', ['list', 'subscriptions.operators.coreos.com', '-A'], 'yes'],
      ['watcher', ['watch', 'clusterserviceversions.operators.coreos.com', '-A'], 'yes'],
      ['watcher', ['watch', 'apiservices.apiregistration.k8s.io'], 'yes'],
      ['watcher', ['update', 'leases.coordination.k8s.io', '-n', namespace], 'yes'],
      ['watcher', ['create', 'leases.coordination.k8s.io', '-n', namespace], 'yes'],
      ['watcher', ['update', 'leases.coordination.k8s.io', '-n', 'default'], 'no'],
      ['watcher', ['delete', 'deployments.apps', '-A'], 'no'],
      ['watcher', ['update', 'subscriptions.operators.coreos.com', '-A'], 'no'],
      [
        'catalog',
        ['update', 'catalogsources.operators.coreos.com', '--subresource=status', '-A'],
        'yes',
      ],
      ['catalog', ['create', 'pods', '-n', 'olm'], 'yes'],
      ['catalog', ['update', 'subscriptions.operators.coreos.com', '-A'], 'no'],
      ['catalog', ['create', 'clusterroles.rbac.authorization.k8s.io'], 'no'],
      [
        'resolve',
        ['update', 'subscriptions.operators.coreos.com', '--subresource=status', '-A'],
        'yes',
      ],
      ['resolve', ['list', 'clusterserviceversions.operators.coreos.com', '-A'], 'yes'],
      ['resolve', ['create', 'installplans.operators.coreos.com', '-A'], 'no'],
      ['resolve', ['update', 'clusterserviceversions.operators.coreos.com', '-A'], 'no'],
      ['plan', ['create', 'installplans.operators.coreos.com', '-n', 'ns1'], 'yes'],
      ['plan', ['create', 'deployments.apps', '-n', 'ns1'], 'no'],
      ['install', ['create', 'customresourcedefinitions.apiextensions.k8s.io'], 'yes'],
      ['install', ['escalate', 'clusterroles.rbac.authorization.k8s.io'], 'yes'],
      ['install', ['create', 'mutatingwebhookconfigurations.admissionregistration.k8s.io'], 'yes'],
      ['install', ['impersonate', 'serviceaccounts', '-n', 'ns1'], 'yes'],
      ['install', ['impersonate', 'users'], 'no'],
      ['rbac', ['bind', 'clusterroles.rbac.authorization.k8s.io'], 'yes'],
      [
        'rbac',
        ['update', 'operatorgroups.operators.coreos.com', '--subresource=status', '-A'],
        'yes',
      ],
      ['rbac', ['patch', 'namespaces'], 'yes'],
      ['rbac', ['create', 'deployments.apps', '-A'], 'no'],
      ['copy-csv', ['create', 'clusterserviceversions.operators.coreos.com', '-n', 'ns1'], 'yes'],
      ['copy-csv', ['update', 'olmconfigs.operators.coreos.com', '--subresource=status'], 'yes'],
      ['copy-csv', ['delete', 'deployments.apps', '-A'], 'no'],
      ['copy-csv', ['get', 'secrets', '-A'], 'no'],
      ['operator', ['create', 'operators.operators.coreos.com'], 'yes'],
      ['operator', ['update', 'operators.operators.coreos.com', '--subresource=status'], 'yes'],
      ['operator', ['patch', 'deployments.apps', '-n', 'ns1'], 'yes'],
      ['operator', ['update', 'deployments.apps', '-n', 'ns1'], 'no'],
      ['operator', ['get', 'secrets', '-A'], 'yes'],
      ['packageserver', ['create', 'subjectaccessreviews.authorization.k8s.io'], 'yes'],
      [
        'packageserver',
        ['get', 'configmaps/extension-apiserver-authentication', '-n', 'kube-system'],
        'yes',
      ],
      ['packageserver', ['patch', 'apiservices/v1.packages.operators.coreos.com'], 'yes'],
      ['packageserver', ['patch', 'apiservices/v1.operators.coreos.com'], 'no'],
      ['packageserver', ['get', 'secrets/olmq-packageserver-serving-cert', '-n', namespace], 'yes'],
      ['packageserver', ['get', 'secrets', '-A'], 'no'],
      ['packageserver', ['list', 'catalogsources.operators.coreos.com', '-A'], 'no'],
    ];
    for (const [sa, args, expected] of checks) {
      t.equal(await can(sa, ...args), expected, `olmq-${sa} can-i ${args.join(' ')}`);
    }
    // kubectl auth can-i cannot name a resource the server does not serve (it drops the
    // group), so these are asked with a SubjectAccessReview.
    const reviewed = async (
      sa: string,
      verb: string,
      group: string,
      resource: string,
    ): Promise<string> => {
      const review = {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: `system:serviceaccount:${namespace}:olmq-${sa}`,
          groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`],
          resourceAttributes: { verb, group, resource, namespace: 'olm' },
        },
      };
      return run(['create', '-f', '-', '-o', 'jsonpath={.status.allowed}'], JSON.stringify(review));
    };
    // Ties the watcher's ClusterRole to its table of kinds: a kind added there without RBAC fails.
    for (const { apiVersion, kind } of mirroredKinds) {
      const resource = served.get(`${apiVersion}/${kind}`);
      const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
      const qualified = group === '' ? resource : `${resource}.${group}`;
      for (const verb of ['list', 'watch']) {
        t.equal(
          await can('watcher', verb, qualified ?? kind, '-A'),
          'yes',
          `watcher ${verb} ${kind}`,
        );
      }
    }
    const reviews: [string, string, string, string, string][] = [
      ['catalog', 'create', 'networking.k8s.io', 'networkpolicies', 'true'],
      ['plan', 'create', 'batch', 'jobs', 'true'],
      ['plan', 'create', 'networking.k8s.io', 'networkpolicies', 'false'],
      ['catalog', 'create', 'batch', 'jobs', 'false'],
    ];
    for (const [sa, verb, group, resource, expected] of reviews) {
      t.equal(
        await reviewed(sa, verb, group, resource),
        expected,
        `olmq-${sa} may ${verb} ${resource}.${group} in olm: ${expected}`,
      );
    }
  });

  await t.test('the watcher mirrors and leads with only its ServiceAccount rights', async (t) => {
    const nats = await natsServerFor(t);
    const token = (await run(['create', 'token', 'olmq-watcher', '-n', namespace])).trim();
    const cluster = fixture.kubeConfig.getCurrentCluster();
    const kubeconfigPath = join(fixture.dir, 'watcher-kubeconfig');
    writeFileSync(
      kubeconfigPath,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: 'dev',
            cluster: { server: cluster?.server, 'certificate-authority-data': cluster?.caData },
          },
        ],
        users: [{ name: 'olmq-watcher', user: { token } }],
        contexts: [{ name: 'dev', context: { cluster: 'dev', user: 'olmq-watcher' } }],
        'current-context': 'dev',
      }),
    );
    const watcher = spawn(
      process.execPath,
      [
        olmqBin,
        'watcher',
        `--kubeconfig=${kubeconfigPath}`,
        `--nats-url=${nats.url}`,
        '--metrics-port=0',
        '--identity=replica-a',
        '--log-level=info',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const exited = new Promise<number | null>((resolve) => watcher.on('exit', resolve));
    t.teardown(async () => {
      if (watcher.exitCode === null) watcher.kill('SIGKILL');
      await exited;
    });
    let stderr = '';
    watcher.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const metricsUrl = await waitFor(
      'the watcher to log its metrics URL',
      () => {
        for (const line of stderr.split('\n')) {
          if (!line.startsWith('{')) continue;
          const entry = JSON.parse(line) as { msg?: string; metrics?: string };
          if (entry.msg === 'watcher started') return entry.metrics;
        }
        if (watcher.exitCode !== null) throw new Error(`watcher exited: ${stderr}`);
        return undefined;
      },
      30_000,
      50,
    );
    // Ready only once it leads and every kind's first list is mirrored: a missing grant
    // keeps it unready.
    await waitFor(
      'the watcher to lead and mirror every kind',
      async () => {
        const lease = await kubectl(fixture, [
          'get',
          'lease',
          'olmq-watcher-dev',
          '-n',
          namespace,
          '-o',
          'jsonpath={.spec.holderIdentity}',
        ]);
        if (lease.stdout !== 'replica-a') return false;
        return (await fetch(`${metricsUrl}/readyz`)).status === 200;
      },
      30_000,
      100,
    );
    t.notMatch(stderr, /forbidden/i, 'no request was refused');
    watcher.kill('SIGTERM');
    t.equal(await exited, 0, 'clean shutdown');
  });
});
