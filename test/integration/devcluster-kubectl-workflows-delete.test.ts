// kubectl wait and delete workflows, with every kubectl on the image: wait --for=jsonpath on a
// pod and on a custom resource's status, wait --for=delete of an object held by a finalizer,
// --timeout expiry, and delete --cascade=foreground|orphan|background of a Deployment.
import t from 'tap';
import type { ClusterFixture } from '../harness/devcluster.js';
import { kubectl } from '../harness/devcluster.js';
import { forEachKubectl, olmCrd, run, runJson } from '../harness/kubectl-workflows.js';
import { waitFor } from '../harness/wait.js';

interface Meta {
  name: string;
  finalizers?: string[];
  deletionTimestamp?: string;
  ownerReferences?: { kind: string; name: string }[];
}

interface Listed {
  kind: string;
  metadata: Meta;
}

async function listed(fixture: ClusterFixture, app: string): Promise<Listed[]> {
  return (
    await runJson<{ items: Listed[] }>(fixture, ['get', 'deployments,rs,pods', '-l', `app=${app}`])
  ).items;
}

async function deploymentWithPods(fixture: ClusterFixture, app: string): Promise<void> {
  await run(fixture, ['create', 'deployment', app, '--image=nginx', '--replicas=2']);
  await run(fixture, ['rollout', 'status', `deployment/${app}`, '--timeout=30s']);
}

const hold = 'example.olmq.io/hold';

forEachKubectl(
  t,
  (minor) => `devcluster kubectl 1.${minor} - wait and delete workflows`,
  async (t, fixture) => {
    await t.test('wait --for=jsonpath on a pod phase', async (t) => {
      await run(fixture, ['run', 'p1', '--image=busybox']);
      const out = await run(fixture, [
        'wait',
        '--for=jsonpath={.status.phase}=Running',
        '--timeout=30s',
        'pod/p1',
      ]);
      t.equal(out.trim(), 'pod/p1 condition met');
    });

    await t.test('wait --timeout expires with kubectl message and exit code 1', async (t) => {
      const expired = await kubectl(fixture, [
        'wait',
        '--for=condition=Ready=False',
        '--timeout=500ms',
        'pod/p1',
      ]);
      t.equal(expired.code, 1);
      t.match(expired.stderr, /timed out waiting for the condition on pods\/p1/);
      const missing = await kubectl(fixture, [
        'wait',
        '--for=condition=Available',
        '--timeout=1s',
        'deployment/absent',
      ]);
      t.equal(missing.code, 1);
      t.match(missing.stderr, /deployments.apps "absent" not found/);
    });

    await t.test('wait --for=jsonpath on a custom resource status patched later', async (t) => {
      await run(fixture, ['apply', '-f', olmCrd('catalogsources')]);
      await run(fixture, [
        'wait',
        '--for=condition=Established',
        '--timeout=30s',
        'crd/catalogsources.operators.coreos.com',
      ]);
      await run(
        fixture,
        ['apply', '-f', '-'],
        'apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\nmetadata: {name: cs1, namespace: default}\nspec: {sourceType: grpc, image: example/catalog:1}\n',
      );
      const waiting = kubectl(fixture, [
        'wait',
        '--for=jsonpath={.status.connectionState.lastObservedState}=READY',
        '--timeout=30s',
        'catalogsource/cs1',
      ]);
      await run(fixture, [
        'patch',
        'catalogsource',
        'cs1',
        '--subresource=status',
        '--type=merge',
        '-p',
        '{"status":{"connectionState":{"lastObservedState":"READY"}}}',
      ]);
      const result = await waiting;
      t.equal(result.code, 0, result.stderr);
      t.equal(result.stdout.trim(), 'catalogsource.operators.coreos.com/cs1 condition met');
    });

    await t.test('wait --for=delete returns once a finalizer is removed', async (t) => {
      await run(fixture, [
        'patch',
        'pod',
        'p1',
        '--type=merge',
        '-p',
        `{"metadata":{"finalizers":["${hold}"]}}`,
      ]);
      await run(fixture, ['delete', 'pod', 'p1', '--wait=false']);
      const held = await runJson<{ metadata: Meta }>(fixture, ['get', 'pod', 'p1']);
      t.ok(held.metadata.deletionTimestamp, 'the pod is terminating');
      const stillThere = await kubectl(fixture, [
        'wait',
        '--for=delete',
        '--timeout=300ms',
        'pod/p1',
      ]);
      t.equal(stillThere.code, 1, 'wait times out while the finalizer holds');
      const waiting = kubectl(fixture, ['wait', '--for=delete', '--timeout=30s', 'pod/p1']);
      await run(fixture, [
        'patch',
        'pod',
        'p1',
        '--type=merge',
        '-p',
        '{"metadata":{"finalizers":null}}',
      ]);
      const result = await waiting;
      t.equal(result.code, 0, result.stderr);
      // kubectl says nothing when the object is already gone at its first look (a race here).
      t.match(result.stdout.trim(), /^(pod\/p1 condition met)?$/);
      t.equal((await kubectl(fixture, ['get', 'pod', 'p1'])).code, 1, 'the pod is gone');
    });

    await t.test('delete --cascade=foreground waits on the dependents', async (t) => {
      await deploymentWithPods(fixture, 'fg');
      const [heldPod] = (await listed(fixture, 'fg')).filter((o) => o.kind === 'Pod');
      const podName = heldPod?.metadata.name ?? '';
      await run(fixture, [
        'patch',
        'pod',
        podName,
        '--type=merge',
        '-p',
        `{"metadata":{"finalizers":["${hold}"]}}`,
      ]);
      t.equal(
        (
          await run(fixture, ['delete', 'deployment', 'fg', '--cascade=foreground', '--wait=false'])
        ).trim(),
        'deployment.apps "fg" deleted',
      );
      const terminating = await waitFor('the ReplicaSet to be in foreground deletion', async () => {
        const objects = await listed(fixture, 'fg');
        const rs = objects.find((o) => o.kind === 'ReplicaSet');
        return rs?.metadata.finalizers?.includes('foregroundDeletion') ? objects : undefined;
      });
      const deployment = terminating.find((o) => o.kind === 'Deployment');
      t.ok(deployment, 'the Deployment stays while a dependent remains');
      t.same(deployment?.metadata.finalizers, ['foregroundDeletion']);
      t.ok(deployment?.metadata.deletionTimestamp, 'the Deployment has a deletionTimestamp');
      t.ok(
        terminating.find((o) => o.metadata.name === podName)?.metadata.deletionTimestamp,
        'the held pod is terminating',
      );
      await run(fixture, [
        'patch',
        'pod',
        podName,
        '--type=merge',
        '-p',
        '{"metadata":{"finalizers":null}}',
      ]);
      const done = await kubectl(fixture, [
        'wait',
        '--for=delete',
        '--timeout=30s',
        'deployment/fg',
      ]);
      t.equal(done.code, 0, done.stderr);
      t.same(await listed(fixture, 'fg'), [], 'owner and dependents are gone');
    });

    await t.test('delete --cascade=orphan keeps the dependents and frees them', async (t) => {
      await deploymentWithPods(fixture, 'or');
      await run(fixture, ['delete', 'deployment', 'or', '--cascade=orphan']);
      const objects = await waitFor('the ReplicaSet to lose its owner', async () => {
        const now = await listed(fixture, 'or');
        const rs = now.find((o) => o.kind === 'ReplicaSet');
        return rs && rs.metadata.ownerReferences === undefined ? now : undefined;
      });
      t.notOk(
        objects.some((o) => o.kind === 'Deployment'),
        'the Deployment is gone',
      );
      t.equal(objects.filter((o) => o.kind === 'Pod').length, 2, 'the pods stay');
      t.ok(
        objects
          .filter((o) => o.kind === 'Pod')
          .every((o) => o.metadata.ownerReferences?.[0]?.kind === 'ReplicaSet'),
        'the pods still belong to the ReplicaSet',
      );
    });

    await t.test('delete --cascade=background (the default) removes the dependents', async (t) => {
      await deploymentWithPods(fixture, 'bg');
      t.equal(
        (await run(fixture, ['delete', 'deployment', 'bg'])).trim(),
        'deployment.apps "bg" deleted',
      );
      await waitFor(
        'the ReplicaSet and pods to be collected',
        async () => (await listed(fixture, 'bg')).length === 0,
      );
      t.pass('the garbage collector removed the ReplicaSet and its pods');
    });
  },
  300,
);
