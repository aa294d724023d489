// rbac-tenants: an operator's Roles or RoleBindings changed; its tenant RBAC in every namespace
// it targets may be out of line. Writes nothing: hands each such namespace on as an
// rbac-namespace item. Hosts the function's Role and RoleBinding triggers.
import { OlmAnnotation, OlmLabel } from '../../shared/api/codes.js';
import type { KubeObject } from '../../shared/kube/client.js';
import { isGlobal, NamespaceSet, type CsvObject } from '../../shared/operator-group/index.js';
import type { FunctionDefinition, Trigger } from '../../shared/runtime/types.js';
import type { NamespacedName } from '../../shared/runtime/work-keys.js';
import { mirrored } from './io.js';
import { csvKey, namespaceKey, tenantsKey } from './keys.js';
import type { RbacContext } from './types.js';

/** The namespaces an operator's tenant RBAC lives in (not its own). */
export interface TenantsSnapshot {
  namespaces: readonly string[];
}

// A Role or RoleBinding of an operator's CSV concerns the CSV when one of its namespace's groups
// targets all namespaces (rbac-csv lifts its Roles to ClusterRoles), and its tenants when one
// targets other namespaces (rbac-tenants); an operator of its own namespace alone needs neither.
// A group gaining targets later annotates its CSVs (and copies them), which wakes both anew.
// A deleted one may have been tenant RBAC of a copy in its namespace.
const rbacTrigger = (context: RbacContext, kind: 'Role' | 'RoleBinding'): Trigger => ({
  kind,
  workKeys: async (c) => {
    // A deletion shows no labels: it may have been tenant RBAC of a copy here (taken by the
    // garbage collector when the copy was replaced, say), which the namespace makes again.
    if (c.object === undefined) return [namespaceKey.of({ namespace: c.ref.namespace })];
    const labels = (c.object as KubeObject).metadata.labels;
    if (
      labels?.[OlmLabel.OwnerKind] !== 'ClusterServiceVersion' ||
      labels[OlmLabel.CopiedFrom] !== undefined
    )
      return [];
    const owner = {
      namespace: labels[OlmLabel.OwnerNamespace] ?? '',
      name: labels[OlmLabel.Owner] ?? '',
    };
    const targets = (await context.groups.list(c.ref.cluster, owner.namespace)).map(
      (g) => g.status?.namespaces,
    );
    const lifted = targets.some(isGlobal);
    const tenants = targets.some((t) => t?.some((ns) => ns !== '' && ns !== owner.namespace));
    return [...(lifted ? [csvKey.of(owner)] : []), ...(tenants ? [tenantsKey.of(owner)] : [])];
  },
});

/** The rbac-tenants definition. */
export function tenantsDefinition(
  context: RbacContext,
): FunctionDefinition<NamespacedName, TenantsSnapshot, readonly never[]> {
  return {
    key: tenantsKey,
    triggers: [rbacTrigger(context, 'Role'), rbacTrigger(context, 'RoleBinding')],
    async load(work) {
      const { namespace, name } = work.key;
      const csv = await mirrored<CsvObject>(
        context,
        work.cluster,
        'ClusterServiceVersion',
        namespace,
        name,
      );
      const targets = NamespaceSet.fromAnnotation(
        csv?.metadata.annotations?.[OlmAnnotation.TargetNamespaces] ?? '',
      );
      if (csv === undefined || targets.isAll) return { namespaces: [] };
      return { namespaces: targets.toArray().filter((ns) => ns !== namespace && ns !== '') };
    },
    decide: (s) => ({
      writes: [],
      enqueue: s.namespaces.map((namespace) => namespaceKey.of({ namespace })),
    }),
    apply: () => Promise.resolve(),
  };
}
