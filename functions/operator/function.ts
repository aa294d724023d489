// The operator function: the Operator API (see README.md). Two definitions, one per work-key
// type: a namespace's adoption (component labels) and one Operator's object and status.
import type { Operator } from '../../shared/api/index.js';
import { codes } from '../../shared/api/index.js';
import type { Backbone } from '../../shared/bus/backbone.js';
import { getMirrored, listMirrored } from '../../shared/bus/mirror-read.js';
import type { KubeClient, KubeObject, ObjectRef } from '../../shared/kube/client.js';
import { isNotFound } from '../../shared/kube/errors.js';
import { executeWrites } from '../../shared/kube/executor.js';
import type { CreateFunction } from '../../shared/runtime/function-module.js';
import type {
  FunctionDefinition,
  ObjectChange,
  Trigger,
  WorkItem,
} from '../../shared/runtime/types.js';
import type { FieldKey } from '../../shared/runtime/work-keys.js';
import { decideAdoption, type AdoptionSnapshot, type LabelPatch } from './adopt.js';
import { decideOperator, type OperatorDecision, type OperatorSnapshot } from './components.js';
import { adoptionKey, operatorKey } from './keys.js';
import { componentLabelKey, operatorNames } from './names.js';

const fieldManager = 'olmq-operator';

/** A kind whose objects can be components, and how the API lists them. */
interface ComponentKind {
  apiVersion: string;
  kind: string;
  /** Only these are components (upstream's cache sees only OLM-managed objects of most kinds). */
  also?: string;
}

const managed = `${codes.OlmLabel.Managed}=true`;

/** Upstream's component kinds (componentLists), in its order. */
export const componentKinds: readonly ComponentKind[] = [
  { apiVersion: 'apps/v1', kind: 'Deployment', also: managed },
  { apiVersion: 'v1', kind: 'Service', also: managed },
  { apiVersion: 'v1', kind: 'Namespace' },
  { apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', also: managed },
  { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', also: managed },
  { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription' },
  { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'InstallPlan' },
  {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    also: `!${codes.OlmLabel.CopiedFrom}`,
  },
  { apiVersion: 'operators.coreos.com/v2', kind: 'OperatorCondition' },
  { apiVersion: 'v1', kind: 'Secret' },
  { apiVersion: 'v1', kind: 'ConfigMap', also: managed },
  { apiVersion: 'v1', kind: 'ServiceAccount', also: managed },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', also: managed },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', also: managed },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', also: managed },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', also: managed },
];

// Namespaced kinds a CSV owns by owner reference, read from the mirror of its namespace.
const ownedInNamespace = [
  'Deployment',
  'Service',
  'OperatorCondition',
  'Secret',
  'ConfigMap',
  'ServiceAccount',
  'Role',
  'RoleBinding',
];
// Kinds a CSV owns by owner labels (cluster-scoped, or in another namespace), read from the API.
const ownedByLabels = componentKinds.filter((k) =>
  ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'APIService'].includes(k.kind),
);

const operatorItem = (name: string): WorkItem => operatorKey.of({ name });
const adoptionItem = (namespace: string): WorkItem => adoptionKey.of({ namespace });

const asObject = (change: ObjectChange): KubeObject | undefined =>
  change.object as KubeObject | undefined;

// The namespace whose CSV owns the object, by owner reference or owner labels.
function ownerNamespace(o: KubeObject): string | undefined {
  const l = o.metadata.labels ?? {};
  if (l[codes.OlmLabel.OwnerKind] === 'ClusterServiceVersion')
    return l[codes.OlmLabel.OwnerNamespace];
  if ((o.metadata.ownerReferences ?? []).some((r) => r.kind === 'ClusterServiceVersion'))
    return o.metadata.namespace;
  return undefined;
}

// The namespaces of the CSVs a CRD was installed alongside (install's annotation `ns/csv`).
function crdNamespaces(o: KubeObject): string[] {
  return Object.entries(o.metadata.annotations ?? {}).flatMap(([k, v]) =>
    k.startsWith(codes.OlmAnnotationPrefix.InstalledAlongside) ? [v.split('/')[0] ?? ''] : [],
  );
}

export const createFunction: CreateFunction = (context) => {
  const { backbone } = context;

  // A deleted component concerns the Operators whose status lists it.
  const listingOperators = async (change: ObjectChange): Promise<WorkItem[]> => {
    const operators = await listMirrored<Operator>(backbone, {
      cluster: change.ref.cluster,
      kind: 'Operator',
      namespace: '',
    });
    const { kind, namespace, name } = change.ref;
    return operators
      .filter((op) =>
        (op.status?.components?.refs ?? []).some(
          (r) => r.kind === kind && (r.namespace ?? '') === namespace && r.name === name,
        ),
      )
      .map((op) => operatorItem(op.metadata.name ?? ''));
  };

  // Every kind's trigger: its Operators (by label), and the adoption it concerns.
  const trigger = (
    kind: string,
    adoption: (o: KubeObject, change: ObjectChange) => readonly string[],
  ): Trigger => ({
    kind,
    parts: ['metadata', 'spec', 'status'],
    async workKeys(change) {
      const o = asObject(change);
      if (o === undefined) return listingOperators(change);
      const items = operatorNames(o.metadata.labels).map(operatorItem);
      if (change.touches(['metadata', 'spec', 'status.installedCSV', 'status.installPlanRef']))
        for (const ns of adoption(o, change)) if (ns !== '') items.push(adoptionItem(ns));
      return items;
    },
  });
  const own = (_o: KubeObject, c: ObjectChange): string[] => [c.ref.namespace];
  const owner = (o: KubeObject): string[] => {
    const ns = ownerNamespace(o);
    return ns === undefined ? [] : [ns];
  };
  const none = (): string[] => [];

  const adoption: FunctionDefinition<FieldKey<'namespace'>, AdoptionSnapshot, LabelPatch[]> = {
    key: adoptionKey,
    triggers: [
      trigger('Subscription', own),
      trigger('InstallPlan', own),
      trigger('ClusterServiceVersion', own),
      trigger('CustomResourceDefinition', crdNamespaces),
      ...[
        'OperatorCondition',
        'Deployment',
        'Service',
        'Secret',
        'ConfigMap',
        'ServiceAccount',
        'Role',
        'RoleBinding',
        'ClusterRole',
        'ClusterRoleBinding',
        'APIService',
      ].map((kind) => trigger(kind, owner)),
      trigger('Namespace', none),
    ],
    load: (work) => loadAdoption(backbone, work.client, work.cluster, work.key.namespace),
    decide: (snapshot) => ({ writes: decideAdoption(snapshot) }),
    async apply(patches, work) {
      for (const p of patches) {
        try {
          await executeWrites(
            work.client,
            [{ op: 'patch', ref: p.ref, type: 'merge', patch: { metadata: { labels: p.labels } } }],
            fieldManager,
          );
        } catch (error) {
          // Gone since it was read: nothing to label.
          if (!isNotFound(error)) throw error;
        }
      }
    },
  };

  const operator: FunctionDefinition<FieldKey<'name'>, OperatorSnapshot, OperatorDecision> = {
    key: operatorKey,
    triggers: [{ kind: 'Operator', workKeys: (c) => [operatorItem(c.ref.name)] }],
    load: (work) => loadOperator(work.client, work.key.name),
    decide(snapshot) {
      const decision = decideOperator(snapshot);
      // A new Operator's status is written by the next pass, on the object just created.
      return decision.created ? { writes: decision, again: true } : { writes: decision };
    },
    async apply(decision, work) {
      await executeWrites(work.client, decision.writes, fieldManager);
    },
  };

  return Promise.resolve({ definitions: [adoption, operator] });
};

/** Reads one namespace's adoption: the mirror for the namespace, the API for owner labels. */
export async function loadAdoption(
  backbone: Backbone,
  client: KubeClient,
  cluster: string,
  namespace: string,
): Promise<AdoptionSnapshot> {
  const mirrored = (kind: string): Promise<KubeObject[]> =>
    listMirrored<KubeObject>(backbone, { cluster, kind, namespace });
  const selector = `${codes.OlmLabel.OwnerKind}=ClusterServiceVersion,${codes.OlmLabel.OwnerNamespace}=${namespace}`;
  const [subscriptions, installPlans, csvs, inNamespace, labelled] = await Promise.all([
    mirrored('Subscription'),
    mirrored('InstallPlan'),
    mirrored('ClusterServiceVersion'),
    Promise.all(ownedInNamespace.map(mirrored)).then((l) => l.flat()),
    Promise.all(
      ownedByLabels.map((k) =>
        client
          .list({ apiVersion: k.apiVersion, kind: k.kind }, { labelSelector: selector })
          .then((l) => l.items),
      ),
    ).then((l) => l.flat()),
  ]);
  const crdNames = new Set(
    csvs.flatMap((csv) =>
      (
        (csv['spec'] as { customresourcedefinitions?: { owned?: { name?: string }[] } })
          ?.customresourcedefinitions?.owned ?? []
      ).map((d) => d.name ?? ''),
    ),
  );
  const crds = (
    await Promise.all(
      [...crdNames].map((name) =>
        getMirrored<KubeObject>(backbone, {
          cluster,
          kind: 'CustomResourceDefinition',
          namespace: '',
          name,
        }),
      ),
    )
  ).flatMap((c) => (c === undefined ? [] : [c]));
  return {
    namespace,
    subscriptions,
    installPlans,
    csvs,
    candidates: [...inNamespace, ...labelled],
    crds,
  };
}

/** Reads one Operator and its components, fresh from the API. */
export async function loadOperator(client: KubeClient, name: string): Promise<OperatorSnapshot> {
  const key = componentLabelKey(name);
  const ref: ObjectRef = { apiVersion: 'operators.coreos.com/v1', kind: 'Operator', name };
  const [operator, lists] = await Promise.all([
    client.get<KubeObject>(ref),
    Promise.all(
      componentKinds.map((k) =>
        client
          .list(
            { apiVersion: k.apiVersion, kind: k.kind },
            { labelSelector: k.also === undefined ? key : `${key},${k.also}` },
          )
          .then((l) => l.items),
      ),
    ),
  ]);
  return {
    name,
    operator: operator as Operator | undefined,
    components: lists.flat(),
  };
}
