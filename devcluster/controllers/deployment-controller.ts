// The simulated deployment controller: a ReplicaSet per pod template (old ones scaled to 0 at
// once, none made while the Deployment is paused), and the Deployment's status and conditions
// from its ReplicaSets'.
import { systemWrite, type ApiCore } from '../api/core.js';
import { jsonEqual } from '../api/object-json.js';
import { text, type JsonObject } from '../../shared/kube/json.js';
import {
  condition,
  controllerOf,
  metadataOf,
  obj,
  ownerRef,
  podTemplateHash,
  podTemplateHashLabel,
  recordEvent,
  tolerate,
} from './workload-objects.js';
import {
  newReplicaSetAnnotations,
  pruneHistory,
  revisionAnnotation,
  revisionOf,
} from './deployment-revisions.js';

/** Reconciles the Deployment `namespace/name`. */
export function reconcileDeployment(core: ApiCore, key: string): void {
  const [namespace = '', name = ''] = key.split('/');
  let deployment = core.store.get('deployments.apps', namespace, name);
  if (!deployment || metadataOf(deployment)['deletionTimestamp'] !== undefined) return;
  const rsType = core.typeOf('apps', 'replicasets');
  const spec = obj(deployment['spec']);
  const desired = typeof spec['replicas'] === 'number' ? spec['replicas'] : 1;
  const template = obj(spec['template']);
  const hash = podTemplateHash(template);
  const uid = text(metadataOf(deployment)['uid']);
  const owned = core.store
    .list('replicasets.apps', namespace)
    .filter((rs) => controllerOf(rs) === uid);
  const newName = `${name}-${hash}`;
  let current = owned.find((rs) => metadataOf(rs)['name'] === newName);
  const newRevision =
    Math.max(0, ...owned.filter((rs) => rs !== current).map((rs) => revisionOf(rs))) + 1;
  const annotations = newReplicaSetAnnotations(deployment, current, newRevision, desired);
  const paused = spec['paused'] === true;
  // A paused Deployment rolls out no new template (kube: sync without creating the new ReplicaSet).
  if (!current && !paused) {
    const templateMeta = obj(template['metadata']);
    const labels = { ...obj(templateMeta['labels']), [podTemplateHashLabel]: hash };
    const selector = obj(spec['selector']);
    const body: JsonObject = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: newName,
        namespace,
        labels,
        annotations,
        ownerReferences: [ownerRef(deployment, 'Deployment', 'apps/v1')],
      },
      spec: {
        replicas: desired,
        selector: {
          ...selector,
          matchLabels: { ...obj(selector['matchLabels']), [podTemplateHashLabel]: hash },
        },
        template: { ...template, metadata: { ...templateMeta, labels } },
      },
    };
    tolerate(() => core.create(rsType, namespace, body, systemWrite('deployment-controller')));
    current = core.store.get('replicasets.apps', namespace, newName);
    if (current)
      recordEvent(
        core,
        deployment,
        'deployment-controller',
        'ScalingReplicaSet',
        `Scaled up replica set ${newName} to ${desired}`,
      );
  } else if (
    current &&
    (obj(current['spec'])['replicas'] !== desired ||
      !jsonEqual(annotations, metadataOf(current)['annotations'] ?? {}))
  ) {
    const copy = structuredClone(current);
    obj(copy['spec'])['replicas'] = desired;
    metadataOf(copy)['annotations'] = annotations;
    tolerate(() =>
      core.update(rsType, namespace, newName, copy, systemWrite('deployment-controller')),
    );
    current = core.store.get('replicasets.apps', namespace, newName);
  }
  const deploymentRevision = current ? text(revisionOf(current)) : undefined;
  const ownAnnotations = obj(metadataOf(deployment)['annotations']);
  if (
    deploymentRevision !== undefined &&
    ownAnnotations[revisionAnnotation] !== deploymentRevision
  ) {
    const copy = structuredClone(deployment);
    metadataOf(copy)['annotations'] = {
      ...ownAnnotations,
      [revisionAnnotation]: deploymentRevision,
    };
    tolerate(() =>
      core.update(
        core.typeOf('apps', 'deployments'),
        namespace,
        name,
        copy,
        systemWrite('deployment-controller'),
      ),
    );
    deployment = core.store.get('deployments.apps', namespace, name) ?? deployment;
  }
  // Old ReplicaSets are scaled down at once: the simulation rolls over instantly.
  for (const rs of current ? owned : []) {
    if (metadataOf(rs)['name'] === newName || obj(rs['spec'])['replicas'] === 0) continue;
    const copy = structuredClone(rs);
    obj(copy['spec'])['replicas'] = 0;
    tolerate(() =>
      core.update(
        rsType,
        namespace,
        text(metadataOf(rs)['name']),
        copy,
        systemWrite('deployment-controller'),
      ),
    );
    recordEvent(
      core,
      deployment,
      'deployment-controller',
      'ScalingReplicaSet',
      `Scaled down replica set ${text(metadataOf(rs)['name'])} to 0`,
    );
  }
  pruneHistory(core, deployment, newName);
  const all = core.store
    .list('replicasets.apps', namespace)
    .filter((rs) => controllerOf(rs) === uid);
  const sum = (field: string): number =>
    all.reduce((n, rs) => n + Number(obj(rs['status'])[field] ?? 0), 0);
  const newStatus = current ? obj(current['status']) : {};
  const replicas = sum('replicas');
  const ready = sum('readyReplicas');
  const available = sum('availableReplicas');
  const updated = Number(newStatus['replicas'] ?? 0);
  const now = core.timestamp();
  const previous = obj(deployment['status'])['conditions'];
  const oldActive = all.some(
    (rs) => metadataOf(rs)['name'] !== newName && Number(obj(rs['status'])['replicas'] ?? 0) > 0,
  );
  const complete = updated === desired && available >= desired && !oldActive;
  const status: JsonObject = {
    observedGeneration: metadataOf(deployment)['generation'] ?? 1,
    replicas,
    updatedReplicas: updated,
    readyReplicas: ready,
    availableReplicas: available,
    conditions: [
      available >= desired
        ? condition(
            'Available',
            true,
            'MinimumReplicasAvailable',
            'Deployment has minimum availability.',
            now,
            previous,
          )
        : condition(
            'Available',
            false,
            'MinimumReplicasUnavailable',
            'Deployment does not have minimum availability.',
            now,
            previous,
          ),
      paused
        ? condition(
            'Progressing',
            'Unknown',
            'DeploymentPaused',
            'Deployment is paused',
            now,
            previous,
          )
        : complete
          ? condition(
              'Progressing',
              true,
              'NewReplicaSetAvailable',
              `ReplicaSet "${newName}" has successfully progressed.`,
              now,
              previous,
            )
          : condition(
              'Progressing',
              true,
              'ReplicaSetUpdated',
              `ReplicaSet "${newName}" is progressing.`,
              now,
              previous,
            ),
    ],
  };
  if (replicas - available > 0) status['unavailableReplicas'] = replicas - available;
  if (ready === 0) delete status['readyReplicas'];
  if (available === 0) delete status['availableReplicas'];
  if (jsonEqual(status, deployment['status'] ?? {})) return;
  const copy = structuredClone(deployment);
  copy['status'] = status;
  tolerate(() =>
    core.update(
      core.typeOf('apps', 'deployments'),
      namespace,
      name,
      copy,
      systemWrite('deployment-controller'),
      'status',
    ),
  );
}
