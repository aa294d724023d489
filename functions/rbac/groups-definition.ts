// rbac-groups: every OperatorGroup of one namespace (groups.ts decides). Writes the groups'
// status, their member CSVs' annotations and aggregated ClusterRoles; hands on the namespaces
// whose labels disagree with the targets, the CSVs whose provided-API gate may now decide
// differently, and the sweep of a vanished group's labels.
//
// Why no reconcile here waits for the mirror to show its own status write, yet no namespace
// decides on a group's stale targets:
// - A decision that changes a group's targets writes the status and decides nothing else on
//   them. The write comes back through the mirror as a change of the group, which the
//   OperatorGroup trigger turns into an rbac-groups item for its namespace.
// - That reconcile (or any later one) finds the mirrored targets equal to the ones it computes,
//   and only then compares them with the namespaces carrying the group's uid label, read from
//   the mirror's view of Namespaces (caught up with the mirror as it is then). Every namespace
//   that disagrees is handed on; its reconcile reads the groups through the mirror view, which
//   first catches up with the mirror as it is then, so it sees at least the targets this
//   decision saw (never older).
// - A label written that the view does not show yet (by a namespace reconcile still deciding on
//   older targets) comes back as a change of the Namespace, whose reconcile then reads the
//   current targets. So does a namespace's label that makes a group's selector match it (or
//   stop matching): its reconcile hands the group on, whose next reconcile's view shows it.
// So whichever comes last, the group's new targets or a namespace's labels, a reconcile that
// reads both afterwards follows it: removed targets included, which a trigger mapping the new
// status alone could not name.
import { OlmLabel } from '../../shared/api/codes.js';
import type { KubeClient, KubeObject } from '../../shared/kube/client.js';
import {
  OwnershipConflictError,
  StaleDecisionError,
  type Write,
} from '../../shared/kube/executor.js';
import {
  labelSelectorFromObject,
  matchesLabelSelector,
  parseLabelSelector,
  type LabelSelector,
} from '../../shared/kube/selectors.js';
import { OwnWrites } from '../../shared/kube/own-writes.js';
import { kubeTime } from '../../shared/kube/time.js';
import {
  aggregateClusterRoleName,
  isCopy,
  operatorGroupNamespaceLabel,
  roleSuffixes,
  surfaceTargets,
  targetSelectionOf,
  type RoleObject,
} from '../../shared/operator-group/index.js';
import type { FunctionDefinition, WorkContext, WorkItem } from '../../shared/runtime/types.js';
import type { FieldKey } from '../../shared/runtime/work-keys.js';
import { decideGroups, type GroupInputs, type GroupsSnapshot } from './groups.js';
import { applyWrites, csvsIn, listApi, mirrored, rbacApi } from './io.js';
import { csvKey, groupsKey, namespaceKey, sweepKey } from './keys.js';
import type { OperatorGroupObject, RbacContext } from './types.js';

type Key = FieldKey<'namespace'>;

// What one group's sync reads: the namespaces its selector matches and the namespaces carrying
// its label (the mirror's Namespaces, see above), and its service account from the API (the
// watcher mirrors only the ones olmq made).
async function inputsOf(
  client: KubeClient,
  namespaces: readonly KubeObject[],
  group: OperatorGroupObject,
): Promise<GroupInputs> {
  let selection;
  try {
    selection = targetSelectionOf(group);
  } catch {
    selection = undefined; // decideGroups reports it
  }
  const namesWhere = (selector: LabelSelector): string[] =>
    namespaces
      .filter((n) => matchesLabelSelector(selector, n.metadata.labels))
      .map((n) => n.metadata.name ?? '')
      .sort();
  const saName = group.spec?.serviceAccountName ?? '';
  const uid = group.metadata.uid ?? '';
  const namespace = group.metadata.namespace ?? '';
  return {
    matched:
      selection?.type === 'selector' ? namesWhere(labelSelectorFromObject(selection.selector)) : [],
    serviceAccount:
      saName === ''
        ? undefined
        : await client.get({ apiVersion: 'v1', kind: 'ServiceAccount', namespace, name: saName }),
    labelled: uid === '' ? [] : namesWhere(parseLabelSelector(operatorGroupNamespaceLabel(uid))),
  };
}

/** The current groups' aggregated ClusterRoles, by name, as the mirror has them. */
async function mirroredRolesOf(
  context: RbacContext,
  where: { cluster: string; namespace: string },
  groups: readonly OperatorGroupObject[],
): Promise<Map<string, RoleObject>> {
  const { cluster, namespace } = where;
  const names = groups.flatMap((group) =>
    roleSuffixes.map((suffix) => aggregateClusterRoleName(namespace, group.metadata.name, suffix)),
  );
  const roles = new Map<string, RoleObject>();
  await Promise.all(
    names.map(async (name) => {
      const role = await mirrored<RoleObject>(context, cluster, 'ClusterRole', '', name);
      if (role !== undefined) roles.set(name, role);
    }),
  );
  return roles;
}

/** The ClusterRoles labelled the namespace's groups' own, those of groups gone included. */
const listedRolesOf = (client: KubeClient, namespace: string): Promise<RoleObject[]> =>
  listApi<RoleObject>(
    client,
    rbacApi,
    'ClusterRole',
    undefined,
    `${OlmLabel.OwnerKind}=OperatorGroup,${OlmLabel.OwnerNamespace}=${namespace}`,
  );

const ownedBy =
  (namespace: string) =>
  (r: RoleObject): boolean =>
    r.metadata.labels?.[OlmLabel.OwnerKind] === 'OperatorGroup' &&
    r.metadata.labels[OlmLabel.OwnerNamespace] === namespace;

const isRoleWrite = (w: Write): boolean =>
  ('object' in w ? w.object.kind : w.ref.kind) === 'ClusterRole';

/** The rbac-groups definition. */
export function groupsDefinition(
  context: RbacContext,
): FunctionDefinition<Key, GroupsSnapshot, Write[]> {
  // Per namespace, its groups' names when this process last found none of its roles orphaned
  // (a LIST of the API): while they are the same, no group's roles can be orphaned, and a
  // decision that creates or deletes no role stands on the mirror's roles. One that does is
  // decided again on the API's.
  const listedWith = new Map<string, string>();
  // Namespaces whose decision met a newer group than it saw (a 409) read their groups from the
  // API next, so deciding again does not meet the same mirror (one that lags, or stands still
  // while the watcher waits out an API brownout).
  const ledger = new OwnWrites();
  const load = async (work: WorkContext<Key>): Promise<GroupsSnapshot> => {
    const { cluster, client } = work;
    const { namespace } = work.key;
    const scope = `${cluster}/${namespace}`;
    const [mirroredGroups, csvs, namespaces, fresh] = await Promise.all([
      context.groups.list(cluster),
      csvsIn(context, cluster, namespace),
      context.namespaces.list(cluster, ''),
      ledger.distrusts(cluster, namespace)
        ? listApi<OperatorGroupObject>(
            client,
            'operators.coreos.com/v1',
            'OperatorGroup',
            namespace,
          )
        : undefined,
    ]);
    if (fresh !== undefined) ledger.readFromApi(cluster, namespace);
    const allGroups =
      fresh === undefined
        ? mirroredGroups
        : [...mirroredGroups.filter((g) => g.metadata.namespace !== namespace), ...fresh];
    const groups = allGroups.filter((g) => g.metadata.namespace === namespace);
    const groupNames = groups
      .map((g) => g.metadata.name)
      .sort()
      .join(',');
    const inputs = new Map<string, GroupInputs>();
    for (const group of groups)
      inputs.set(group.metadata.name, await inputsOf(client, namespaces, group));
    // Providers in the namespaces of groups intersecting these (their conflicts may change).
    const intersecting = new Set<string>();
    for (const group of groups) {
      const surface = surfaceTargets(group);
      for (const other of allGroups) {
        if (other.metadata.namespace !== namespace && surface.intersects(surfaceTargets(other)))
          intersecting.add(other.metadata.namespace ?? '');
      }
    }
    const intersectingCsvs = (
      await Promise.all([...intersecting].map((ns) => csvsIn(context, cluster, ns)))
    )
      .flat()
      .filter((c) => !isCopy(c));
    const snapshotWith = (roles: {
      roles: Map<string, RoleObject>;
      owned: RoleObject[];
    }): GroupsSnapshot => ({
      namespace,
      groups,
      inputs,
      allGroups,
      csvs,
      intersectingCsvs,
      aggregateRoles: roles.roles,
      ownedAggregateRoles: roles.owned.filter(
        (r) => r.metadata.name?.startsWith('olm.og.') === true,
      ),
      now: kubeTime(work.now()),
    });
    // The groups' roles by name, from the mirror.
    const byName = await mirroredRolesOf(context, { cluster, namespace }, groups);
    if (listedWith.get(scope) === groupNames) {
      const owned = [...byName.values()].filter(ownedBy(namespace));
      const onMirror = snapshotWith({ roles: byName, owned });
      // Role patches are conditional on the version decided on: the mirror's roles do.
      if (!decideGroups(onMirror).writes.some((w) => isRoleWrite(w) && w.op !== 'patch'))
        return onMirror;
    }
    // The API's roles labelled ours stand for every such role (fresh, and those of groups
    // gone, to delete). Of the others, only those the mirror shows are read from the API; one it
    // does not show yet makes its create meet it, and decide again.
    const owned = await listedRolesOf(client, namespace);
    const roles = new Map(owned.map((r) => [r.metadata.name ?? '', r] as const));
    await Promise.all(
      [...byName.keys()]
        .filter((name) => !roles.has(name))
        .map(async (name) => {
          const role = await client.get<RoleObject>({
            apiVersion: rbacApi,
            kind: 'ClusterRole',
            name,
          });
          if (role !== undefined) roles.set(name, role);
        }),
    );
    const onApi = snapshotWith({ roles, owned });
    if (!decideGroups(onApi).writes.some((w) => w.op === 'delete' && isRoleWrite(w)))
      listedWith.set(scope, groupNames);
    else listedWith.delete(scope);
    return onApi;
  };

  return {
    key: groupsKey,
    triggers: [
      // Every change of a group, its own status writes included (see above).
      { kind: 'OperatorGroup', workKeys: (c) => [groupsKey.of({ namespace: c.ref.namespace })] },
      {
        kind: 'ClusterRole',
        workKeys: (c) => {
          const role = c.object as RoleObject | undefined;
          // An aggregated role changes whenever the aggregation controller refills its rules,
          // which are not ours: at each install of an API, for every group aggregating it.
          if (role?.aggregationRule !== undefined) return [];
          const labels = role?.metadata.labels;
          return labels?.[OlmLabel.OwnerKind] === 'OperatorGroup'
            ? [groupsKey.of({ namespace: labels[OlmLabel.OwnerNamespace] ?? '' })]
            : [];
        },
      },
    ],
    load,
    decide(snapshot) {
      const d = decideGroups(snapshot);
      const enqueue: WorkItem[] = [
        ...[...new Set(d.namespaces)].map((namespace) => namespaceKey.of({ namespace })),
        ...d.csvs.map((c) => ({ ...csvKey.of(c), basis: c.basis })),
        ...(d.sweepNamespaceLabels ? [sweepKey.of({})] : []),
      ];
      return {
        writes: d.writes,
        enqueue,
        ...(d.requeueAfterMs === undefined ? {} : { requeueAfterMs: d.requeueAfterMs }),
      };
    },
    async apply(writes, work) {
      try {
        await ledger.recording({ cluster: work.cluster, namespace: work.key.namespace }, [], () =>
          applyWrites(context, writes, work),
        );
      } catch (error) {
        // A role of a group's name, not labelled ours, that the mirror did not show yet: decide
        // again on it (it is adopted), rather than give up on the group.
        if (error instanceof OwnershipConflictError && error.ref.kind === 'ClusterRole')
          throw new StaleDecisionError(error.message, { cause: error });
        throw error;
      }
    },
  };
}
