// InstallPlan execution (upstream's catalog operator syncInstallPlans/ExecutePlan), as a pure
// decision: from the plan and the cluster objects its steps name, which writes to make and
// which step statuses follow; and, once the writes ran, the plan status to record.
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
import type {
  InstallPlanCondition,
  InstallPlanStatus,
  Step,
} from '../../shared/api/installplan.js';
import type { KubeObject, ObjectRef } from '../../shared/kube/client.js';
import type { Write } from '../../shared/kube/executor.js';
import { coreEvent } from '../../shared/kube/events.js';
import type { JsonObject, JsonValue } from '../../shared/kube/json.js';
// kube-apiserver's CRD schema validation in TypeScript (shared with the devcluster): the same
// rules upstream OLM runs on existing CRs before a CRD update.
import { formatCause, validateAgainstSchema } from '../../shared/kube/schema/index.js';
import type { Decision } from '../../shared/runtime/function-host.js';
import { csvCleanupFinalizer } from './csv-lifecycle.js';
import { canonicalJson, fnv64aHex } from './hash.js';
import {
  apiVersionOf,
  manifestOf,
  objectKindOf,
  stepKinds,
  type StepManifestError,
} from '../../shared/install-plan/index.js';

/** How long a failing plan keeps retrying before it Failed (upstream: 1 minute). */
export const planRetryWindowMs = 60_000;
/** How soon an Installing plan is looked at again (upstream: 5 s). */
export const installingRequeueMs = 5_000;
/** How soon a plan waiting on its own writes (CRDs, CSV) looks again. */
export const progressRequeueMs = 100;

/** An InstallPlan as the function reads it. */
export interface InstallPlanObject extends KubeObject {
  spec: {
    clusterServiceVersionNames?: string[];
    approval?: string;
    approved?: boolean;
    generation?: number;
  };
  status?: InstallPlanStatus;
}

/** What the plan decision reads. */
export interface PlanSnapshot {
  plan: InstallPlanObject | undefined;
  now: Date;
  /** The cluster object each step names (by step index); absent entries were not read or do not exist. */
  existing: ReadonlyMap<number, KubeObject>;
  /** The CSVs the plan's steps resolve (by name), as they exist now. */
  csvs: ReadonlyMap<string, KubeObject>;
  /** For CRD steps updating an existing CRD: its custom resources per version served before and after. */
  customResources?: ReadonlyMap<
    number,
    readonly { version: string; items: readonly KubeObject[] }[]
  >;
  /** Scoped install: the service account steps are written as, or an error finding it. */
  scope?: { serviceAccount: string } | { error: string };
}

/** One step write, the client it goes through, and the step status it leads to. */
export interface StepWrite {
  step: number;
  write: Write;
  /** Written as the OperatorGroup's service account (scoped installs). */
  scoped: boolean;
  status: Step['status'];
}

/** The writes of a plan decision. */
export interface PlanWrites {
  /** The plan as loaded (its resourceVersion guards the status write). */
  plan: InstallPlanObject | undefined;
  steps: StepWrite[];
  /** The status before any step write ran (phase transitions, status-only step changes). */
  status: InstallPlanStatus | undefined;
  /** An error found while deciding (bad manifest, unsafe CRD update): the pass fails with it. */
  error?: PlanError;
}

/** Why a pass could not finish. */
export interface PlanError {
  message: string;
  /** Forbidden errors (scoped installs) are retried for as long as it takes. */
  forbidden: boolean;
  /** The step that failed, to mark it. */
  step?: number;
  stepStatus?: Step['status'];
}

/** Annotation upstream puts on CRDs it creates: which CSV installed them. */
export function installedAlongsideAnnotation(namespace: string, csv: string): [string, string] {
  return [
    `operatorframework.io/installed-alongside-${fnv64aHex(`${namespace}/${csv}`)}`,
    `${namespace}/${csv}`,
  ];
}

type CrdLike = KubeObject & {
  spec?: {
    group?: string;
    names?: { kind?: string };
    versions?: { name: string; served?: boolean; storage?: boolean }[];
  };
  status?: {
    conditions?: { type: string; status: string }[];
    storedVersions?: string[];
  };
};

/** Whether a CRD is Established and its names accepted (the API is served). */
export function crdServed(crd: KubeObject | undefined): boolean {
  if (crd === undefined) return false;
  const conditions = (crd as CrdLike).status?.conditions ?? [];
  const isTrue = (type: string): boolean =>
    conditions.some((c) => c.type === type && c.status === 'True');
  return isTrue('Established') && isTrue('NamesAccepted');
}

/** Upstream's refusal to drop a stored version: the message, or undefined when safe. */
export function crdStoredVersionProblem(
  existing: KubeObject,
  next: KubeObject,
): string | undefined {
  const stored = (existing as CrdLike).status?.storedVersions ?? [];
  const kept = new Set(((next as CrdLike).spec?.versions ?? []).map((v) => v.name));
  const dropped = stored.find((v) => !kept.has(v));
  if (dropped === undefined) return undefined;
  return `risk of data loss updating "${existing.metadata.name ?? ''}": new CRD removes version ${dropped} that is listed as a stored version on the existing CRD`;
}

/** Versions served by both the existing and the new CRD: their CRs must stay valid. */
export function versionsServedBeforeAndAfter(existing: KubeObject, next: KubeObject): string[] {
  const served = (crd: KubeObject): Set<string> =>
    new Set(
      ((crd as CrdLike).spec?.versions ?? []).filter((v) => v.served !== false).map((v) => v.name),
    );
  const before = served(existing);
  return [...served(next)].filter((v) => before.has(v));
}

/**
 * Upstream's check that existing custom resources validate against the new CRD's schema
 * (skipped when the new CRD converts through a webhook); the message names the CR and version.
 */
export function customResourceProblem(
  next: KubeObject,
  existing: readonly { version: string; items: readonly KubeObject[] }[],
): string | undefined {
  const spec = (next['spec'] ?? {}) as {
    group?: string;
    names?: { kind?: string };
    conversion?: { strategy?: string };
    versions?: { name: string; schema?: { openAPIV3Schema?: unknown } }[];
  };
  if (spec.conversion?.strategy === 'Webhook') return undefined;
  for (const { version, items } of existing) {
    const schema = spec.versions?.find((v) => v.name === version)?.schema?.openAPIV3Schema;
    if (schema === undefined || schema === null || typeof schema !== 'object') continue;
    for (const item of items) {
      const causes = validateAgainstSchema(item as unknown as JsonValue, schema as JsonObject);
      if (causes.length === 0) continue;
      const name = item.metadata.namespace
        ? `${item.metadata.namespace}/${item.metadata.name ?? ''}`
        : (item.metadata.name ?? '');
      return `error validating existing CRs against new CRD's schema for "${next.metadata.name ?? ''}": error validating ${spec.group ?? ''}/${version}, Kind=${spec.names?.kind ?? ''} "${name}": updated validation is too restrictive: ${causes.map(formatCause).join(', ')}`;
    }
  }
  return undefined;
}

/**
 * Upstream's Warning Event `AppliedWithWarnings` for the API warnings (HTTP 299) that writing
 * step `index` of `plan` drew: on the InstallPlan, fieldPath status.plan[index].
 */
export function appliedWithWarningsEvent(
  plan: InstallPlanObject,
  index: number,
  warnings: readonly string[],
  at: Date,
): KubeObject {
  const step = plan.status?.plan?.[index];
  const what = `${step?.resource.kind ?? ''} ${JSON.stringify(step?.resource.name ?? '')}`;
  const during =
    step?.resolving === undefined || step.resolving === ''
      ? 'operator installation'
      : `installation of operator ${JSON.stringify(step.resolving)}`;
  return coreEvent(
    {
      apiVersion: plan.apiVersion || 'operators.coreos.com/v1alpha1',
      kind: 'InstallPlan',
      namespace: plan.metadata.namespace,
      name: plan.metadata.name ?? '',
      uid: plan.metadata.uid,
      resourceVersion: plan.metadata.resourceVersion,
      fieldPath: `status.plan[${index}]`,
    },
    {
      type: 'Warning',
      reason: 'AppliedWithWarnings',
      message: `${warnings.length} warning(s) generated during ${during} (${what}): ${warnings.join(', ')}`,
    },
    at,
  );
}

/** Upstream's message when a step's kind is not served by the cluster. */
export function resourceNotFoundMessage(kind: string, name: string, apiVersion: string): string {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const gvk = `${group ?? ''}/${version ?? ''}, Kind=${kind}`;
  return `api-server resource not found installing ${kind} ${name}: GroupVersionKind ${gvk} not found on the cluster. This API may have been deprecated and removed, see https://kubernetes.io/docs/reference/using-api/deprecation-guide/ for more information.`;
}

const done = new Set<Step['status']>(['Present', 'Created']);

function ownerLabels(csv: string, namespace: string): Record<string, string> {
  return {
    'olm.owner': csv,
    'olm.owner.namespace': namespace,
    'olm.owner.kind': 'ClusterServiceVersion',
  };
}

// Merges what a step writes into an existing object: the step's content wins, the existing
// object's identity, foreign labels/annotations and owner references stay (a ServiceAccount
// shared across an upgrade keeps both CSVs as owners).
function mergedUpdate(existing: KubeObject, intended: KubeObject): KubeObject {
  const refs = [...(existing.metadata.ownerReferences ?? [])];
  for (const ref of intended.metadata.ownerReferences ?? []) {
    if (!refs.some((r) => r.uid === ref.uid)) refs.push(ref);
  }
  const merged: KubeObject = {
    ...existing,
    ...intended,
    metadata: {
      ...existing.metadata,
      labels: { ...existing.metadata.labels, ...intended.metadata.labels },
      annotations: { ...existing.metadata.annotations, ...intended.metadata.annotations },
      ...(refs.length === 0 ? {} : { ownerReferences: refs }),
    },
  };
  if (intended.kind === 'Service') {
    // The API server assigns clusterIP(s) and refuses updates that drop them.
    const keep = (existing['spec'] ?? {}) as Record<string, unknown>;
    const spec = { ...((intended['spec'] ?? {}) as Record<string, unknown>) };
    for (const field of ['clusterIP', 'clusterIPs'])
      if (keep[field] !== undefined) spec[field] = keep[field];
    merged['spec'] = spec;
  }
  if (intended.kind === 'ServiceAccount') {
    // Tokens and pull secrets the cluster added stay.
    for (const field of ['secrets', 'imagePullSecrets']) {
      if (intended[field] === undefined && existing[field] !== undefined)
        merged[field] = existing[field];
    }
  }
  return merged;
}

function objectRefOf(object: KubeObject): ObjectRef {
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    namespace: object.metadata.namespace,
    name: object.metadata.name,
  };
}

/** The cluster object a step names (for loading), or undefined when its manifest is unreadable. */
export function stepObjectRef(step: Step, namespace: string): ObjectRef | undefined {
  const kind = stepKinds[step.resource.kind];
  return {
    apiVersion: apiVersionOf(step.resource),
    kind: objectKindOf(step.resource),
    namespace: kind === undefined || kind.namespaced ? namespace : undefined,
    name: step.resource.name,
  };
}

/** Steps whose cluster object the decision needs (not yet done, or CRDs being checked). */
export function stepsToRead(status: InstallPlanStatus | undefined): number[] {
  return (status?.plan ?? []).flatMap((step, i) => (done.has(step.status) ? [] : [i]));
}

function setCondition(
  conditions: readonly InstallPlanCondition[] | undefined,
  next: InstallPlanCondition,
): InstallPlanCondition[] {
  const rest = (conditions ?? []).filter((c) => c.type !== next.type);
  const previous = (conditions ?? []).find((c) => c.type === next.type);
  const transition =
    previous !== undefined &&
    previous.status === next.status &&
    previous.lastTransitionTime !== undefined
      ? previous.lastTransitionTime
      : next.lastUpdateTime;
  return [
    ...rest,
    { ...next, ...(transition === undefined ? {} : { lastTransitionTime: transition }) },
  ];
}

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
      if (!finalizers.includes(csvCleanupFinalizer))
        object.metadata.finalizers = [...finalizers, csvCleanupFinalizer];
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
            ref: objectRefOf(existing),
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

/** What happened when the step writes ran. */
export interface PlanOutcome {
  /** Step writes that succeeded, in order (a prefix of writes.steps). */
  succeeded: number;
  /** The error that stopped the pass, if any. */
  error?: PlanError;
}

/** Pure: the plan status after a pass, given what the writes did. */
export function settlePlan(
  writes: PlanWrites,
  outcome: PlanOutcome,
  now: Date,
): InstallPlanStatus | undefined {
  if (writes.status === undefined) return undefined;
  const status = structuredClone(writes.status);
  const steps = status.plan ?? [];
  for (const w of writes.steps.slice(0, outcome.succeeded)) {
    const step = steps[w.step];
    if (step !== undefined) step.status = w.status;
  }
  const error = writes.error ?? outcome.error;
  const at = now.toISOString();
  if (error !== undefined) {
    const step = error.step === undefined ? undefined : steps[error.step];
    if (step !== undefined && error.stepStatus !== undefined) step.status = error.stepStatus;
    const started = Date.parse(status.startTime ?? at);
    if (error.forbidden || now.getTime() - started < planRetryWindowMs) {
      return {
        ...status,
        phase: 'Installing',
        message: `retrying execution due to error: ${error.message}`,
      };
    }
    const { message: _message, ...rest } = status;
    return {
      ...rest,
      phase: 'Failed',
      message: error.message,
      conditions: setCondition(status.conditions, {
        type: 'Installed',
        status: 'False',
        reason: 'InstallComponentFailed',
        message: error.message,
        lastUpdateTime: at,
      }),
    };
  }
  const { message: _message, ...rest } = status;
  if (steps.every((step) => done.has(step.status))) {
    return {
      ...rest,
      phase: 'Complete',
      conditions: setCondition(status.conditions, {
        type: 'Installed',
        status: 'True',
        lastUpdateTime: at,
      }),
    };
  }
  return { ...rest, phase: 'Installing' };
}

/** Whether two statuses differ in what matters (not timestamps of unchanged conditions). */
export function statusChanged(
  before: InstallPlanStatus | undefined,
  after: InstallPlanStatus | undefined,
): boolean {
  return JSON.stringify(before ?? null) !== JSON.stringify(after ?? null);
}

export { objectRefOf };
