// rbac-namespace: one namespace (namespace.ts decides): the olm.operatorgroup.uid labels of the
// groups targeting it and the tenant RBAC of the operators copied into it; hands on the
// selector groups whose view of it is out of date. Groups, copies and Role changes all land
// here.
import { OlmLabel } from '../../shared/api/codes.js';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import type { Write } from '../../shared/kube/executor.js';
import {
  NamespaceSet,
  isGlobal,
  ownerSelector,
  type BindingObject,
  type CsvObject,
  type RoleObject,
} from '../../shared/operator-group/index.js';
import type { FunctionDefinition, WorkContext } from '../../shared/runtime/types.js';
import type { FieldKey } from '../../shared/runtime/work-keys.js';
import { groupOfCsv } from './csv.js';
import { applyWrites, csvsIn, listApi, mirrored, onlyGlobal, rbacApi } from './io.js';
import { groupsKey, namespaceKey } from './keys.js';
import { decideNamespace, type NamespaceSnapshot, type TenantSource } from './namespace.js';
import type { OperatorGroupObject, RbacContext } from './types.js';

type Key = FieldKey<'namespace'>;

// The RBAC a copy's tenant Roles are made from (its parent's) and the ones it has.
async function tenantRbac(
  client: KubeClient,
  copy: CsvObject,
  parent: CsvObject,
  namespace: string,
): Promise<TenantSource> {
  const from = parent.metadata.namespace ?? '';
  const parentSelector = ownerSelector(
    { name: parent.metadata.name ?? '', namespace: from },
    'ClusterServiceVersion',
  );
  const copySelector = ownerSelector(
    { name: copy.metadata.name ?? '', namespace },
    'ClusterServiceVersion',
  );
  const [roles, bindings, existingRoles, existingBindings] = await Promise.all([
    listApi<RoleObject>(client, rbacApi, 'Role', from, parentSelector),
    listApi<BindingObject>(client, rbacApi, 'RoleBinding', from, parentSelector),
    listApi<RoleObject>(client, rbacApi, 'Role', namespace, copySelector),
    listApi<BindingObject>(client, rbacApi, 'RoleBinding', namespace, copySelector),
  ]);
  return { copy, parent, roles, bindings, existingRoles, existingBindings };
}

/** The rbac-namespace definition. */
export function namespaceDefinition(
  context: RbacContext,
): FunctionDefinition<Key, NamespaceSnapshot, Write[]> {
  // The copy's parent, when its group is a Single/MultiNamespace one targeting `namespace`.
  const tenantParent = async (
    cluster: string,
    copy: CsvObject,
    namespace: string,
    allGroups: readonly OperatorGroupObject[],
  ): Promise<CsvObject | undefined> => {
    const from = copy.metadata.labels?.[OlmLabel.CopiedFrom];
    if (from === undefined) return undefined;
    const fromGroups = allGroups.filter((g) => g.metadata.namespace === from);
    // Copies of a global group's operators get no tenant RBAC: skip reading their parents.
    if (onlyGlobal(fromGroups)) return undefined;
    const name = copy.metadata.name ?? '';
    const parent = await mirrored<CsvObject>(context, cluster, 'ClusterServiceVersion', from, name);
    if (parent === undefined) return undefined;
    const group = groupOfCsv(parent, fromGroups);
    if (group === undefined || isGlobal(group.status?.namespaces)) return undefined;
    return new NamespaceSet(group.status?.namespaces ?? []).contains(namespace)
      ? parent
      : undefined;
  };

  const load = async (work: WorkContext<Key>): Promise<NamespaceSnapshot> => {
    const { cluster } = work;
    const name = work.key.namespace;
    const [namespace, allGroups, present] = await Promise.all([
      mirrored<KubeObject>(context, cluster, 'Namespace', '', name),
      context.groups.list(cluster),
      csvsIn(context, cluster, name),
    ]);
    const tenants: TenantSource[] = [];
    if (namespace !== undefined) {
      for (const copy of present) {
        const parent = await tenantParent(cluster, copy, name, allGroups);
        if (parent !== undefined) tenants.push(await tenantRbac(work.client, copy, parent, name));
      }
    }
    return { name, namespace, allGroups, tenants };
  };

  return {
    key: namespaceKey,
    triggers: [
      { kind: 'Namespace', workKeys: (c) => [namespaceKey.of({ namespace: c.ref.name })] },
    ],
    load,
    decide(snapshot) {
      const d = decideNamespace(snapshot);
      return {
        writes: d.writes,
        enqueue: [...new Set(d.groupNamespaces)].map((namespace) => groupsKey.of({ namespace })),
      };
    },
    apply: (writes, work) => applyWrites(context, writes, work),
  };
}
