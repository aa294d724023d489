// Revision bookkeeping of the simulated deployment controller, as kube's deployment util does
// it: each ReplicaSet carries `deployment.kubernetes.io/revision` (one more than the highest of
// the Deployment's other ReplicaSets when it becomes the new one again, the earlier numbers kept
// in `revision-history`), the Deployment carries its new ReplicaSet's revision, and the
// Deployment's own annotations are copied onto its new ReplicaSet. `kubectl rollout history`
// reads the first; `kubectl rollout undo` restores a ReplicaSet's template and annotations,
// replacing the Deployment's annotations with a JSON patch that needs them present.
import type { ApiCore } from '../api/core.js';
import { text, type JsonObject } from '../../shared/kube/json.js';
import { controllerOf, failAnnotation, metadataOf, obj, tolerate } from './workload-objects.js';

/** The revision annotation of Deployments and their ReplicaSets. */
export const revisionAnnotation = 'deployment.kubernetes.io/revision';
const revisionHistoryAnnotation = 'deployment.kubernetes.io/revision-history';
const desiredReplicasAnnotation = 'deployment.kubernetes.io/desired-replicas';
const maxReplicasAnnotation = 'deployment.kubernetes.io/max-replicas';

/** Deployment annotations never copied onto its ReplicaSets (kube's skipCopyAnnotation). */
const notCopied = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  revisionAnnotation,
  revisionHistoryAnnotation,
  desiredReplicasAnnotation,
  maxReplicasAnnotation,
  'deprecated.deployment.rollback.to',
  // The simulation reads it up the owner chain; a copy would outlive its removal.
  failAnnotation,
]);

/** The revision of a ReplicaSet (0 when it has none). */
export function revisionOf(rs: JsonObject): number {
  const value = Number(obj(metadataOf(rs)['annotations'])[revisionAnnotation] ?? 0);
  return Number.isFinite(value) ? value : 0;
}

/** maxSurge resolved against the desired replicas (25% rounded up by default; 0 for Recreate). */
function maxSurge(deployment: JsonObject, desired: number): number {
  const strategy = obj(obj(deployment['spec'])['strategy']);
  if (strategy['type'] === 'Recreate') return 0;
  const value = obj(strategy['rollingUpdate'])['maxSurge'] ?? '25%';
  if (typeof value === 'number') return value;
  const percent = /^(\d+)%$/.exec(text(value));
  return percent ? Math.ceil((Number(percent[1]) * desired) / 100) : 0;
}

/**
 * The annotations the new ReplicaSet should carry: its own, the Deployment's copyable ones, the
 * replica annotations and, when it is older than `newRevision`, that revision (the old number
 * appended to the history, as on a rollback).
 */
export function newReplicaSetAnnotations(
  deployment: JsonObject,
  current: JsonObject | undefined,
  newRevision: number,
  desired: number,
): JsonObject {
  const own = current ? obj(metadataOf(current)['annotations']) : {};
  const annotations: JsonObject = { ...own };
  for (const [key, value] of Object.entries(obj(metadataOf(deployment)['annotations'])))
    if (!notCopied.has(key)) annotations[key] = value;
  annotations[desiredReplicasAnnotation] = text(desired);
  annotations[maxReplicasAnnotation] = text(desired + maxSurge(deployment, desired));
  const oldRevision = current ? revisionOf(current) : 0;
  if (oldRevision < newRevision) {
    annotations[revisionAnnotation] = text(newRevision);
    if (own[revisionAnnotation] !== undefined) {
      const history = text(own[revisionHistoryAnnotation] ?? '');
      annotations[revisionHistoryAnnotation] =
        history === '' ? text(oldRevision) : `${history},${text(oldRevision)}`;
    }
  }
  return annotations;
}

/**
 * Deletes the Deployment's oldest idle ReplicaSets (no replicas wanted nor left) beyond
 * `spec.revisionHistoryLimit` (default 10), as kube's cleanupDeployment; `current` is kept.
 */
export function pruneHistory(core: ApiCore, deployment: JsonObject, current: string): void {
  const m = metadataOf(deployment);
  const limit = obj(deployment['spec'])['revisionHistoryLimit'];
  const keep = typeof limit === 'number' ? limit : 10;
  const namespace = text(m['namespace']);
  const old = core.store
    .list('replicasets.apps', namespace)
    .filter((rs) => controllerOf(rs) === text(m['uid']) && metadataOf(rs)['name'] !== current)
    .filter((rs) => metadataOf(rs)['deletionTimestamp'] === undefined);
  const idle = old
    .filter((rs) => obj(rs['spec'])['replicas'] === 0 && !obj(rs['status'])['replicas'])
    .sort((a, b) => revisionOf(a) - revisionOf(b));
  const type = core.typeOf('apps', 'replicasets');
  for (const rs of idle.slice(0, Math.max(0, old.length - keep)))
    tolerate(() =>
      core.delete(type, namespace, text(metadataOf(rs)['name']), {
        propagationPolicy: 'Background',
        dryRun: false,
      }),
    );
}
