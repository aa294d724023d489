// `kubectl olmq why` through the real kubectl names the cause of a stuck Subscription for each
// way an install gets stuck, each built for real on the devcluster: a catalog whose registry is
// dead, a package requiring an API nobody provides, a plan waiting for manual approval, a plan
// whose bundle holds an object the API server refuses, and a Deployment whose pods never
// become ready (the devcluster's fail annotation on the pod template).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { failAnnotation } from '../../devcluster/index.js';
import { parseCatalogText } from '../../shared/catalog/index.js';
import type { KubeClient } from '../../shared/kube/client.js';
import { kubectl, kubectlMissing } from '../harness/devcluster.js';
import {
  catalogState,
  kubectlOlmq,
  pluginClusterFor,
  pluginPath,
  serveCatalog,
} from '../harness/plugin.js';
import { smallCatalog } from '../harness/repo.js';
import { waitFor } from '../harness/wait.js';

const missing = kubectlMissing();
if (missing !== undefined) throw new Error(missing);

const { fixture, client } = await pluginClusterFor(t);
const bin = pluginPath(t);
const olmq = (...args: string[]) => kubectlOlmq(fixture, bin, args);

interface WhyJson {
  summary: string;
  finding?: { cause: string; message: string; fix: string[] };
  links: { stage: string; status: string; detail: string }[];
}

/** Waits until `why` names `cause`; returns its JSON and its text screen. */
async function whyNames(
  namespace: string,
  sub: string,
  cause: string,
): Promise<{ json: WhyJson; text: string }> {
  const json = await waitFor(
    `why ${namespace}/${sub} to name ${cause}`,
    async () => {
      const r = await olmq('why', sub, '-n', namespace, '-o', 'json');
      if (r.code !== 0) throw new Error(r.stderr);
      const out = JSON.parse(r.stdout) as WhyJson;
      if (out.finding?.cause !== cause) throw new Error(`found ${out.finding?.cause ?? 'nothing'}`);
      return out;
    },
    90_000,
    500,
  );
  const text = await olmq('why', sub, '-n', namespace);
  return { json, text: text.stdout };
}

async function namespaceWithGroup(namespace: string): Promise<void> {
  await kubectl(fixture, ['create', 'namespace', namespace]);
  await client.create({
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name: namespace, namespace },
    spec: { targetNamespaces: [namespace] },
  });
}

async function subscribe(
  client: KubeClient,
  namespace: string,
  spec: Record<string, unknown>,
): Promise<void> {
  await client.create({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: { name: String(spec['name']), namespace },
    spec,
  });
}

/** The etcd package of the example catalog with `mutate` applied to every bundle object. */
function etcdVariant(
  t: Test,
  mutate: (object: Record<string, unknown>) => Record<string, unknown>[],
): string {
  const dir = mkdtempSync(join(tmpdir(), 'olmq-plugin-catalog-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(smallCatalog, 'etcd', 'catalog.json');
  const docs = parseCatalogText(readFileSync(file, 'utf8'), file).map((o) => {
    if (o.schema !== 'olm.bundle') return o.value;
    const properties = (
      o.value['properties'] as { type: string; value: { data?: string } }[]
    ).flatMap((p) => {
      if (p.type !== 'olm.bundle.object' || p.value.data === undefined) return [p];
      const object = JSON.parse(Buffer.from(p.value.data, 'base64').toString('utf8')) as Record<
        string,
        unknown
      >;
      return mutate(object).map((m) => ({
        type: p.type,
        value: { data: Buffer.from(JSON.stringify(m)).toString('base64') },
      }));
    });
    return { ...o.value, properties };
  });
  mkdirSync(join(dir, 'etcd'));
  writeFileSync(join(dir, 'etcd', 'catalog.json'), docs.map((d) => JSON.stringify(d)).join('\n'));
  return dir;
}

t.test('why - an unhealthy catalog: its registry does not answer', async (t) => {
  await namespaceWithGroup('why-catalog');
  await client.create({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'CatalogSource',
    metadata: { name: 'dead', namespace: 'why-catalog' },
    spec: { sourceType: 'grpc', address: '127.0.0.1:1' },
  });
  await subscribe(client, 'why-catalog', {
    name: 'etcd',
    source: 'dead',
    sourceNamespace: 'why-catalog',
    channel: 'singlenamespace-alpha',
  });
  const { json, text } = await whyNames('why-catalog', 'etcd', 'CatalogUnhealthy');
  t.match(
    json.finding?.message,
    /catalog why-catalog\/dead is unhealthy .*its registry 127\.0\.0\.1:1 does not answer/,
  );
  t.match(json.finding?.fix[0], /kubectl get catalogsource dead -n why-catalog -o yaml/);
  t.match(text, /=>\s+Catalog\s+why-catalog\/dead\s+FAILED/, 'the failing link is marked');
  t.match(text, /Cause: CatalogUnhealthy: /);
  t.match(
    text,
    /\n\s+InstallPlan\s+<none>\s+NOT REACHED\s+no plan yet\n/,
    'links after the cause are not reached',
  );
  t.notMatch(text, /<none>\s+Subscription/, 'no marker is a blank cell');
});

t.test(
  'why - unsatisfiable constraints: the package requires an API nobody provides',
  async (t) => {
    await namespaceWithGroup('why-unsat');
    // node-healthcheck-operator v0.1.1 (channel alpha) requires PoisonPillRemediation, which no
    // package of the catalog provides.
    await subscribe(client, 'why-unsat', {
      name: 'node-healthcheck-operator',
      source: 'community',
      sourceNamespace: 'olm',
      channel: 'alpha',
    });
    const { json, text } = await whyNames(
      'why-unsat',
      'node-healthcheck-operator',
      'ResolutionFailed',
    );
    t.match(json.finding?.message, /constraints cannot be satisfied: .*PoisonPillRemediation/);
    t.match(text, /=>\s+Resolution\s+node-healthcheck-operator\s+FAILED/);
    t.match(text, /Fix:\s+see what the catalogs offer: kubectl olmq list-available -n why-unsat/);
  },
);

t.test('why - a plan waiting for manual approval', async (t) => {
  const installed = await olmq(
    'install',
    'etcd',
    '-n',
    'why-approval',
    '--approval',
    'Manual',
    '--create-operator-group',
  );
  t.equal(installed.code, 1, 'the namespace does not exist yet');
  await kubectl(fixture, ['create', 'namespace', 'why-approval']);
  const again = await olmq(
    'install',
    'etcd',
    '-n',
    'why-approval',
    '--approval',
    'Manual',
    '--create-operator-group',
  );
  t.equal(again.code, 0, again.stderr);
  const { json, text } = await whyNames('why-approval', 'etcd', 'ApprovalRequired');
  t.match(
    json.finding?.message,
    /InstallPlan install-\w+ waits for manual approval to install etcdoperator\.v0\.9\.4/,
  );
  t.equal(json.finding?.fix[0], 'approve with: kubectl olmq upgrade etcd -n why-approval');
  t.match(
    json.finding?.fix[1],
    /^or: kubectl patch installplan install-\w+ -n why-approval --type merge -p '\{"spec":\{"approved":true\}\}'$/,
  );
  t.match(text, /=>\s+InstallPlan\s+install-\w+\s+FAILED\s+RequiresApproval/);
});

t.test('why - a failed plan step: the bundle holds an object the API server refuses', async (t) => {
  // Every etcd bundle also carries a Service with port 0, which the API server refuses (422).
  const dir = etcdVariant(t, (object) =>
    object['kind'] !== 'ClusterServiceVersion'
      ? [object]
      : [
          object,
          {
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { name: 'etcd-broken' },
            spec: { ports: [{ port: 0 }] },
          },
        ],
  );
  await namespaceWithGroup('why-step');
  await client.create({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'CatalogSource',
    metadata: { name: 'broken', namespace: 'why-step' },
    spec: { sourceType: 'grpc', address: await serveCatalog(t, dir) },
  });
  await catalogState(client, 'why-step', 'broken');
  await subscribe(client, 'why-step', {
    name: 'etcd',
    source: 'broken',
    sourceNamespace: 'why-step',
    channel: 'singlenamespace-alpha',
  });
  const { json, text } = await whyNames('why-step', 'etcd', 'InstallPlanFailed');
  t.match(json.finding?.message, /InstallPlan install-\w+ failed: .*etcd-broken/);
  t.match(text, /=>\s+InstallPlan\s+install-\w+\s+FAILED\s+Failed: /);
  t.match(text, /Fix:\s+the bundle holds an object the API server refuses/);
});

t.test('why - a Deployment that never becomes available', async (t) => {
  // The CSV's pod template carries the devcluster's fail annotation: pods run, never ready.
  const dir = etcdVariant(t, (object) => {
    if (object['kind'] !== 'ClusterServiceVersion') return [object];
    const spec = object['spec'] as {
      install: {
        spec: {
          deployments: {
            spec: { template: { metadata?: { annotations?: Record<string, string> } } };
          }[];
        };
      };
    };
    for (const d of spec.install.spec.deployments) {
      const metadata = (d.spec.template.metadata ??= {});
      metadata.annotations = { ...metadata.annotations, [failAnnotation]: 'unready' };
    }
    return [object];
  });
  await namespaceWithGroup('why-deploy');
  await client.create({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'CatalogSource',
    metadata: { name: 'unready', namespace: 'why-deploy' },
    spec: { sourceType: 'grpc', address: await serveCatalog(t, dir) },
  });
  await catalogState(client, 'why-deploy', 'unready');
  await subscribe(client, 'why-deploy', {
    name: 'etcd',
    source: 'unready',
    sourceNamespace: 'why-deploy',
    channel: 'singlenamespace-alpha',
  });
  const { json, text } = await whyNames('why-deploy', 'etcd', 'DeploymentUnavailable');
  t.match(
    json.finding?.message,
    /Deployment etcd-operator does not become available: 0\/1 available .*pods: etcd-operator-\S+ Running, not ready/,
  );
  t.equal(
    json.finding?.fix[0],
    'see why its pods are not ready: kubectl describe deployment etcd-operator -n why-deploy',
  );
  t.match(text, /=>\s+Deployment\s+etcd-operator\s+FAILED/);
});
