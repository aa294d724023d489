// batch/v1 Jobs in the devcluster, through client-node and kubectl: defaults, pods run to
// completion, backoff and deadline failures, kubectl's columns and wait, garbage collection; and
// the policy/v1 and networking.k8s.io/v1 kinds served beside them.
import { BatchV1Api, CoreV1Api, type V1Job, type V1Pod } from '@kubernetes/client-node';
import t from 'tap';
import { failAnnotation } from '../../devcluster/index.js';
import {
  kubectl,
  kubectlMissing,
  startCluster,
  type ClusterFixture,
} from '../harness/devcluster.js';
import { jobFinished, jobPods, type JobScope } from '../harness/jobs.js';
import { waitFor } from '../harness/wait.js';

let fixture: ClusterFixture;
let batch: BatchV1Api;
let core: CoreV1Api;

t.before(async () => {
  fixture = await startCluster({ kubernetesVersion: 'v1.30.6' });
  batch = fixture.kubeConfig.makeApiClient(BatchV1Api);
  core = fixture.kubeConfig.makeApiClient(CoreV1Api);
});
t.teardown(async () => {
  await fixture.close();
});

const namespace = 'default';

function job(name: string, spec: Partial<NonNullable<V1Job['spec']>> = {}, fail = false): V1Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, ...(fail ? { annotations: { [failAnnotation]: 'fail' } } : {}) },
    spec: {
      template: {
        spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox:1.36' }] },
      },
      ...spec,
    },
  };
}

const scope = (): JobScope => ({ batch, core, namespace });
const podsOf = (name: string): Promise<V1Pod[]> => jobPods(scope(), name);
const finishedCondition = (name: string, type: 'Complete' | 'Failed'): Promise<V1Job> =>
  jobFinished(scope(), name, type);

void t.test('jobs - create applies kube 1.30 defaults and the generated selector', async (t) => {
  const created = await batch.createNamespacedJob({ namespace, body: job('defaults') });
  const uid = created.metadata?.uid ?? '';
  t.ok(uid !== '', 'uid assigned');
  t.match(created.spec, {
    backoffLimit: 6,
    completions: 1,
    parallelism: 1,
    completionMode: 'NonIndexed',
    suspend: false,
    podReplacementPolicy: 'TerminatingOrFailed',
    selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } },
  });
  t.same(created.spec?.template.metadata?.labels, {
    'batch.kubernetes.io/controller-uid': uid,
    'batch.kubernetes.io/job-name': 'defaults',
    'controller-uid': uid,
    'job-name': 'defaults',
  });
});

void t.test('jobs - a template with restartPolicy Always is refused', async (t) => {
  const body = job('always');
  if (body.spec) body.spec.template.spec = { containers: [{ name: 'c', image: 'busybox' }] };
  const error = await batch.createNamespacedJob({ namespace, body }).then(
    () => undefined,
    (e: unknown) => e as { code?: number; body?: unknown },
  );
  t.equal(error?.code, 422);
  const status = JSON.parse(String(error?.body)) as { message: string };
  t.equal(
    status.message,
    'Job.batch "always" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"',
  );
});

void t.test('jobs - a job runs its pod to completion and reports Complete', async (t) => {
  await batch.createNamespacedJob({ namespace, body: job('done') });
  const done = await finishedCondition('done', 'Complete');
  t.equal(done.status?.succeeded, 1);
  t.equal(done.status?.active, undefined);
  t.equal(done.status?.ready, 0);
  t.ok(done.status?.startTime, 'startTime');
  t.ok(done.status?.completionTime, 'completionTime');
  const complete = done.status?.conditions?.find((c) => c.type === 'Complete');
  t.equal(complete?.reason, undefined, 'kube 1.30 writes Complete without a reason');
  const pods = await podsOf('done');
  t.equal(pods.length, 1);
  const pod = pods[0];
  t.match(pod?.metadata?.name, /^done-[a-z0-9]{5}$/);
  t.equal(pod?.status?.phase, 'Succeeded');
  t.equal(pod?.metadata?.labels?.['job-name'], 'done');
  t.match(pod?.metadata?.ownerReferences, [{ kind: 'Job', name: 'done', controller: true }]);
});

void t.test(
  'jobs - failing pods are replaced up to backoffLimit, then Failed BackoffLimitExceeded',
  async (t) => {
    await batch.createNamespacedJob({ namespace, body: job('flaky', { backoffLimit: 2 }, true) });
    const failed = await finishedCondition('flaky', 'Failed');
    const condition = failed.status?.conditions?.find((c) => c.type === 'Failed');
    t.equal(condition?.reason, 'BackoffLimitExceeded');
    t.equal(condition?.message, 'Job has reached the specified backoff limit');
    t.equal(failed.status?.failed, 3);
    const pods = await podsOf('flaky');
    t.equal(pods.length, 3, 'backoffLimit + 1 pods');
    t.ok(pods.every((p) => p.status?.phase === 'Failed'));
  },
);

void t.test('jobs - activeDeadlineSeconds ends a job Failed with DeadlineExceeded', async (t) => {
  // Pods that never finish: the kubelet keeps unready pods Running.
  const body = job('slow', { activeDeadlineSeconds: 1 });
  body.metadata = { name: 'slow', annotations: { [failAnnotation]: 'unready' } };
  await batch.createNamespacedJob({ namespace, body });
  const failed = await finishedCondition('slow', 'Failed');
  const condition = failed.status?.conditions?.find((c) => c.type === 'Failed');
  t.equal(condition?.reason, 'DeadlineExceeded');
  t.equal(condition?.message, 'Job was active longer than specified deadline');
  t.equal(failed.status?.failed, 1, 'the running pod counts as failed');
  await waitFor('the running pod deleted', async () => (await podsOf('slow')).length === 0);
});

void t.test(
  'jobs - deletion: Foreground removes the pods, no policy orphans them (batch/v1 default)',
  async (t) => {
    await batch.createNamespacedJob({ namespace, body: job('fore') });
    await batch.createNamespacedJob({ namespace, body: job('orphan') });
    await finishedCondition('fore', 'Complete');
    await finishedCondition('orphan', 'Complete');
    await batch.deleteNamespacedJob({ name: 'fore', namespace, propagationPolicy: 'Foreground' });
    await waitFor('the foreground-deleted job and its pod gone', async () => {
      const jobs = await batch.listNamespacedJob({
        namespace,
        fieldSelector: 'metadata.name=fore',
      });
      return jobs.items.length === 0 && (await podsOf('fore')).length === 0;
    });
    await batch.deleteNamespacedJob({ name: 'orphan', namespace });
    await waitFor('the orphaning job gone', async () => {
      const jobs = await batch.listNamespacedJob({
        namespace,
        fieldSelector: 'metadata.name=orphan',
      });
      return jobs.items.length === 0;
    });
    const left = await podsOf('orphan');
    t.equal(left.length, 1, 'the pod is kept');
    t.same(left[0]?.metadata?.ownerReferences ?? [], [], 'and no longer owned');
  },
);

const missing = kubectlMissing();
void t.test('jobs - kubectl create, wait for complete, get columns, delete', async (t) => {
  if (missing !== undefined) {
    t.fail(`${missing}; install kubectl`);
    return;
  }
  const run = async (args: string[]): Promise<string> => {
    const result = await kubectl(fixture, args);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
  t.match(await run(['api-resources', '--api-group=batch']), /jobs\s+batch\/v1\s+true\s+Job/);
  await run(['create', 'job', 'pi', '--image=busybox:1.36', '-n', namespace]);
  t.match(
    await run(['wait', '--for=condition=complete', 'job/pi', '--timeout=20s', '-n', namespace]),
    /job.batch\/pi condition met/,
  );
  const table = await run(['get', 'jobs', 'pi', '-n', namespace]);
  t.match(table, /NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE/);
  t.match(table, /pi\s+Complete\s+1\/1\s+\d+s\s+\d+s/);
  t.equal((await podsOf('pi')).length, 1);
  // kubectl shows a finished pod by its container's terminated reason, as kube's printPod does.
  t.match(
    await run(['get', 'pods', '-l', 'job-name=pi', '-n', namespace]),
    /pi-\w{5}\s+0\/1\s+Completed\s+0/,
  );
  await run(['delete', 'job', 'pi', '-n', namespace]);
  await waitFor('the job pod garbage collected', async () => (await podsOf('pi')).length === 0);
});

void t.test(
  'jobs - policy/v1 and networking.k8s.io/v1 kinds are served with defaults',
  async (t) => {
    if (missing !== undefined) {
      t.fail(`${missing}; install kubectl`);
      return;
    }
    const apply = async (yaml: string): Promise<string> => {
      const result = await kubectl(fixture, ['apply', '-n', namespace, '-f', '-'], yaml);
      if (result.code !== 0) throw new Error(`kubectl apply: ${result.stderr}`);
      return result.stdout;
    };
    await apply(
      'apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: web\nspec:\n  minAvailable: 1\n  selector:\n    matchLabels:\n      app: web\n',
    );
    await apply(
      'apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: deny\nspec:\n  podSelector:\n    matchLabels:\n      app: web\n  egress:\n  - ports:\n    - port: 53\n',
    );
    const pdbs = await kubectl(fixture, ['get', 'pdb', '-n', namespace]);
    t.match(pdbs.stdout, /NAME\s+MIN AVAILABLE\s+MAX UNAVAILABLE\s+ALLOWED DISRUPTIONS\s+AGE/);
    t.match(pdbs.stdout, /web\s+1\s+N\/A\s+0\s+/);
    const policy = await kubectl(fixture, ['get', 'netpol', 'deny', '-n', namespace, '-o', 'json']);
    const spec = (JSON.parse(policy.stdout) as { spec: Record<string, unknown> }).spec;
    t.same(spec['policyTypes'], ['Ingress', 'Egress']);
    t.same(spec['egress'], [{ ports: [{ port: 53, protocol: 'TCP' }] }]);
    const table = await kubectl(fixture, ['get', 'networkpolicies', '-n', namespace]);
    t.match(table.stdout, /NAME\s+POD-SELECTOR\s+AGE/);
    t.match(table.stdout, /deny\s+app=web\s+/);
  },
);

void t.test('jobs - discovery lists the kinds with the status subresources kube has', async (t) => {
  if (missing !== undefined) {
    t.fail(`${missing}; install kubectl`);
    return;
  }
  const names = async (path: string): Promise<string[]> => {
    const result = await kubectl(fixture, ['get', '--raw', path]);
    const list = JSON.parse(result.stdout) as { resources: { name: string }[] };
    return list.resources.map((r) => r.name).sort();
  };
  t.same(await names('/apis/batch/v1'), ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status']);
  t.same(await names('/apis/policy/v1'), ['poddisruptionbudgets', 'poddisruptionbudgets/status']);
  t.same(await names('/apis/networking.k8s.io/v1'), [
    'ingressclasses',
    'ingresses',
    'ingresses/status',
    'networkpolicies',
  ]);
});
