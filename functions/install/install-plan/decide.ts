// InstallPlan execution (upstream's catalog operator syncInstallPlans/ExecutePlan), as a pure
// decision: from the plan and the cluster objects its steps name, which writes to make and
// which step statuses follow (settle.ts records the plan status once the writes ran).
//
// Rules (see ../shared/spec/olm-behavior.md §7):
// - RequiresApproval waits until spec.approved; then Installing (startTime set).
// - Each pass attempts every step not yet Present/Created; a CRD is created as WaitingForApi
//   and becomes Created once Established and NamesAccepted; objects whose kind a CRD of this
//   plan defines wait until that CRD is served; bundle objects owned by a CSV wait until the
//   CSV exists (they carry an ownerReference to it).
// - A CSV that exists is never overwritten (Present); bundle objects are created or updated.
// - An error keeps the plan Installing with "retrying execution due to error: …" while it is
//   Forbidden or younger than a minute since startTime; otherwise the plan Failed.
import type { InstallPlanStatus } from '../../../shared/api/installplan.js';
import { codes } from '../../../shared/api/index.js';
import type { KubeObject } from '../../../shared/kube/client.js';
import type { Decision } from '../../../shared/runtime/function-host.js';
import {
  manifestOf,
  stepKinds,
  type StepManifestError,
} from '../../../shared/install-plan/index.js';
import { crdServed, type CrdLike } from '../crds.js';
import { canonicalJson } from '../hash.js';
import { refOf } from '../kube-writes.js';
import { crdStoredVersionProblem, customResourceProblem } from './crd-update.js';
import { setCondition } from './settle.js';
import { installedAlongsideAnnotation, mergedUpdate, ownerLabels } from './step-writes.js';
import { done } from './steps.js';
import type { PlanError, PlanSnapshot, PlanWrites, StepWrite } from './types.js';

/** How soon an Installing plan is looked at again (upstream: 5 s). */
export const installingRequeueMs = 5_000;
/** How soon a plan waiting on its own writes (CRDs, CSV) looks again. */
export const progressRequeueMs = 100;

/** Pure: the writes of one pass over the plan. */
export function decidePlan(s: PlanSnapshot): Decision<PlanWrites> {
  const plan = s.plan;
  const none: PlanWrites = { plan, steps: [], status: undefined };
  if (plan?.status === undefined || plan.metadata.deletionTimestamp !== undefined)
    return { writes: none };
  const namespace = plan.metadata.namespace ?? '';
  const now = s.now.toISOString();
  let status: InstallPlanStatus = structuredClone(plan.status);

  switch (status.phase) {
    case 'RequiresApproval':
      if (plan.spec.approved !== true) return { writes: none };
      status = { ...status, phase: 'Installing' };
      break;
    case 'Installing':
      break;
    default:
      // Planning belongs to the plan function; Complete and Failed are terminal.
      return { writes: none };
  }
  if (status.startTime === undefined) status.startTime = now;
  if (s.scope !== undefined) {
    if ('error' in s.scope) {
      return {
        writes: {
          plan,
          steps: [],
          status: {
            ...status,
            phase: 'Failed',
            message: s.scope.error,
            conditions: setCondition(status.conditions, {
              type: 'Installed',
              status: 'False',
              reason: 'InstallCheckFailed',
              message: s.scope.error,
              lastUpdateTime: now,
            }),
          },
        },
      };
    }
    status.attenuatedServiceAccountRef = {
      kind: 'ServiceAccount',
      namespace,
      name: s.scope.serviceAccount,
      apiVersion: 'v1',
    };
  }

  const steps = status.plan ?? [];
  // Kinds defined by this plan's CRDs, and whether each is served yet.
  const servedKinds = new Map<string, boolean>();
  steps.forEach((step, i) => {
    if (step.resource.kind !== 'CustomResourceDefinition') return;
    const crd = s.existing.get(i) as CrdLike | undefined;
    let group: string | undefined;
    let kind: string | undefined;
    try {
      const m = manifestOf(step.resource, i) as CrdLike;
      group = m.spec?.group;
      kind = m.spec?.names?.kind;
    } catch {
      return; // reported when the step runs
    }
    if (group !== undefined && kind !== undefined) {
      servedKinds.set(`${group}/${kind}`, done.has(step.status) || crdServed(crd));
    }
  });

  const writes: StepWrite[] = [];
  let error: PlanError | undefined;
  let waiting = false;
  for (const [i, step] of steps.entries()) {
    if (done.has(step.status)) continue;
    const existing = s.existing.get(i);
    if (step.resource.kind === 'CustomResourceDefinition' && step.status === 'WaitingForApi') {
      if (crdServed(existing)) step.status = 'Created';
      else if (existing === undefined) step.status = 'NotPresent';
      else {
        waiting = true;
        continue;
      }
      if (step.status === 'Created') continue;
    }
    const kind = stepKinds[step.resource.kind];
    if (kind === undefined) {
      step.status = 'UnsupportedResource';
      error = { message: 'the InstallPlan contains invalid data', forbidden: false, step: i };
      break;
    }
    let manifest: KubeObject;
    try {
      manifest = manifestOf(step.resource, i);
    } catch (e) {
      error = { message: (e as StepManifestError).message, forbidden: false, step: i };
      break;
    }
    if (servedKinds.get(`${step.resource.group}/${manifest.kind}`) === false) {
      waiting = true; // the CRD defining this kind is not served yet
      continue;
    }
    const csvName = step.resolving;
    const owner = s.csvs.get(csvName);
    const object: KubeObject = {
      ...manifest,
      metadata: { ...manifest.metadata },
    };
    delete object.metadata.resourceVersion;
    delete object.metadata.uid;
    delete object.metadata.creationTimestamp;
    delete (object as { status?: unknown }).status;
    if (kind.namespaced) object.metadata.namespace = namespace;
    else delete object.metadata.namespace;

    if (step.resource.kind === 'ClusterServiceVersion') {
      if (existing !== undefined) {
        step.status = 'Present'; // an existing CSV is never overwritten
        continue;
      }
      // Created with the cleanup finalizer the CSV lifecycle would add as its first write: the
      // same object, one pass through the mirror sooner.
      const finalizers = object.metadata.finalizers ?? [];
      if (!finalizers.includes(codes.OlmFinalizer.CsvCleanup))
        object.metadata.finalizers = [...finalizers, codes.OlmFinalizer.CsvCleanup];
      writes.push({
        step: i,
        write: { op: 'create', object },
        scoped: s.scope !== undefined,
        status: 'Created',
      });
      continue;
    }
    if (step.resource.kind === 'Subscription') {
      if (existing !== undefined) {
        step.status = 'Present';
        continue;
      }
      object.metadata.annotations = {
        ...object.metadata.annotations,
        'olm.generated-by': plan.metadata.name ?? '',
      };
      writes.push({
        step: i,
        write: { op: 'create', object },
        scoped: s.scope !== undefined,
        status: 'Created',
      });
      continue;
    }
    if (step.resource.kind === 'CustomResourceDefinition') {
      const [key, value] = installedAlongsideAnnotation(namespace, csvName);
      object.metadata.labels = { ...object.metadata.labels, 'olm.managed': 'true' };
      object.metadata.annotations = { ...object.metadata.annotations, [key]: value };
      if (existing === undefined) {
        writes.push({
          step: i,
          write: { op: 'create', object },
          scoped: false,
          status: 'WaitingForApi',
        });
        continue;
      }
      const problem =
        crdStoredVersionProblem(existing, object) ??
        customResourceProblem(object, s.customResources?.get(i) ?? []);
      if (problem !== undefined) {
        error = { message: problem, forbidden: false, step: i };
        break;
      }
      if (canonicalJson(existing['spec']) === canonicalJson(object['spec'])) {
        // Same definition (e.g. another namespace installs the same operator): only mark it
        // ours, with a patch that cannot conflict with other plans doing the same.
        const missing = (
          want: Record<string, string> | undefined,
          have: Record<string, string> | undefined,
        ) => Object.entries(want ?? {}).some(([k, v]) => have?.[k] !== v);
        if (
          !missing(object.metadata.labels, existing.metadata.labels) &&
          !missing(object.metadata.annotations, existing.metadata.annotations)
        ) {
          step.status = 'Present';
          continue;
        }
        writes.push({
          step: i,
          write: {
            op: 'patch',
            ref: refOf(existing),
            type: 'merge',
            patch: {
              metadata: {
                labels: object.metadata.labels,
                annotations: object.metadata.annotations,
              },
            },
          },
          scoped: false,
          status: 'Present',
        });
        continue;
      }
      const updated = mergedUpdate(existing, object);
      updated['status'] = existing['status'];
      writes.push({
        step: i,
        write: { op: 'update', object: updated },
        scoped: false,
        status: 'Present',
      });
      continue;
    }

    object.metadata.labels = { ...object.metadata.labels, 'olm.managed': 'true' };
    if (kind.ownership === 'ownerReference') {
      if (owner?.metadata.uid === undefined) {
        waiting = true; // created once its CSV exists, to point at it
        continue;
      }
      object.metadata.ownerReferences = [
        {
          apiVersion: 'operators.coreos.com/v1alpha1',
          kind: 'ClusterServiceVersion',
          name: csvName,
          uid: owner.metadata.uid,
          controller: false,
          blockOwnerDeletion: false,
        },
      ];
    } else if (kind.ownership === 'ownerLabels') {
      object.metadata.labels = { ...object.metadata.labels, ...ownerLabels(csvName, namespace) };
    }
    if (existing === undefined) {
      writes.push({
        step: i,
        write: { op: 'create', object },
        scoped: s.scope !== undefined,
        status: 'Created',
      });
    } else {
      const updated = mergedUpdate(existing, object);
      if (kind.ownership === 'ownerLabels') {
        // Upstream takes over existing cluster objects: olm.owner names the resolving CSV. Its
        // update is unconditional (the last plan writing wins): a ClusterRole named after the
        // CSV and its rules is shared by every namespace installing that CSV, and plans racing
        // on it must not fail each other with conflicts.
        updated.metadata.labels = {
          ...updated.metadata.labels,
          ...ownerLabels(csvName, namespace),
        };
        delete updated.metadata.resourceVersion;
      }
      writes.push({
        step: i,
        write: { op: 'update', object: updated },
        scoped: s.scope !== undefined,
        status: 'Present',
      });
    }
  }
  status.plan = steps;
  if (error !== undefined) {
    return { writes: { plan, steps: [], status, error }, requeueAfterMs: installingRequeueMs };
  }
  // Installing plans are looked at again: at once when these writes create what waiting steps
  // need (the CSV they are owned by) and the last pass failed nothing, soon while their own
  // writes settle, else every 5 s (a Forbidden step may have been granted meanwhile).
  const progressing = waiting && writes.length > 0 && plan.status.message === undefined;
  return {
    writes: { plan, steps: writes, status },
    requeueAfterMs: waiting || writes.length > 0 ? progressRequeueMs : installingRequeueMs,
    ...(progressing ? { again: true } : {}),
  };
}
