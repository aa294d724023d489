// A CSV whose deployment's container ports omit `protocol` is stored with `protocol: TCP`, as
// upstream's CRD (generated from the Kubernetes types) defaults it — whether olmq installs it
// from a Subscription or a user applies it with kubectl — while the InstallPlan's CSV step keeps
// the bundle's manifest as it is, as upstream's does.
import { join } from 'node:path';
import t from 'tap';
import { stringify } from 'yaml';
import type { KubeObject } from '../../shared/kube/client.js';
import { kubectl, startCluster, type ClusterFixture } from '../harness/devcluster.js';
import { portsCsv } from '../fixtures/ports-csv.js';
import { getCsv, namespaceWithOperatorGroup, waitForCsvPhase } from '../harness/install.js';
import { pipelineFor } from '../harness/pipeline.js';
import { repoRoot } from '../harness/repo.js';
import { waitFor } from '../harness/wait.js';

const v1alpha1 = 'operators.coreos.com/v1alpha1';
const csvName = 'prometheusoperator.0.56.3';

interface Port {
  name?: string;
  containerPort?: number;
  protocol?: string;
}

/** The ports of every container of every deployment of a CSV (parsed or as JSON text). */
function portsOf(csv: unknown): Port[] {
  const object = (typeof csv === 'string' ? JSON.parse(csv) : csv) as {
    spec?: {
      install?: {
        spec?: {
          deployments?: {
            spec?: { template?: { spec?: { containers?: { ports?: Port[] }[] } } };
          }[];
        };
      };
    };
  };
  return (object.spec?.install?.spec?.deployments ?? []).flatMap((d) =>
    (d.spec?.template?.spec?.containers ?? []).flatMap((c) => c.ports ?? []),
  );
}

interface PlanObject extends KubeObject {
  status?: { plan?: { resource: { kind: string; name: string; manifest?: string } }[] };
}

t.test(
  'csv port protocol - a CSV installed from a Subscription is stored with protocol TCP',
  async (t) => {
    const { client } = await pipelineFor(t);
    await namespaceWithOperatorGroup(client, 'ports');
    await client.create({
      apiVersion: v1alpha1,
      kind: 'Subscription',
      metadata: { name: 'prometheus', namespace: 'ports' },
      spec: {
        name: 'prometheus',
        channel: 'beta',
        source: 'community',
        sourceNamespace: 'olm',
        installPlanApproval: 'Automatic',
      },
    });
    await waitForCsvPhase(client, 'ports', csvName, 'Succeeded', undefined, 60_000);
    const stored = await getCsv(client, 'ports', csvName);
    t.same(portsOf(stored), [{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);

    const step = await waitFor(
      'the InstallPlan step of the CSV',
      async () =>
        (
          await client.list<PlanObject>({
            apiVersion: v1alpha1,
            kind: 'InstallPlan',
            namespace: 'ports',
          })
        ).items
          .flatMap((plan) => plan.status?.plan ?? [])
          .find((s) => s.resource.kind === 'ClusterServiceVersion' && s.resource.name === csvName),
      10_000,
    );
    t.same(
      portsOf(step.resource.manifest ?? '{}'),
      [{ name: 'http', containerPort: 8080 }],
      "the plan's step holds the bundle's CSV, undefaulted",
    );
  },
);

let fixture: ClusterFixture | undefined;
t.teardown(() => fixture?.close());

async function run(args: string[], input?: string): Promise<string> {
  if (fixture === undefined) throw new Error('no cluster');
  const result = await kubectl(fixture, args, input);
  if (result.code !== 0)
    throw new Error(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

const appliedCsv = { ...portsCsv, metadata: { ...portsCsv.metadata, namespace: 'default' } };

t.test(
  'csv port protocol - kubectl apply stores protocol TCP; diff and a re-apply change nothing',
  async (t) => {
    fixture = await startCluster();
    await run(['apply', '-f', join(repoRoot, 'crds')]);
    await run([
      'wait',
      '--for=condition=Established',
      '--timeout=30s',
      'crd/clusterserviceversions.operators.coreos.com',
    ]);
    const manifest = stringify(appliedCsv);
    await run(['apply', '-f', '-'], manifest);
    const stored = JSON.parse(await run(['get', 'csv', 'ports.v1.0.0', '-o', 'json'])) as {
      spec: { install: { spec: { deployments: { spec: Record<string, unknown> }[] } } };
    };
    t.same(portsOf(stored), [
      { name: 'metrics', containerPort: 8080, protocol: 'TCP' },
      { name: 'dns', containerPort: 53, protocol: 'UDP' },
    ]);
    const pod = stored.spec.install.spec.deployments[0]?.spec['template'] as {
      spec: { initContainers: { ports: Port[] }[] };
    };
    t.same(pod.spec.initContainers[0]?.ports, [{ containerPort: 9000, protocol: 'TCP' }]);
    t.same(
      stored.spec.install.spec.deployments[0]?.spec['selector'],
      { matchLabels: { app: 'ports' } },
      'the rest of the DeploymentSpec is kept',
    );

    if (fixture === undefined) throw new Error('no cluster');
    const diff = await kubectl(fixture, ['diff', '-f', '-'], manifest);
    t.equal(diff.code, 0, `kubectl diff finds no difference: ${diff.stdout}${diff.stderr}`);
    // kubectl sends CRs a JSON merge patch, which replaces the (atomic) deployments list whole:
    // it reports "configured", as against kube-apiserver with upstream's CRD, yet the defaulted
    // result equals the stored object, so nothing is written.
    const before = stored as unknown as KubeObject;
    await run(['apply', '-f', '-'], manifest);
    const after = JSON.parse(await run(['get', 'csv', 'ports.v1.0.0', '-o', 'json'])) as KubeObject;
    t.equal(
      after.metadata.resourceVersion,
      before.metadata.resourceVersion,
      'a re-apply writes nothing',
    );
    t.same(portsOf(after), portsOf(stored));
  },
);
