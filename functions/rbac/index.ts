// The rbac function: OperatorGroup targets and status, member CSV annotations, namespace
// labels, the generated RBAC (aggregated, per-API, AllNamespaces and tenant roles) and the
// olm.providedAPIs rules between groups.
//
// Work keys (per cluster):
// - ["groups", ns]: every OperatorGroup of one namespace (upstream syncOperatorGroups).
// - ["csv", ns, name]: one non-copied CSV: provided-API gate, per-API and AllNamespaces roles.
// - ["namespace", ns]: namespace labels and tenant RBAC of one namespace, and which selector
//   groups must look again (upstream syncNamespace). Fan-out of groups lands here.
// - ["tenants", ns, name]: an operator's Roles changed; fans out to its target namespaces.
// - ["sweep"]: a group vanished; removes its olm.operatorgroup.uid label everywhere.
import { setTimeout as delay } from 'node:timers/promises';
import { Counter, type Registry } from 'prom-client';
import type { Backbone } from '../../shared/bus/backbone.js';
import { getMirrored, listMirrored } from '../../shared/bus/mirror-read.js';
import type { ObjectPart } from '../../shared/bus/object-parts.js';
import { lazyMirrorView } from '../../shared/bus/mirror-view.js';
import { workSubject, type WorkKey } from '../../shared/bus/subjects.js';
import { OlmAnnotation, OlmLabel, OlmLabelPrefix } from '../../shared/api/codes.js';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import { executeWrites, type Write } from '../../shared/kube/executor.js';
import { formatLabelSelector, labelSelectorFromObject } from '../../shared/kube/selectors.js';
import type {
  Decision,
  FunctionDefinition,
  WorkContext,
} from '../../shared/runtime/function-host.js';
import type { CreateFunction } from '../../shared/runtime/function-module.js';
import {
  NamespaceSet,
  aggregateClusterRoleName,
  isGlobal,
  ownerSelector,
  roleSuffixes,
  surfaceTargets,
  targetSelectionOf,
  type BindingObject,
  type RoleObject,
} from '../../shared/operator-group/index.js';
import { isCopy, type CsvObject } from '../copy-csv/copy.js';
import { decideCsv, groupOfCsv, type CsvSnapshot } from './csv.js';
import {
  decideGroups,
  type GroupInputs,
  type GroupsSnapshot,
  type OperatorGroupObject,
} from './groups.js';
import { decideNamespace, type NamespaceSnapshot, type TenantSource } from './namespace.js';

/** How long a group's status write waits to be mirrored before its namespaces are requeued. */
const mirrorWaitMs = 2_000;

/** Name of the function (and of its consumers). */
export const rbacFunctionName = 'rbac';
const fieldManager = 'olmq-rbac';

type Snapshot =
  | { type: 'groups'; state: GroupsSnapshot }
  | { type: 'csv'; state: CsvSnapshot }
  | { type: 'namespace'; state: NamespaceSnapshot }
  | { type: 'fanout'; keys: WorkKey[] }
  | { type: 'sweep'; writes: Write[] }
  | { type: 'none' };

interface Writes {
  kube: Write[];
  requeue: WorkKey[];
}

const rbac = 'rbac.authorization.k8s.io/v1';

// What the roles of an operator's own CSV follow: what it provides and asks for, and its phase;
// not its conditions.
const csvParts: readonly ObjectPart[] = ['metadata', 'spec', 'status.phase', 'status.reason'];

// Groups that are all global: their operators' copies get no tenant RBAC.
const onlyGlobal = (groups: readonly OperatorGroupObject[]): boolean =>
  groups.length > 0 && groups.every((g) => isGlobal(g.status?.namespaces));

/** The rbac definition over `clients`. */
export function rbacFunction(
  backbone: Backbone,
  clients: ReadonlyMap<string, KubeClient>,
  registry: Registry,
  options: { fanoutBatch: number; now?: () => string } = { fanoutBatch: 512 },
): FunctionDefinition<Snapshot, Writes> & { close(): void } {
  const now = options.now ?? (() => new Date().toISOString().replace(/\.\d+Z$/, 'Z'));
  const clientOf = (cluster: string): KubeClient => {
    const client = clients.get(cluster);
    if (client === undefined) throw new Error(`no client for cluster ${cluster}`);
    return client;
  };
  const written =
    (registry.getSingleMetric('olmq_rbac_writes_total') as
      Counter<'cluster' | 'kind' | 'op'> | undefined) ??
    new Counter({
      name: 'olmq_rbac_writes_total',
      help: 'Writes of the rbac function, by object kind and operation.',
      labelNames: ['cluster', 'kind', 'op'],
      registers: [registry],
    });
  const mirror = <T>(cluster: string, kind: string, namespace: string, name: string) =>
    getMirrored<T>(backbone, { cluster, kind, namespace, name });
  // Every reconcile reads every group of the cluster (intersections, conflicts): a live view.
  const groups = lazyMirrorView<OperatorGroupObject>(backbone, 'OperatorGroup');
  const groupsOf = (cluster: string, namespace?: string) => groups.list(cluster, namespace);
  const mirroredTargets = async (cluster: string, group: OperatorGroupObject): Promise<void> => {
    const targets = JSON.stringify(group.status?.namespaces ?? []);
    const deadline = Date.now() + mirrorWaitMs;
    while (Date.now() < deadline) {
      const mirrored = (await groupsOf(cluster, group.metadata.namespace ?? '')).find(
        (g) => g.metadata.name === group.metadata.name,
      );
      if (mirrored === undefined || JSON.stringify(mirrored.status?.namespaces ?? []) === targets)
        return;
      await delay(5);
    }
  };
  const csvsIn = (cluster: string, namespace: string) =>
    listMirrored<CsvObject>(backbone, {
      cluster,
      kind: 'ClusterServiceVersion',
      namespace,
    });
  const listApi = async <T extends KubeObject>(
    cluster: string,
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    labelSelector: string,
  ): Promise<T[]> =>
    (await clientOf(cluster).list<T>({ apiVersion, kind, namespace }, { labelSelector })).items;

  const loadGroups = async (work: WorkContext, namespace: string): Promise<Snapshot> => {
    const { cluster } = work;
    const client = clientOf(cluster);
    const [allGroups, csvs, owned] = await Promise.all([
      groupsOf(cluster),
      csvsIn(cluster, namespace),
      listApi<RoleObject>(
        cluster,
        rbac,
        'ClusterRole',
        undefined,
        `${OlmLabel.OwnerKind}=OperatorGroup,${OlmLabel.OwnerNamespace}=${namespace}`,
      ),
    ]);
    const groups = allGroups.filter((g) => g.metadata.namespace === namespace);
    const inputs = new Map<string, GroupInputs>();
    const aggregateRoles = new Map<string, RoleObject>(
      owned.map((r) => [r.metadata.name ?? '', r]),
    );
    for (const group of groups) {
      let matched: string[] = [];
      let selection;
      try {
        selection = targetSelectionOf(group);
      } catch {
        selection = undefined; // decideGroups reports it
      }
      if (selection?.type === 'selector') {
        const selector = formatLabelSelector(labelSelectorFromObject(selection.selector));
        matched = (
          await client.list({ apiVersion: 'v1', kind: 'Namespace' }, { labelSelector: selector })
        ).items.map((n) => n.metadata.name ?? '');
      }
      const saName = group.spec?.serviceAccountName ?? '';
      const serviceAccount =
        saName === ''
          ? undefined
          : await client.get({ apiVersion: 'v1', kind: 'ServiceAccount', namespace, name: saName });
      inputs.set(group.metadata.name, { matched, serviceAccount });
      for (const suffix of roleSuffixes) {
        const name = aggregateClusterRoleName(namespace, group.metadata.name, suffix);
        if (!aggregateRoles.has(name)) {
          const role = await client.get<RoleObject>({
            apiVersion: rbac,
            kind: 'ClusterRole',
            name,
          });
          if (role !== undefined) aggregateRoles.set(name, role);
        }
      }
    }
    // Providers in the namespaces of groups intersecting these (their conflicts may change).
    const intersecting = new Set<string>();
    for (const group of groups) {
      const surface = surfaceTargets(group);
      for (const other of allGroups) {
        if (other.metadata.namespace !== namespace && surface.intersects(surfaceTargets(other))) {
          intersecting.add(other.metadata.namespace ?? '');
        }
      }
    }
    const intersectingCsvs = (await Promise.all([...intersecting].map((ns) => csvsIn(cluster, ns))))
      .flat()
      .filter((c) => !isCopy(c));
    return {
      type: 'groups',
      state: {
        namespace,
        groups,
        inputs,
        allGroups,
        csvs,
        intersectingCsvs,
        aggregateRoles,
        ownedAggregateRoles: owned.filter((r) => r.metadata.name?.startsWith('olm.og.') === true),
        now: now(),
      },
    };
  };

  const loadCsv = async (work: WorkContext, namespace: string, name: string): Promise<Snapshot> => {
    const { cluster } = work;
    const [csv, allGroups] = await Promise.all([
      mirror<CsvObject>(cluster, 'ClusterServiceVersion', namespace, name),
      groupsOf(cluster),
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
      now: now(),
    };
    if (csv === undefined) {
      const [roles, bindings] = await Promise.all([
        listApi(cluster, rbac, 'ClusterRole', undefined, selector),
        listApi(cluster, rbac, 'ClusterRoleBinding', undefined, selector),
      ]);
      return { type: 'csv', state: { ...base, labelledClusterRbac: [...roles, ...bindings] } };
    }
    if (isCopy(csv) || groupOfCsv(csv, groups) === undefined) return { type: 'csv', state: base };
    const spec = csv.spec as
      | {
          customresourcedefinitions?: { owned?: { name: string; version: string }[] };
          apiservicedefinitions?: { owned?: { name: string; group: string; version: string }[] };
        }
      | undefined;
    const apiObjects = new Map<string, KubeObject>();
    const clusterRoles = new Map<string, RoleObject>();
    const roleNames: string[] = [];
    for (const owned of spec?.customresourcedefinitions?.owned ?? []) {
      const crd = await mirror<KubeObject>(cluster, 'CustomResourceDefinition', '', owned.name);
      if (crd !== undefined) apiObjects.set(owned.name, crd);
      const prefix = `${owned.name}-${owned.version}-`;
      roleNames.push(...roleSuffixes.map((s) => prefix + s), `${prefix}crdview`);
    }
    for (const owned of spec?.apiservicedefinitions?.owned ?? []) {
      const svcName = `${owned.version}.${owned.group}`;
      const svc = await mirror<KubeObject>(cluster, 'APIService', '', svcName);
      if (svc !== undefined) apiObjects.set(svcName, svc);
      roleNames.push(...roleSuffixes.map((s) => `${owned.name}-${owned.version}-${s}`));
    }
    const group = groupOfCsv(csv, groups);
    const global = isGlobal(group?.status?.namespaces);
    const [ownedRoles, ownedRoleBindings] = global
      ? await Promise.all([
          listApi<RoleObject>(cluster, rbac, 'Role', namespace, selector),
          listApi<BindingObject>(cluster, rbac, 'RoleBinding', namespace, selector),
        ])
      : [[], []];
    roleNames.push(...ownedRoles.map((r) => r.metadata.name ?? ''));
    // From the mirror: a write decided on a copy a moment old fails (AlreadyExists, Conflict)
    // and is decided again, which is rare next to reading a dozen roles per CSV change.
    await Promise.all(
      roleNames.map(async (roleName) => {
        const role = await mirror<RoleObject>(cluster, 'ClusterRole', '', roleName);
        if (role !== undefined) clusterRoles.set(roleName, role);
      }),
    );
    const clusterRoleBindings = new Map<string, BindingObject>();
    await Promise.all(
      ownedRoleBindings.map(async (b) => {
        const name = b.metadata.name ?? '';
        const crb = await mirror<BindingObject>(cluster, 'ClusterRoleBinding', '', name);
        if (crb !== undefined) clusterRoleBindings.set(name, crb);
      }),
    );
    return {
      type: 'csv',
      state: {
        ...base,
        apiObjects,
        clusterRoles,
        clusterRoleBindings,
        ownedRoles,
        ownedRoleBindings,
      },
    };
  };

  const loadNamespace = async (work: WorkContext, name: string): Promise<Snapshot> => {
    const { cluster } = work;
    const [namespace, allGroups, present] = await Promise.all([
      mirror<KubeObject>(cluster, 'Namespace', '', name),
      groupsOf(cluster),
      csvsIn(cluster, name),
    ]);
    const tenants: TenantSource[] = [];
    for (const copy of present) {
      const from = copy.metadata.labels?.[OlmLabel.CopiedFrom];
      if (from === undefined || namespace === undefined) continue;
      const fromGroups = allGroups.filter((g) => g.metadata.namespace === from);
      // Copies of a global group's operators get no tenant RBAC: skip reading their parents.
      if (onlyGlobal(fromGroups)) continue;
      const parent = await mirror<CsvObject>(
        cluster,
        'ClusterServiceVersion',
        from,
        copy.metadata.name ?? '',
      );
      if (parent === undefined) continue;
      const group = groupOfCsv(parent, fromGroups);
      if (group === undefined || isGlobal(group.status?.namespaces)) continue;
      if (!new NamespaceSet(group.status?.namespaces ?? []).contains(name)) continue;
      const parentSelector = ownerSelector(
        { name: parent.metadata.name ?? '', namespace: from },
        'ClusterServiceVersion',
      );
      const copySelector = ownerSelector(
        { name: copy.metadata.name ?? '', namespace: name },
        'ClusterServiceVersion',
      );
      const [roles, bindings, existingRoles, existingBindings] = await Promise.all([
        listApi<RoleObject>(cluster, rbac, 'Role', from, parentSelector),
        listApi<BindingObject>(cluster, rbac, 'RoleBinding', from, parentSelector),
        listApi<RoleObject>(cluster, rbac, 'Role', name, copySelector),
        listApi<BindingObject>(cluster, rbac, 'RoleBinding', name, copySelector),
      ]);
      tenants.push({ copy, parent, roles, bindings, existingRoles, existingBindings });
    }
    return { type: 'namespace', state: { name, namespace, allGroups, tenants } };
  };

  const loadTenants = async (
    work: WorkContext,
    namespace: string,
    name: string,
  ): Promise<Snapshot> => {
    const csv = await mirror<CsvObject>(work.cluster, 'ClusterServiceVersion', namespace, name);
    const targets = NamespaceSet.fromAnnotation(
      csv?.metadata.annotations?.[OlmAnnotation.TargetNamespaces] ?? '',
    );
    if (csv === undefined || targets.isAll) return { type: 'none' };
    return {
      type: 'fanout',
      keys: targets
        .toArray()
        .filter((ns) => ns !== namespace && ns !== '')
        .map((ns) => ['namespace', ns]),
    };
  };

  // Removes olm.operatorgroup.uid labels of groups that no longer exist, cluster-wide.
  const loadSweep = async (work: WorkContext): Promise<Snapshot> => {
    const client = clientOf(work.cluster);
    const live = new Set((await groupsOf(work.cluster)).map((g) => g.metadata.uid ?? ''));
    const namespaces = (await client.list({ apiVersion: 'v1', kind: 'Namespace' })).items;
    const writes: Write[] = [];
    for (const ns of namespaces) {
      const stale = Object.keys(ns.metadata.labels ?? {}).filter(
        (k) =>
          k.startsWith(OlmLabelPrefix.OperatorGroupUid) &&
          !live.has(k.slice(OlmLabelPrefix.OperatorGroupUid.length)),
      );
      if (stale.length === 0) continue;
      writes.push({
        op: 'patch',
        ref: { apiVersion: 'v1', kind: 'Namespace', name: ns.metadata.name },
        type: 'merge',
        patch: { metadata: { labels: Object.fromEntries(stale.map((k) => [k, null])) } },
      });
    }
    return { type: 'sweep', writes };
  };

  return {
    close: () => groups.stop(),
    name: rbacFunctionName,
    triggers: [
      { kind: 'OperatorGroup', workKeys: (c) => [['groups', c.ref.namespace]] },
      { kind: 'Namespace', workKeys: (c) => [['namespace', c.ref.name]] },
      {
        kind: 'ClusterServiceVersion',
        // No trigger-wide parts: they would hide copies (below).
        workKeys: async (c) => {
          const csv = c.object as CsvObject | undefined;
          // A copy matters here for its uid (tenant RBAC is owned by it), so any change of one
          // looks at its namespace. Not only its appearance: the mirror keeps one message per
          // object, so a trigger behind the watcher may get a new copy's latest version only,
          // already Copied and naming just its status as changed. Copies of global groups'
          // operators get no tenant RBAC (at 10,000 namespaces, that is 5 reconciles a
          // namespace saved per global operator).
          if (csv !== undefined && isCopy(csv)) {
            const from = csv.metadata.labels?.[OlmLabel.CopiedFrom];
            if (from !== undefined && onlyGlobal(await groupsOf(c.ref.cluster, from))) return [];
            return [['namespace', c.ref.namespace]];
          }
          if (!c.touches(csvParts)) return [];
          return [
            ['csv', c.ref.namespace, c.ref.name],
            ['groups', c.ref.namespace],
          ];
        },
      },
      ...(['Role', 'RoleBinding'] as const).map((kind) => ({
        kind,
        workKeys: (c: { ref: { namespace: string }; object: unknown }): WorkKey[] => {
          // A deletion shows no labels: it may have been tenant RBAC of a copy here (taken by the
          // garbage collector when the copy was replaced, say), which the namespace makes again.
          if (c.object === undefined) return [['namespace', c.ref.namespace]];
          const labels = (c.object as KubeObject).metadata.labels;
          if (
            labels?.[OlmLabel.OwnerKind] !== 'ClusterServiceVersion' ||
            labels[OlmLabel.CopiedFrom] !== undefined
          )
            return [];
          const ns = labels[OlmLabel.OwnerNamespace] ?? '';
          const owner = labels[OlmLabel.Owner] ?? '';
          return [
            ['csv', ns, owner],
            ['tenants', ns, owner],
          ];
        },
      })),
      {
        kind: 'ClusterRole',
        workKeys: (c) => {
          const role = c.object as RoleObject | undefined;
          // An aggregated role changes whenever the aggregation controller refills its rules,
          // which are not ours: at each install of an API, for every group aggregating it.
          if (role?.aggregationRule !== undefined) return [];
          const labels = role?.metadata.labels;
          return labels?.[OlmLabel.OwnerKind] === 'OperatorGroup'
            ? [['groups', labels[OlmLabel.OwnerNamespace] ?? '']]
            : [];
        },
      },
    ],
    async load(work) {
      const [type, a = '', b = ''] = work.key;
      switch (type) {
        case 'groups':
          return loadGroups(work, a);
        case 'csv':
          return loadCsv(work, a, b);
        case 'namespace':
          return loadNamespace(work, a);
        case 'tenants':
          return loadTenants(work, a, b);
        case 'sweep':
          return loadSweep(work);
        default:
          return { type: 'none' };
      }
    },
    decide(snapshot): Decision<Writes> {
      switch (snapshot.type) {
        case 'none':
          return { writes: { kube: [], requeue: [] } };
        case 'fanout':
          return { writes: { kube: [], requeue: snapshot.keys } };
        case 'sweep':
          return { writes: { kube: snapshot.writes, requeue: [] } };
        case 'groups': {
          const d = decideGroups(snapshot.state);
          return {
            writes: {
              kube: d.writes,
              requeue: [
                ...d.namespaces.map((ns) => ['namespace', ns]),
                ...d.csvs.map((c) => ['csv', c.namespace, c.name]),
                ...(d.sweepNamespaceLabels ? [['sweep']] : []),
              ],
            },
            ...(d.requeueAfterMs === undefined ? {} : { requeueAfterMs: d.requeueAfterMs }),
          };
        }
        case 'csv': {
          const d = decideCsv(snapshot.state);
          const { namespace, name } = snapshot.state;
          return {
            writes: {
              kube: d.writes,
              requeue: [
                ...(d.requeueCsv ? [['csv', namespace, name]] : []),
                ...(d.requeueGroups ? [['groups', namespace]] : []),
              ],
            },
          };
        }
        case 'namespace': {
          const d = decideNamespace(snapshot.state);
          return {
            writes: {
              kube: d.writes,
              requeue: [...new Set(d.groupNamespaces)].map((ns) => ['groups', ns]),
            },
          };
        }
      }
    },
    async apply(writes, work) {
      if (writes.kube.length > 0 || writes.requeue.length > 0) {
        work.log.debug(
          {
            writes: writes.kube.map(
              (w) =>
                `${w.op} ${'object' in w ? `${w.object.kind} ${w.object.metadata.namespace ?? ''}/${w.object.metadata.name ?? ''}` : `${w.ref.kind} ${w.ref.namespace ?? ''}/${w.ref.name ?? ''}`}`,
            ),
            requeue: writes.requeue.length,
          },
          'applying',
        );
      }
      await executeWrites(clientOf(work.cluster), writes.kube, fieldManager);
      for (const w of writes.kube) {
        const kind = 'object' in w ? w.object.kind : w.ref.kind;
        written.inc({ cluster: work.cluster, kind, op: w.op });
      }
      // The namespaces requeued after a group's new targets read the group from the mirror:
      // they must find those targets there, so wait (briefly) for the watcher to mirror them.
      if (writes.requeue.length > 0) {
        for (const w of writes.kube) {
          if (w.op !== 'updateStatus' || w.object.kind !== 'OperatorGroup') continue;
          await mirroredTargets(work.cluster, w.object as OperatorGroupObject);
        }
      }
      for (let i = 0; i < writes.requeue.length; i += options.fanoutBatch) {
        await Promise.all(
          writes.requeue
            .slice(i, i + options.fanoutBatch)
            .map((key) => backbone.js.publish(workSubject(rbacFunctionName, work.cluster, key))),
        );
      }
    },
  };
}

/** The rbac function module. */
export const createFunction: CreateFunction = (context) => {
  const definition = rbacFunction(context.backbone, context.clients, context.registry);
  return Promise.resolve({
    definitions: [definition],
    close: () => Promise.resolve(definition.close()),
  });
};
