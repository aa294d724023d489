// How each kind of step is written into the cluster (upstream's ExecutePlan per kind): a CSV
// or Subscription is created once and never overwritten; a CRD is created (and waited for),
// marked ours, or updated when that is safe; other bundle objects are owned by their CSV (an
// owner reference, or owner labels on cluster objects) and created or updated. Each writer
// answers with a write, a status without a write, a wait, or an error. Pure.
import type { Step } from '../../../shared/api/installplan.js';
import type { KubeObject } from '../../../shared/kube/client.js';
import type { Write } from '../../../shared/kube/executor.js';
import type { StepKind } from '../../../shared/install-plan/index.js';
import { codes } from '../../../shared/api/index.js';
import {
  componentLabels,
  isOwnableKind,
  subscriptionLabelKey,
} from '../../../shared/api/component-labels.js';
import { memberAnnotations } from '../../../shared/operator-group/index.js';
import { canonicalJson, fnv64aHex } from '../hash.js';
import { mergedAnnotations, refOf } from '../kube-writes.js';
import type { PlanComponents } from './components.js';
import { crdStoredVersionProblem, customResourceProblem } from './crd-update.js';
import type { PlanSnapshot } from './types.js';

/** One pending step with what its write needs. */
export interface PendingStep {
  index: number;
  step: Step;
  kind: StepKind;
  /** The step's manifest, ready to write (identity fields dropped, namespace set). */
  object: KubeObject;
  /** The cluster object the step names, if it exists. */
  existing: KubeObject | undefined;
  namespace: string;
  /** The name of the plan, which Subscriptions it creates record. */
  plan: string;
  /** Whether the plan installs as the OperatorGroup's service account. */
  scoped: boolean;
  /** The CSVs this pass creates (before this step). */
  creating: ReadonlySet<string>;
  /** The component labels of the plan's CSVs, which their objects get as they are written. */
  components: PlanComponents;
  s: PlanSnapshot;
}

/** What a step leads to in this pass. */
export type StepOutcome =
  /** Write this, then the step has `status` (ownerCsv: see StepWrite). */
  | { write: Write; scoped: boolean; status: Step['status']; ownerCsv?: string }
  /** No write: the step has `status` now (an object that is already as wanted). */
  | { status: Step['status'] }
  /** Not yet: it waits on what this pass or a later one creates. */
  | { waiting: true }
  /** The pass fails at this step. */
  | { error: string };

/** Annotation upstream puts on CRDs it creates: which CSV installed them. */
export function installedAlongsideAnnotation(namespace: string, csv: string): [string, string] {
  return [
    `operatorframework.io/installed-alongside-${fnv64aHex(`${namespace}/${csv}`)}`,
    `${namespace}/${csv}`,
  ];
}

/** The owner labels upstream puts on cluster-scoped objects of a CSV. */
function ownerLabels(csv: string, namespace: string): Record<string, string> {
  return {
    'olm.owner': csv,
    'olm.owner.namespace': namespace,
    'olm.owner.kind': 'ClusterServiceVersion',
  };
}

const asRecord = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};

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
      ...mergedAnnotations(existing, intended),
      ...(refs.length === 0 ? {} : { ownerReferences: refs }),
    },
  };
  if (intended.kind === 'Service') {
    // The API server assigns clusterIP(s) and refuses updates that drop them.
    const keep = asRecord(existing['spec']);
    const spec = { ...asRecord(intended['spec']) };
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

// Every object a plan writes is labelled olm.managed as upstream's plan execution does, with
// the component labels it can be given at creation.
function markManaged(object: PendingStep['object'], components: Record<string, string>): void {
  object.metadata.labels = {
    ...object.metadata.labels,
    [codes.OlmLabel.Managed]: 'true',
    ...components,
  };
}

const create = (p: PendingStep, status: Step['status'], scoped = p.scoped): StepOutcome => ({
  write: { op: 'create', object: p.object },
  scoped,
  status,
});

// A CSV that exists is never overwritten. A new one is created with the cleanup finalizer the
// CSV lifecycle would add as its first write, and the member annotations of the namespace's one
// OperatorGroup, once it has targets, that the rbac function would patch in: the same object,
// one pass through the mirror sooner (rbac still corrects them when the group changes).
// Labelled olm.managed as upstream's plan execution does (its copies inherit it).
function csvStep(p: PendingStep): StepOutcome {
  if (p.existing !== undefined) return { status: 'Present' };
  const { metadata } = p.object;
  markManaged(p.object, p.components.ofCsv(p.step.resolving));
  const [group, ...others] = p.s.operatorGroups;
  if (group?.status?.namespaces !== undefined && others.length === 0)
    metadata.annotations = { ...metadata.annotations, ...memberAnnotations(group) };
  const finalizers = metadata.finalizers ?? [];
  if (!finalizers.includes(codes.OlmFinalizer.CsvCleanup))
    metadata.finalizers = [...finalizers, codes.OlmFinalizer.CsvCleanup];
  return create(p, 'Created');
}

// A Subscription (for a dependency) is created once, recording the plan that made it, and
// labelled olm.managed as upstream does, and with its Operator's component label.
function subscriptionStep(p: PendingStep): StepOutcome {
  if (p.existing !== undefined) return { status: 'Present' };
  const spec = p.object['spec'] as { name?: string } | undefined;
  markManaged(p.object, componentLabels([subscriptionLabelKey(spec?.name, p.namespace)]));
  p.object.metadata.annotations = {
    ...p.object.metadata.annotations,
    'olm.generated-by': p.plan,
  };
  return create(p, 'Created');
}

const missingFrom = (
  want: Record<string, string> | undefined,
  have: Record<string, string> | undefined,
): boolean => Object.entries(want ?? {}).some(([k, v]) => have?.[k] !== v);

// A CRD is created and waited for (WaitingForApi); an existing one is updated when no stored
// version is dropped and its CRs stay valid; one with the same definition is only marked ours.
// Never written as the service account.
function crdStep(p: PendingStep): StepOutcome {
  const { object, existing } = p;
  const [key, value] = installedAlongsideAnnotation(p.namespace, p.step.resolving);
  const owned = p.components.ownsCrd(p.step.resolving, object.metadata.name ?? '');
  markManaged(object, owned ? p.components.ofCsv(p.step.resolving) : {});
  object.metadata.annotations = { ...object.metadata.annotations, [key]: value };
  if (existing === undefined) return create(p, 'WaitingForApi', false);
  const problem =
    crdStoredVersionProblem(existing, object) ??
    customResourceProblem(object, p.s.customResources?.get(p.index) ?? []);
  if (problem !== undefined) return { error: problem };
  if (canonicalJson(existing['spec']) === canonicalJson(object['spec'])) {
    // Same definition (e.g. another namespace installs the same operator): only mark it
    // ours, with a patch that cannot conflict with other plans doing the same.
    if (
      !missingFrom(object.metadata.labels, existing.metadata.labels) &&
      !missingFrom(object.metadata.annotations, existing.metadata.annotations)
    ) {
      return { status: 'Present' };
    }
    const { labels, annotations } = object.metadata;
    return {
      write: {
        op: 'patch',
        ref: refOf(existing),
        type: 'merge',
        patch: { metadata: { labels, annotations } },
      },
      scoped: false,
      status: 'Present',
    };
  }
  const updated = mergedUpdate(existing, object);
  updated['status'] = existing['status'];
  return { write: { op: 'update', object: updated }, scoped: false, status: 'Present' };
}

// Other bundle objects: owned by their CSV (namespaced ones by an owner reference, so they wait
// until it exists or is created earlier in the same pass; cluster ones by owner labels),
// created or updated.
function bundleObjectStep(p: PendingStep): StepOutcome {
  const { object, existing, kind, namespace } = p;
  const csvName = p.step.resolving;
  markManaged(object, isOwnableKind(object.kind) ? p.components.ofCsv(csvName) : {});
  let ownerCsv: string | undefined;
  if (kind.ownership === 'ownerReference') {
    let uid = p.s.csvs.get(csvName)?.metadata.uid;
    if (uid === undefined && p.creating.has(csvName)) {
      uid = ''; // the CSV's create answers with it (apply.ts)
      ownerCsv = csvName;
    }
    if (uid === undefined) return { waiting: true }; // created once its CSV exists, to point at it
    object.metadata.ownerReferences = [
      {
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'ClusterServiceVersion',
        name: csvName,
        uid,
        controller: false,
        blockOwnerDeletion: false,
      },
    ];
  } else if (kind.ownership === 'ownerLabels') {
    object.metadata.labels = { ...object.metadata.labels, ...ownerLabels(csvName, namespace) };
  }
  const owned = ownerCsv === undefined ? {} : { ownerCsv };
  if (existing === undefined) return { ...create(p, 'Created'), ...owned };
  const updated = mergedUpdate(existing, object);
  if (kind.ownership === 'ownerLabels') {
    // Upstream takes over existing cluster objects: olm.owner names the resolving CSV. Its
    // update is unconditional (the last plan writing wins): a ClusterRole named after the
    // CSV and its rules is shared by every namespace installing that CSV, and plans racing
    // on it must not fail each other with conflicts.
    updated.metadata.labels = { ...updated.metadata.labels, ...ownerLabels(csvName, namespace) };
    delete updated.metadata.resourceVersion;
  }
  return {
    write: { op: 'update', object: updated },
    scoped: p.scoped,
    status: 'Present',
    ...owned,
  };
}

/** The writer of each step kind with its own rules; every other kind is a bundle object. */
const writers: Readonly<Record<string, (p: PendingStep) => StepOutcome>> = {
  ClusterServiceVersion: csvStep,
  Subscription: subscriptionStep,
  CustomResourceDefinition: crdStep,
};

/** What `p` leads to in this pass. */
export function stepOutcome(p: PendingStep): StepOutcome {
  return (writers[p.step.resource.kind] ?? bundleObjectStep)(p);
}
