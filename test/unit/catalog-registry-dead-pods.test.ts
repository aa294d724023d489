// A registry pod that will never serve again (evicted, failed, lost, or being deleted by the
// taint manager) is replaced, as upstream does since v0.28; a live one is kept.
import t from 'tap';
import { planRegistry } from '../../functions/catalog/registry-plan.js';
import {
  podDead,
  registryPod,
  registryService,
  registryServiceAccount,
  type RegistrySource,
} from '../../functions/catalog/registry-pod.js';
import type { RegistryObservation } from '../../functions/catalog/types.js';
import type { KubeObject } from '../../shared/kube/client.js';

const now = new Date('2026-11-22T10:00:00.000Z');
const timing = {
  resyncMs: 900_000,
  retryMs: 30_000,
  connectingRetryMs: 5_000,
  updatePodRequeueMs: 30_000,
};
const source: RegistrySource = {
  name: 'my.cat',
  namespace: 'olm',
  uid: 'u1',
  annotations: {},
  spec: { sourceType: 'grpc', image: 'quay.io/x/cat:v1' },
};
const account = registryServiceAccount(source);
const desired = registryPod(source, { name: 'my.cat', imagePullSecrets: [] }, false);
const serving = (uid: string, status: Record<string, unknown>, extra = {}): KubeObject => ({
  ...desired,
  metadata: { ...desired.metadata, name: `my.cat-${uid}`, uid, ...extra },
  status,
});
const ready = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
const evicted = {
  phase: 'Failed',
  reason: 'Evicted',
  message: 'The node was low on resource: memory.',
  conditions: [{ type: 'Ready', status: 'False' }],
};
const plan = (pods: KubeObject[]) =>
  planRegistry(
    source,
    {
      serviceAccount: account,
      service: registryService(source),
      pods,
      updatePods: [],
      restrictedByDefault: false,
    } satisfies RegistryObservation,
    {
      registryService: {
        protocol: 'grpc',
        serviceName: 'my-cat',
        serviceNamespace: 'olm',
        port: '50051',
      },
    },
    now,
    timing,
  );

t.test('catalog registry - which pods are dead', (t) => {
  t.ok(podDead(serving('a', evicted)), 'evicted');
  t.ok(podDead(serving('a', { phase: 'Unknown' })), 'lost with its node');
  t.notOk(podDead(serving('a', ready)), 'running');
  t.notOk(podDead(serving('a', { phase: 'Pending' })), 'starting');
  const tainted = {
    phase: 'Running',
    conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager' }],
  };
  t.ok(podDead(serving('a', tainted, { deletionTimestamp: now.toISOString() })), 'taint manager');
  t.notOk(podDead(serving('a', tainted)), 'a condition alone, not being deleted');
  t.end();
});

t.test('catalog registry - an evicted serving pod is deleted and replaced', (t) => {
  const p = plan([serving('dead', evicted)]);
  t.match(p.writes, [
    { op: 'delete', ref: { kind: 'Pod', name: 'my.cat-dead' }, preconditions: { uid: 'dead' } },
    { op: 'create', object: { kind: 'Pod', metadata: { generateName: 'my.cat-' } } },
  ]);
  t.equal(p.writes.length, 2, 'deleted once');
  t.equal(p.servingPod, undefined, 'nothing serves yet');
  t.match(p.registryService, { createdAt: '2026-11-22T10:00:00Z' }, 'the registry is new');
  t.end();
});

t.test('catalog registry - a dead pod beside a live one goes; the live one stays', (t) => {
  const live = serving('live', ready);
  const p = plan([serving('dead', { phase: 'Failed' }), live]);
  t.match(p.writes, [{ op: 'delete', ref: { name: 'my.cat-dead' } }]);
  t.equal(p.writes.length, 1, 'no new pod');
  t.equal(p.servingPod, live);
  t.end();
});

t.test('catalog registry - a pod the taint manager deletes is replaced, not deleted again', (t) => {
  const tainted = serving(
    'tainted',
    {
      phase: 'Running',
      conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager' }],
    },
    { deletionTimestamp: now.toISOString() },
  );
  const p = plan([tainted]);
  t.match(p.writes, [{ op: 'create', object: { kind: 'Pod' } }]);
  t.equal(p.writes.length, 1);
  t.end();
});
