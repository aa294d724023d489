// Every Operator's components, and every object a CSV owns, kept in memory from the watcher's
// mirror. Both loads of this function ask "which objects carry this label" across every
// component kind and namespace: listing the API by label selector cost 16 LISTs per Operator
// reconcile and 5 per adoption. One ordered consumer of the whole mirror instead keeps only the
// objects that matter (a component label, or a CSV as owner: a small part of the mirror), and
// a load first waits until it has applied everything the mirror held when the load began.
import type { JsMsg } from '@nats-io/jetstream';
import { codes } from '../../shared/api/index.js';
import { subjectPrefix, type MirrorSource } from '../../shared/bus/mirror-read.js';
import { followMirror, mirroredValue, type MirrorFollower } from '../../shared/bus/mirror-view.js';
import { encodeToken } from '../../shared/bus/subjects.js';
import type { KubeObject } from '../../shared/kube/client.js';
import { componentLabelKeys, ownableKinds } from '../../shared/api/component-labels.js';

/** A kind whose objects can be components of an Operator. */
export interface ComponentKind {
  apiVersion: string;
  kind: string;
  /** Only objects with these labels are components (upstream's cache sees only OLM's). */
  only?: (labels: Readonly<Record<string, string>>) => boolean;
}

const managed = (l: Readonly<Record<string, string>>): boolean =>
  l[codes.OlmLabel.Managed] === 'true';
const notCopied = (l: Readonly<Record<string, string>>): boolean =>
  l[codes.OlmLabel.CopiedFrom] === undefined;

/** Upstream's component kinds (componentLists), in its order. */
export const componentKinds: readonly ComponentKind[] = [
  { apiVersion: 'apps/v1', kind: 'Deployment', only: managed },
  { apiVersion: 'v1', kind: 'Service', only: managed },
  { apiVersion: 'v1', kind: 'Namespace' },
  { apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', only: managed },
  { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', only: managed },
  { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'Subscription' },
  { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'InstallPlan' },
  { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion', only: notCopied },
  { apiVersion: 'operators.coreos.com/v2', kind: 'OperatorCondition' },
  { apiVersion: 'v1', kind: 'Secret' },
  { apiVersion: 'v1', kind: 'ConfigMap', only: managed },
  { apiVersion: 'v1', kind: 'ServiceAccount', only: managed },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', only: managed },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', only: managed },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', only: managed },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', only: managed },
];

/** The namespaces of the CSVs that own `o`: by owner labels, and by owner reference. */
export function ownerNamespaces(o: KubeObject): string[] {
  const l = o.metadata.labels ?? {};
  const namespaces = new Set<string>();
  const labelled = l[codes.OlmLabel.OwnerNamespace];
  if (l[codes.OlmLabel.OwnerKind] === 'ClusterServiceVersion' && labelled !== undefined)
    namespaces.add(labelled);
  const { namespace } = o.metadata;
  if (
    namespace !== undefined &&
    (o.metadata.ownerReferences ?? []).some((r) => r.kind === 'ClusterServiceVersion')
  )
    namespaces.add(namespace);
  return [...namespaces];
}

/** What the operator function reads of the mirror, current as of the call. */
export interface ComponentIndex {
  /** Every object carrying component label `labelKey` in `cluster`. */
  components(cluster: string, labelKey: string): Promise<KubeObject[]>;
  /** Every object of an ownable kind owned by a CSV of `namespace` in `cluster`. */
  ownedFrom(cluster: string, namespace: string): Promise<KubeObject[]>;
  stop(): void;
}

interface Entry {
  object: KubeObject;
  /** Keys of the groups (cluster + label key, cluster + owner namespace) it is listed in. */
  groups: string[];
}

const kindsByToken = new Map(componentKinds.map((k) => [encodeToken(k.kind), k]));
const ownableTokens = new Set(ownableKinds.map(encodeToken));

const componentGroup = (cluster: string, labelKey: string): string => `c ${cluster} ${labelKey}`;
const ownerGroup = (cluster: string, namespace: string): string => `o ${cluster} ${namespace}`;

/** The groups an object of kind token `kind` in cluster token `cluster` belongs to. */
function groupsOf(cluster: string, kind: string, o: KubeObject): string[] {
  const groups: string[] = [];
  const labels = o.metadata.labels ?? {};
  const componentKind = kindsByToken.get(kind);
  if (componentKind !== undefined && (componentKind.only?.(labels) ?? true))
    for (const key of componentLabelKeys(labels)) groups.push(componentGroup(cluster, key));
  if (ownableTokens.has(kind))
    for (const namespace of ownerNamespaces(o)) groups.push(ownerGroup(cluster, namespace));
  return groups;
}

/** The objects of the groups, as one follower of the mirror has applied them. */
interface Groups {
  follower: MirrorFollower;
  list(group: string): KubeObject[];
}

async function openGroups(mirror: MirrorSource): Promise<Groups> {
  const entries = new Map<string, Entry>();
  const groups = new Map<string, Set<string>>();
  const apply = async (m: JsMsg): Promise<void> => {
    const key = m.subject.slice(subjectPrefix.length);
    const [cluster = '', kind = ''] = key.split('.');
    // Other kinds, and the watcher's name indexes, share the stream.
    if (!kindsByToken.has(kind) && !ownableTokens.has(kind)) return;
    const value = await mirroredValue<KubeObject>(mirror, m);
    if (value === undefined) return; // its successor follows
    for (const g of entries.get(key)?.groups ?? []) groups.get(g)?.delete(key);
    entries.delete(key);
    if (value === 'deleted') return;
    const listed = groupsOf(cluster, kind, value);
    if (listed.length === 0) return;
    entries.set(key, { object: value, groups: listed });
    for (const g of listed) {
      let keys = groups.get(g);
      if (keys === undefined) groups.set(g, (keys = new Set()));
      keys.add(key);
    }
  };
  const follower = await followMirror(mirror, `${subjectPrefix}>`, apply, {
    what: 'Operator components',
  });
  return {
    follower,
    list: (group) =>
      [...(groups.get(group) ?? [])].flatMap((k) => {
        const e = entries.get(k);
        return e === undefined ? [] : [e.object];
      }),
  };
}

/** Opens the index on first use (and anew after a failed catch-up). */
export function componentIndex(mirror: MirrorSource): ComponentIndex {
  let opened: Promise<Groups> | undefined;
  const read = async (group: string): Promise<KubeObject[]> => {
    opened ??= openGroups(mirror);
    const these = opened;
    try {
      const g = await these;
      await g.follower.current();
      return g.list(group);
    } catch (error) {
      if (opened === these) {
        opened = undefined;
        void these.then((g) => g.follower.stop()).catch(() => undefined);
      }
      throw error;
    }
  };
  return {
    components: (cluster, labelKey) => read(componentGroup(encodeToken(cluster), labelKey)),
    ownedFrom: (cluster, namespace) => read(ownerGroup(encodeToken(cluster), namespace)),
    stop() {
      void opened?.then((g) => g.follower.stop()).catch(() => undefined);
      opened = undefined;
    },
  };
}
