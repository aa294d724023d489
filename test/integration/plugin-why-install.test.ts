// `kubectl olmq why` through the real kubectl names the cause of a Subscription stuck while
// installing, each built for real: a plan whose bundle holds an object the API server refuses,
// and a Deployment whose pods never become ready (the devcluster's fail annotation on the pod
// template).
import t from 'tap';
import { failAnnotation } from '../../devcluster/index.js';
import { kubectlMissing } from '../harness/devcluster.js';
import {
  catalogState,
  kubectlOlmq,
  pluginClusterFor,
  pluginPath,
  serveCatalog,
} from '../harness/plugin.js';
import { etcdVariant, namespaceWithGroup, subscribe, whyNames } from '../harness/plugin-why.js';

const missing = kubectlMissing();
if (missing !== undefined) throw new Error(missing);

const { fixture, client } = await pluginClusterFor(t);
const bin = pluginPath(t);
const olmq = (...args: string[]) => kubectlOlmq(fixture, bin, args);

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
  await namespaceWithGroup(fixture, client, 'why-step');
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
  const { json, text } = await whyNames(olmq, 'why-step', 'etcd', 'InstallPlanFailed');
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
  await namespaceWithGroup(fixture, client, 'why-deploy');
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
  const { json, text } = await whyNames(olmq, 'why-deploy', 'etcd', 'DeploymentUnavailable');
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
