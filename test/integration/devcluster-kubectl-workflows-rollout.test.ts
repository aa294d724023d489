// kubectl workflows on workloads, with every kubectl on the image: scale (a Deployment and a
// custom resource, through their scale subresources), rollout status, restart, history, undo,
// pause and resume, old ReplicaSets pruned past revisionHistoryLimit, and wait --for=condition.
// Regression: `rollout undo` failed ("failed restoring revision 0") because
// the simulated deployment controller kept no `deployment.kubernetes.io/revision` on the
// Deployment, and made a new ReplicaSet for a restored template instead of reusing the old one.
import t from 'tap';
import type { ClusterFixture } from '../harness/devcluster.js';
import { kubectl } from '../harness/devcluster.js';
import { forEachKubectl, run, runJson, widgetsCrdPath } from '../harness/kubectl-workflows.js';
import { waitFor } from '../harness/wait.js';

interface ReplicaSet {
  metadata: { name: string; annotations?: Record<string, string> };
  spec: { replicas: number; template: { spec: { containers: { image: string }[] } } };
}

interface Deployment {
  metadata: { generation?: number; annotations?: Record<string, string> };
  spec: { replicas: number; template: { spec: { containers: { image: string }[] } } };
  status?: {
    observedGeneration?: number;
    readyReplicas?: number;
    conditions?: { type: string; status: string; reason?: string }[];
  };
}

const revisionOf = (rs: ReplicaSet): string =>
  rs.metadata.annotations?.['deployment.kubernetes.io/revision'] ?? '';

async function replicaSets(fixture: ClusterFixture, app: string): Promise<ReplicaSet[]> {
  return (await runJson<{ items: ReplicaSet[] }>(fixture, ['get', 'rs', '-l', `app=${app}`])).items;
}

async function runningPods(fixture: ClusterFixture, app: string): Promise<number> {
  const pods = await runJson<{ items: { status?: { phase?: string } }[] }>(fixture, [
    'get',
    'pods',
    '-l',
    `app=${app}`,
  ]);
  return pods.items.filter((p) => p.status?.phase === 'Running').length;
}

forEachKubectl(
  t,
  (minor) => `devcluster kubectl 1.${minor} - scale, rollout and wait on workloads`,
  async (t, fixture) => {
    await run(fixture, ['create', 'deployment', 'web', '--image=nginx:1', '--replicas=1']);

    await t.test('rollout status returns once the rollout is complete', async (t) => {
      const out = await run(fixture, ['rollout', 'status', 'deployment/web', '--timeout=30s']);
      t.match(out, /deployment "web" successfully rolled out/);
      const deployment = await runJson<Deployment>(fixture, ['get', 'deployment', 'web']);
      t.equal(deployment.status?.readyReplicas, 1, 'the pod is ready when status returns');
    });

    await t.test('scale --replicas on a Deployment makes its pods', async (t) => {
      t.equal(
        (await run(fixture, ['scale', 'deployment/web', '--replicas=3'])).trim(),
        'deployment.apps/web scaled',
      );
      t.equal((await runJson<Deployment>(fixture, ['get', 'deployment', 'web'])).spec.replicas, 3);
      await run(fixture, ['rollout', 'status', 'deployment/web', '--timeout=30s']);
      t.equal(await runningPods(fixture, 'web'), 3, 'three pods run');
    });

    await t.test('scale --current-replicas refuses a mismatch and changes nothing', async (t) => {
      const refused = await kubectl(fixture, [
        'scale',
        'deployment/web',
        '--current-replicas=2',
        '--replicas=5',
      ]);
      t.not(refused.code, 0);
      t.match(refused.stderr, /Expected replicas to be 2, was 3/);
      t.equal((await runJson<Deployment>(fixture, ['get', 'deployment', 'web'])).spec.replicas, 3);
      await run(fixture, ['scale', 'deployment/web', '--current-replicas=3', '--replicas=2']);
      t.equal((await runJson<Deployment>(fixture, ['get', 'deployment', 'web'])).spec.replicas, 2);
    });

    await t.test('scale --replicas on a custom resource with a scale subresource', async (t) => {
      await run(fixture, ['apply', '-f', widgetsCrdPath]);
      await run(fixture, [
        'wait',
        '--for=condition=Established',
        '--timeout=30s',
        'crd/widgets.example.olmq.io',
      ]);
      await run(
        fixture,
        ['apply', '-f', '-'],
        'apiVersion: example.olmq.io/v1\nkind: Widget\nmetadata: {name: w1, namespace: default}\nspec: {size: small}\n',
      );
      t.equal(
        (await run(fixture, ['scale', 'widget/w1', '--replicas=4'])).trim(),
        'widget.example.olmq.io/w1 scaled',
      );
      const widget = await runJson<{ spec: { replicas: number } }>(fixture, [
        'get',
        'widget',
        'w1',
      ]);
      t.equal(widget.spec.replicas, 4, 'spec.replicas (specReplicasPath) is set');
      const refused = await kubectl(fixture, [
        'scale',
        'widget/w1',
        '--current-replicas=1',
        '--replicas=2',
      ]);
      t.not(refused.code, 0);
      t.match(refused.stderr, /Expected replicas to be 1, was 4/);
    });

    await t.test('wait --for=condition=Available on a Deployment', async (t) => {
      const out = await run(fixture, [
        'wait',
        '--for=condition=Available',
        '--timeout=30s',
        'deployment/web',
      ]);
      t.equal(out.trim(), 'deployment.apps/web condition met');
    });

    await t.test('rollout restart makes a new ReplicaSet and status waits for it', async (t) => {
      t.equal(
        (await run(fixture, ['rollout', 'restart', 'deployment/web'])).trim(),
        'deployment.apps/web restarted',
      );
      await run(fixture, ['rollout', 'status', 'deployment/web', '--timeout=30s']);
      const sets = await replicaSets(fixture, 'web');
      t.equal(sets.length, 2, 'a second ReplicaSet');
      t.same(sets.map(revisionOf).sort(), ['1', '2']);
      const current = sets.find((rs) => revisionOf(rs) === '2');
      t.equal(current?.spec.replicas, 2, 'the new ReplicaSet has the replicas');
    });

    await t.test(
      'rollout history lists the revisions, undo restores the previous one',
      async (t) => {
        await run(fixture, ['set', 'image', 'deployment/web', 'nginx=nginx:2']);
        await run(fixture, ['rollout', 'status', 'deployment/web', '--timeout=30s']);
        const history = await run(fixture, ['rollout', 'history', 'deployment/web']);
        t.match(history, /REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>\n3\s+<none>/);
        const deployment = await runJson<Deployment>(fixture, ['get', 'deployment', 'web']);
        t.equal(deployment.metadata.annotations?.['deployment.kubernetes.io/revision'], '3');

        t.equal(
          (await run(fixture, ['rollout', 'undo', 'deployment/web'])).trim(),
          'deployment.apps/web rolled back',
        );
        await run(fixture, ['rollout', 'status', 'deployment/web', '--timeout=30s']);
        const restored = await runJson<Deployment>(fixture, ['get', 'deployment', 'web']);
        t.equal(restored.spec.template.spec.containers[0]?.image, 'nginx:1');
        const sets = await replicaSets(fixture, 'web');
        t.equal(sets.length, 3, 'the old ReplicaSet is reused, none is added');
        const active = sets.filter((rs) => rs.spec.replicas > 0);
        t.equal(active.length, 1);
        t.equal(active[0] && revisionOf(active[0]), '4', 'the restored ReplicaSet gets revision 4');
        t.equal(
          active[0]?.metadata.annotations?.['deployment.kubernetes.io/revision-history'],
          '2',
        );
        t.match(
          await run(fixture, ['rollout', 'history', 'deployment/web']),
          /REVISION\s+CHANGE-CAUSE\n1\s+<none>\n3\s+<none>\n4\s+<none>/,
        );

        t.match(
          await run(fixture, ['rollout', 'undo', 'deployment/web', '--to-revision=4']),
          /skipped rollback \(current template already matches revision 4\)/,
        );
        t.equal(
          (await run(fixture, ['rollout', 'undo', 'deployment/web', '--to-revision=3'])).trim(),
          'deployment.apps/web rolled back',
        );
        await waitFor('the nginx:2 ReplicaSet to be active again', async () => {
          const now = await replicaSets(fixture, 'web');
          return now.some(
            (rs) =>
              rs.spec.replicas === 2 && rs.spec.template.spec.containers[0]?.image === 'nginx:2',
          );
        });
      },
    );

    await t.test('rollout pause holds a template change until resume', async (t) => {
      t.equal(
        (await run(fixture, ['rollout', 'pause', 'deployment/web'])).trim(),
        'deployment.apps/web paused',
      );
      await run(fixture, ['set', 'image', 'deployment/web', 'nginx=nginx:3']);
      const paused = await waitFor('the paused change to be observed', async () => {
        const d = await runJson<Deployment>(fixture, ['get', 'deployment', 'web']);
        const observed = d.status?.observedGeneration === d.metadata.generation;
        return observed ? d : undefined;
      });
      t.match(
        paused.status?.conditions?.find((c) => c.type === 'Progressing'),
        {
          status: 'Unknown',
          reason: 'DeploymentPaused',
          message: 'Deployment is paused',
        },
      );
      const sets = await replicaSets(fixture, 'web');
      t.equal(sets.length, 3, 'no ReplicaSet for the new template while paused');
      t.notOk(sets.some((rs) => rs.spec.template.spec.containers[0]?.image === 'nginx:3'));
      t.equal(
        (await run(fixture, ['rollout', 'resume', 'deployment/web'])).trim(),
        'deployment.apps/web resumed',
      );
      await run(fixture, ['rollout', 'status', 'deployment/web', '--timeout=30s']);
      const resumed = await replicaSets(fixture, 'web');
      const active = resumed.filter((rs) => rs.spec.replicas > 0);
      t.equal(active.length, 1);
      t.equal(active[0]?.spec.template.spec.containers[0]?.image, 'nginx:3');
      t.equal(active[0] && revisionOf(active[0]), '6');
    });

    await t.test('old ReplicaSets beyond revisionHistoryLimit are deleted', async (t) => {
      await run(fixture, [
        'patch',
        'deployment',
        'web',
        '--type=merge',
        '-p',
        '{"spec":{"revisionHistoryLimit":1}}',
      ]);
      const kept = await waitFor('the history to shrink to one old ReplicaSet', async () => {
        const sets = await replicaSets(fixture, 'web');
        return sets.length === 2 ? sets : undefined;
      });
      t.same(kept.map(revisionOf).sort(), ['5', '6'], 'the newest old revision is kept');
    });
  },
  300,
);
