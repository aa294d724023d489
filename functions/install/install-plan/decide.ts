// InstallPlan execution (upstream's catalog operator syncInstallPlans/ExecutePlan), as a pure
// decision: from the plan and the cluster objects its steps name, which writes to make and
// which step statuses follow (settle.ts records the plan status once the writes ran).
//
// Rules (upstream OLM's InstallPlan execution):
// - RequiresApproval waits until spec.approved; then Installing (startTime set).
// - Each pass attempts every step not yet Present/Created; a CRD is created as WaitingForApi
//   and becomes Created once Established and NamesAccepted; objects whose kind a CRD of this
//   plan defines wait until that CRD is served; bundle objects owned by a CSV wait until the
//   CSV exists (they carry an ownerReference to it).
// - A CSV that exists is never overwritten (Present); bundle objects are created or updated
//   (step-writes.ts, per step kind).
// - An error keeps the plan Installing with "retrying execution due to error: …" while it is
//   Forbidden or younger than a minute since startTime; otherwise the plan Failed.
import type { InstallPlanStatus, Step } from '../../../shared/api/installplan.js';
import type { KubeObject } from '../../../shared/kube/client.js';
import { manifestOf, stepKinds } from '../../../shared/install-plan/index.js';
import type { Decision } from '../../../shared/runtime/function-host.js';
import { asCrd, crdServed } from '../crds.js';
import { planComponents } from './components.js';
import { setCondition } from './settle.js';
import { stepOutcome } from './step-writes.js';
import { done } from './steps.js';
import type { PlanError, PlanSnapshot, PlanWrites, ServedInstallPlan, StepWrite } from './types.js';
import { kubeTime } from '../../../shared/kube/time.js';

/** How soon an Installing plan is looked at again (upstream: 5 s). */
export const installingRequeueMs = 5_000;
/** How soon a plan waiting on its own writes (CRDs, CSV) looks again. */
export const progressRequeueMs = 100;

// The status a pass starts from: an approved plan is Installing (since now); undefined when
// there is nothing to execute (planning belongs to the plan function; Complete and Failed are
// terminal).
function started(plan: ServedInstallPlan, now: string): InstallPlanStatus | undefined {
  if (plan.status === undefined || plan.metadata.deletionTimestamp !== undefined) return undefined;
  // Steps not written yet: the plan function is still looking its bundles up (bundleLookups).
  if (plan.status.plan === undefined) return undefined;
  let status: InstallPlanStatus = structuredClone(plan.status);
  if (status.phase === 'RequiresApproval') {
    if (plan.spec.approved !== true) return undefined;
    status = { ...status, phase: 'Installing' };
  } else if (status.phase !== 'Installing') {
    return undefined;
  }
  if (status.startTime === undefined) status.startTime = now;
  return status;
}

// Kinds defined by the plan's CRDs (`group/kind`), and whether each is served yet.
function servedKinds(steps: readonly Step[], s: PlanSnapshot): Map<string, boolean> {
  const served = new Map<string, boolean>();
  steps.forEach((step, i) => {
    if (step.resource.kind !== 'CustomResourceDefinition') return;
    const existing = s.existing.get(i);
    let manifest: KubeObject;
    try {
      manifest = manifestOf(step.resource, i);
    } catch {
      return; // reported when the step runs
    }
    const group = asCrd(manifest).spec?.group;
    const kind = asCrd(manifest).spec?.names?.kind;
    if (group !== undefined && kind !== undefined) {
      const crd = existing === undefined ? undefined : asCrd(existing);
      served.set(`${group}/${kind}`, done.has(step.status) || crdServed(crd));
    }
  });
  return served;
}

// The step's manifest as it is written: identity and status dropped, in the plan's namespace
// when the kind is namespaced.
function writable(manifest: KubeObject, namespaced: boolean, namespace: string): KubeObject {
  const object: KubeObject = { ...manifest, metadata: { ...manifest.metadata } };
  delete object.metadata.resourceVersion;
  delete object.metadata.uid;
  delete object.metadata.creationTimestamp;
  delete object['status'];
  if (namespaced) object.metadata.namespace = namespace;
  else delete object.metadata.namespace;
  return object;
}

/** Pure: the writes of one pass over the plan. */
export function decidePlan(s: PlanSnapshot): Decision<PlanWrites> {
  const plan = s.plan;
  const none: PlanWrites = { plan, steps: [], status: undefined };
  const now = kubeTime(s.now, 'millis');
  const status = plan === undefined ? undefined : started(plan, now);
  if (plan === undefined || status === undefined) return { writes: none };
  const namespace = plan.metadata.namespace ?? '';
  if (s.scope !== undefined) {
    if ('error' in s.scope) {
      const failed: InstallPlanStatus = {
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
      };
      return { writes: { plan, steps: [], status: failed } };
    }
    status.attenuatedServiceAccountRef = {
      kind: 'ServiceAccount',
      namespace,
      name: s.scope.serviceAccount,
      apiVersion: 'v1',
    };
  }

  const steps = status.plan ?? [];
  const served = servedKinds(steps, s);
  const components = planComponents(namespace, steps, s.csvs, s.subscriptions);
  const writes: StepWrite[] = [];
  // CSVs created by this pass: the objects they own are written after them, in the same pass.
  const creating = new Set<string>();
  let error: PlanError | undefined;
  let waiting = false;
  for (const [i, step] of steps.entries()) {
    if (done.has(step.status)) continue;
    const existing = s.existing.get(i);
    if (step.resource.kind === 'CustomResourceDefinition' && step.status === 'WaitingForApi') {
      if (crdServed(existing === undefined ? undefined : asCrd(existing))) {
        step.status = 'Created';
        continue;
      }
      if (existing !== undefined) {
        waiting = true;
        continue;
      }
      step.status = 'NotPresent'; // gone meanwhile: created again below
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
      // A StepManifestError: the plan is bad, not the cluster.
      error = { message: e instanceof Error ? e.message : String(e), forbidden: false, step: i };
      break;
    }
    if (served.get(`${step.resource.group}/${manifest.kind}`) === false) {
      waiting = true; // the CRD defining this kind is not served yet
      continue;
    }
    const outcome = stepOutcome({
      index: i,
      step,
      kind,
      object: writable(manifest, kind.namespaced, namespace),
      existing,
      namespace,
      plan: plan.metadata.name ?? '',
      scoped: s.scope !== undefined,
      creating,
      components,
      s,
    });
    if ('error' in outcome) {
      error = { message: outcome.error, forbidden: false, step: i };
      break;
    }
    if ('waiting' in outcome) waiting = true;
    else if ('write' in outcome) {
      writes.push({ step: i, ...outcome });
      if (step.resource.kind === 'ClusterServiceVersion' && outcome.write.op === 'create')
        creating.add(step.resolving);
    } else step.status = outcome.status;
  }
  status.plan = steps;
  if (error !== undefined) {
    return { writes: { plan, steps: [], status, error }, requeueAfterMs: installingRequeueMs };
  }
  // Installing plans are looked at again: at once when these writes create what waiting steps
  // need and the last pass failed nothing, soon while their own writes settle, else every 5 s
  // (a Forbidden step may have been granted meanwhile). A pass that leaves every step done
  // completes the plan: nothing is left to look at (should a write fail, the status it leads
  // to, with its message, wakes the plan again).
  const retrying = plan.status?.message !== undefined;
  const progressing = waiting && writes.length > 0 && !retrying;
  const completes =
    !waiting &&
    !retrying &&
    steps.every(
      (step, i) => done.has(step.status) || writes.some((w) => w.step === i && done.has(w.status)),
    );
  if (completes) return { writes: { plan, steps: writes, status } };
  return {
    writes: { plan, steps: writes, status },
    requeueAfterMs: waiting || writes.length > 0 ? progressRequeueMs : installingRequeueMs,
    ...(progressing ? { again: true } : {}),
  };
}
