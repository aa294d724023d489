// rbac-csv: one non-copied CSV (csv.ts decides): its provided-API gate, its per-API
// ClusterRoles, and for AllNamespaces groups the ClusterRoles and bindings lifted from its
// Roles; when it is gone, its cluster-scoped RBAC. Hands its namespace's groups on when it goes.
// Hosts the function's one CSV trigger, which starts this definition's items, the groups of the
// CSV's namespace, and for a copy the namespace it is in (tenant RBAC).
import { OlmLabel } from '../../shared/api/codes.js';
import type { KubeObject } from '../../shared/kube/client.js';
import type { ObjectPart } from '../../shared/bus/object-parts.js';
import type { Write } from '../../shared/kube/executor.js';
import { mirroredOrApi } from '../../shared/kube/mirrored-or-api.js';
import { kubeTime } from '../../shared/kube/time.js';
import {
  isCopy,
  isGlobal,
  ownerSelector,
  roleSuffixes,
  type BindingObject,
  type CsvObject,
  type RoleObject,
} from '../../shared/operator-group/index.js';
import type {
  FunctionDefinition,
  ObjectChange,
  Trigger,
  WorkContext,
  WorkItem,
} from '../../shared/runtime/types.js';
import type { NamespacedName } from '../../shared/runtime/work-keys.js';
import { csvPhaseView, decideCsv, groupOfCsv, type CsvSnapshot } from './csv.js';
import { memberPhaseView } from './group-rules.js';
import { applyWrites, listApi, mirrored, onlyGlobal, rbacApi } from './io.js';
import { csvKey, groupsKey, namespaceKey } from './keys.js';
import type { RbacContext } from './types.js';

// What the CSV's and its groups' decisions read of an operator's own CSV: what it is, provides
// and asks for (metadata, spec), and of its status only what each tells apart of its phase and
// reason (csvPhaseView, memberPhaseView): not its conditions, nor the phases an install passes
// through (InstallReady, Installing) that neither tells apart.
const csvParts: readonly ObjectPart[] = ['metadata', 'spec'];

/** The work a change of an operator's own CSV starts: its own item, its namespace's groups. */
export function ownCsvWork(c: ObjectChange, csv: CsvObject | undefined): WorkItem[] {
  const definition = c.touches(csvParts);
  // Both views are asked for, so that both are remembered.
  const ownPhase = csv === undefined || c.differs('rbac-csv.phase', csvPhaseView(csv));
  const memberPhase = csv === undefined || c.differs('rbac-groups.phase', memberPhaseView(csv));
  return [
    ...(definition || ownPhase
      ? [csvKey.of({ namespace: c.ref.namespace, name: c.ref.name })]
      : []),
    ...(definition || memberPhase ? [groupsKey.of({ namespace: c.ref.namespace })] : []),
  ];
}

/** The function's CSV trigger (one consumer for all CSV changes). */
function csvTrigger(context: RbacContext): Trigger {
  return {
    kind: 'ClusterServiceVersion',
    // No trigger-wide parts: they would hide copies (below).
    workKeys: async (c) => {
      const csv = c.object as CsvObject | undefined;
      // A copy matters here for its uid (tenant RBAC is owned by it), so any change of one looks
      // at its namespace. Not only its appearance: the mirror keeps one message per object, so a
      // trigger behind the watcher may get a new copy's latest version only, already Copied and
      // naming just its status as changed. Copies of global groups' operators get no tenant
      // RBAC (at 10,000 namespaces, that is 5 reconciles a namespace saved per global operator).
      if (csv !== undefined && isCopy(csv)) {
        const from = csv.metadata.labels?.[OlmLabel.CopiedFrom];
        if (from !== undefined && onlyGlobal(await context.groups.list(c.ref.cluster, from)))
          return [];
        return [namespaceKey.of({ namespace: c.ref.namespace })];
      }
      return ownCsvWork(c, csv);
    },
  };
}

/** The rbac-csv definition. */
export function csvDefinition(
  context: RbacContext,
): FunctionDefinition<NamespacedName, CsvSnapshot, Write[]> {
  const ofCluster =
    <T>(cluster: string, kind: string) =>
    (name: string) =>
      mirrored<T>(context, cluster, kind, '', name);

  const load = async (work: WorkContext<NamespacedName>): Promise<CsvSnapshot> => {
    const { cluster, client } = work;
    const { namespace, name } = work.key;
    // Gone takes its cluster RBAC with it, so the mirror's word is not enough: the objects an
    // install creates with a new CSV (its ClusterRoleBindings) may be mirrored before the CSV.
    const [csv, allGroups] = await Promise.all([
      mirroredOrApi<CsvObject>(context.mirror, client, cluster, {
        apiVersion: 'operators.coreos.com/v1alpha1',
        kind: 'ClusterServiceVersion',
        namespace,
        name,
      }),
      context.groups.list(cluster),
    ]);
    const groups = allGroups.filter((g) => g.metadata.namespace === namespace);
    const selector = ownerSelector({ name, namespace }, 'ClusterServiceVersion');
    const base: CsvSnapshot = {
      namespace,
      name,
      csv,
      groups,
      allGroups,
      apiObjects: new Map(),
      clusterRoles: new Map(),
      clusterRoleBindings: new Map(),
      ownedRoles: [],
      ownedRoleBindings: [],
      labelledClusterRbac: [],
      now: kubeTime(work.now()),
    };
    if (csv === undefined) {
      const [roles, bindings] = await Promise.all([
        listApi(client, rbacApi, 'ClusterRole', undefined, selector),
        listApi(client, rbacApi, 'ClusterRoleBinding', undefined, selector),
      ]);
      return { ...base, labelledClusterRbac: [...roles, ...bindings] };
    }
    const group = groupOfCsv(csv, groups);
    if (isCopy(csv) || group === undefined) return base;
    const crd = ofCluster<KubeObject>(cluster, 'CustomResourceDefinition');
    const apiService = ofCluster<KubeObject>(cluster, 'APIService');
    const apiObjects = new Map<string, KubeObject>();
    const roleNames: string[] = [];
    for (const owned of csv.spec?.customresourcedefinitions?.owned ?? []) {
      const object = await crd(owned.name);
      if (object !== undefined) apiObjects.set(owned.name, object);
      const prefix = `${owned.name}-${owned.version}-`;
      roleNames.push(...roleSuffixes.map((s) => prefix + s), `${prefix}crdview`);
    }
    for (const owned of csv.spec?.apiservicedefinitions?.owned ?? []) {
      const svcName = `${owned.version}.${owned.group}`;
      const object = await apiService(svcName);
      if (object !== undefined) apiObjects.set(svcName, object);
      roleNames.push(...roleSuffixes.map((s) => `${owned.name}-${owned.version}-${s}`));
    }
    const [ownedRoles, ownedRoleBindings] = isGlobal(group.status?.namespaces)
      ? await Promise.all([
          listApi<RoleObject>(client, rbacApi, 'Role', namespace, selector),
          listApi<BindingObject>(client, rbacApi, 'RoleBinding', namespace, selector),
        ])
      : [[], []];
    roleNames.push(...ownedRoles.map((r) => r.metadata.name ?? ''));
    // From the mirror: a write decided on a copy a moment old fails (AlreadyExists, Conflict)
    // and is decided again, which is rare next to reading a dozen roles per CSV change.
    const [clusterRoles, clusterRoleBindings] = await Promise.all([
      presentByName(roleNames, ofCluster<RoleObject>(cluster, 'ClusterRole')),
      presentByName(
        ownedRoleBindings.map((b) => b.metadata.name ?? ''),
        ofCluster<BindingObject>(cluster, 'ClusterRoleBinding'),
      ),
    ]);
    return {
      ...base,
      apiObjects,
      clusterRoles,
      clusterRoleBindings,
      ownedRoles,
      ownedRoleBindings,
    };
  };

  return {
    key: csvKey,
    triggers: [csvTrigger(context)],
    load,
    decide(snapshot) {
      const d = decideCsv(snapshot);
      return {
        writes: d.writes,
        ...(d.requeueGroups ? { enqueue: [groupsKey.of({ namespace: snapshot.namespace })] } : {}),
      };
    },
    apply: (writes, work) => applyWrites(context, writes, work),
  };
}

// The objects of these names that exist, by name.
async function presentByName<T>(
  names: readonly string[],
  read: (name: string) => Promise<T | undefined>,
): Promise<Map<string, T>> {
  const found = new Map<string, T>();
  await Promise.all(
    names.map(async (name) => {
      const object = await read(name);
      if (object !== undefined) found.set(name, object);
    }),
  );
  return found;
}
