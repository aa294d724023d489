// The simulated replica set controller: as many Pods as the ReplicaSet asks for, and its status
// from their readiness.
import { systemWrite, type ApiCore } from '../api/core.js';
import { jsonEqual } from '../api/object-json.js';
import { text, type JsonObject } from '../../shared/kube/json.js';
import { randomSuffix } from '../resources/names.js';
import {
  isReady,
  metadataOf,
  obj,
  ownerRef,
  podsOf,
  recordEvent,
  tolerate,
} from './workload-objects.js';

/** Reconciles the ReplicaSet `namespace/name`. */
export function reconcileReplicaSet(core: ApiCore, key: string): void {
  const [namespace = '', name = ''] = key.split('/');
  const rs = core.store.get('replicasets.apps', namespace, name);
  if (!rs || metadataOf(rs)['deletionTimestamp'] !== undefined) return;
  const podType = core.typeOf('', 'pods');
  const spec = obj(rs['spec']);
  const desired = typeof spec['replicas'] === 'number' ? spec['replicas'] : 1;
  const template = obj(spec['template']);
  let pods = podsOf(core, rs).filter((p) => metadataOf(p)['deletionTimestamp'] === undefined);
  for (let i = pods.length; i < desired; i++) {
    const templateMeta = obj(template['metadata']);
    const body: JsonObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        ...templateMeta,
        name: `${name}-${randomSuffix()}`,
        namespace,
        ownerReferences: [ownerRef(rs, 'ReplicaSet', 'apps/v1')],
      },
      spec: structuredClone(obj(template['spec'])),
    };
    tolerate(() => core.create(podType, namespace, body, systemWrite('replicaset-controller')));
    recordEvent(
      core,
      rs,
      'replicaset-controller',
      'SuccessfulCreate',
      `Created pod: ${text(obj(body['metadata'])['name'])}`,
    );
  }
  for (const extra of pods.slice(desired)) {
    tolerate(() =>
      core.delete(podType, namespace, text(metadataOf(extra)['name']), { dryRun: false }),
    );
    recordEvent(
      core,
      rs,
      'replicaset-controller',
      'SuccessfulDelete',
      `Deleted pod: ${text(metadataOf(extra)['name'])}`,
    );
  }
  pods = podsOf(core, rs).filter((p) => metadataOf(p)['deletionTimestamp'] === undefined);
  const ready = pods.filter(isReady).length;
  const status: JsonObject = {
    replicas: pods.length,
    fullyLabeledReplicas: pods.length,
    readyReplicas: ready,
    availableReplicas: ready,
    observedGeneration: metadataOf(rs)['generation'] ?? 1,
  };
  if (ready === 0) {
    delete status['readyReplicas'];
    delete status['availableReplicas'];
  }
  if (pods.length === 0) delete status['fullyLabeledReplicas'];
  if (jsonEqual(status, rs['status'] ?? {})) return;
  const copy = structuredClone(rs);
  copy['status'] = status;
  tolerate(() =>
    core.update(
      core.typeOf('apps', 'replicasets'),
      namespace,
      name,
      copy,
      systemWrite('replicaset-controller'),
      'status',
    ),
  );
}
