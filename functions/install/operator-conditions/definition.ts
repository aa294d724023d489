// The OperatorCondition controller of the install function (upstream's operator-condition
// controller; the generator runs in the CSV namespace pass): one work item per OperatorCondition.
// load reads the condition, its Role and RoleBinding and the deployments it lists from the
// watcher's mirror (the condition from the API when the mirror lacks it: not yet mirrored; the
// others from the API while the mirror does not show this replica's own writes of them);
// decide is decide.ts; apply writes in order, updates rebased on the API object (../mirrored.ts)
// so that nothing the watcher trims is wiped. Its clients and clock are chosen here.
import { getMirrored, type MirrorSource } from '../../../shared/bus/mirror-read.js';
import type { KubeObject, ObjectRef } from '../../../shared/kube/client.js';
import { executeWrites, type Write } from '../../../shared/kube/executor.js';
import { OwnWrites } from '../../../shared/kube/own-writes.js';
import { unlessOwnWrite } from '../../../shared/runtime/own-write-triggers.js';
import type {
  FunctionDefinition,
  ObjectChange,
  Trigger,
  WorkContext,
} from '../../../shared/runtime/types.js';
import type { NamespacedName } from '../../../shared/runtime/work-keys.js';
import { operatorConditionKey } from '../keys.js';
import { namespaced } from '../triggers.js';
import { installFieldManager } from '../kube-writes.js';
import { mirroredOrApi } from '../../../shared/kube/mirrored-or-api.js';
import { rebasedOnApi } from '../mirrored.js';
import { decideOperatorCondition, withConditionEnv } from './decide.js';
import { roleAsWanted } from './rbac.js';
import {
  operatorConditionApiVersion,
  type ServedOperatorCondition,
  type OperatorConditionSnapshot,
} from './types.js';

const objectOf = (change: ObjectChange): KubeObject | undefined =>
  (change.object ?? undefined) as KubeObject | undefined;

const conditionItem = (namespace: string, name: string) =>
  operatorConditionKey.of({ namespace, name });

const conditionTrigger: Trigger = {
  kind: 'OperatorCondition',
  workKeys: (c) => (namespaced(c) ? [conditionItem(c.ref.namespace, c.ref.name)] : []),
};

// Roles and RoleBindings an OperatorCondition controls (deleted ones by their own name, which
// is the condition's). A Role as the condition wants it (rules and owner follow from its name)
// needs no pass: that is every Role event OLM's own writes cause.
const byController = (kind: 'Role' | 'RoleBinding'): Trigger => ({
  kind,
  workKeys: (c) => {
    if (!namespaced(c)) return [];
    const object = objectOf(c);
    if (object === undefined) return [conditionItem(c.ref.namespace, c.ref.name)];
    const owner = (object.metadata.ownerReferences ?? []).find(
      (r) => r.controller === true && r.kind === 'OperatorCondition',
    );
    if (owner === undefined) return [];
    if (kind === 'Role' && owner.name === c.ref.name && roleAsWanted(object)) return [];
    return [conditionItem(c.ref.namespace, owner.name)];
  },
});

// A CSV's deployment that lost OPERATOR_CONDITION_NAME (OLM writes it; only an edit removes it).
const deploymentTrigger: Trigger = {
  kind: 'Deployment',
  workKeys: (c) => {
    const object = objectOf(c);
    if (!namespaced(c) || object === undefined) return [];
    const owner = (object.metadata.ownerReferences ?? []).find(
      (r) => r.kind === 'ClusterServiceVersion',
    );
    if (owner === undefined || withConditionEnv(object, owner.name) === undefined) return [];
    return [conditionItem(c.ref.namespace, owner.name)];
  },
};

type ConditionWork = WorkContext<NamespacedName>;

/** The kinds a condition controls besides itself, which its load reads from the mirror. */
const controlledKinds = ['Role', 'RoleBinding', 'Deployment'] as const;

const present = <T>(objects: readonly (T | undefined)[]): T[] =>
  objects.filter((o): o is T => o !== undefined);

/** The OperatorCondition definition; each reconcile uses the host's client and clock. */
export function operatorConditionFunction(options: {
  mirror: MirrorSource;
}): FunctionDefinition<NamespacedName, OperatorConditionSnapshot, Write[]> {
  // What this replica wrote of the objects conditions control. An object the mirror lacks is
  // absent (a create that meets it anyway is harmless: ours, or refused) unless this replica
  // wrote it and the mirror does not show that yet: only then are they read from the API, so a
  // condition's first passes cost no reads of objects that do not exist yet.
  const ownWrites = new OwnWrites();
  return {
    key: operatorConditionKey,
    // The echo of this replica's own write of a Role or RoleBinding wakes nothing: the pass that
    // wrote it made every write its snapshot allowed, and conditionally.
    triggers: [
      conditionTrigger,
      unlessOwnWrite(byController('Role'), ownWrites),
      unlessOwnWrite(byController('RoleBinding'), ownWrites),
      deploymentTrigger,
    ],
    async load(work: ConditionWork): Promise<OperatorConditionSnapshot> {
      const { namespace, name } = work.key;
      const { cluster, client } = work;
      const rbac = 'rbac.authorization.k8s.io/v1';
      const condition = await mirroredOrApi<ServedOperatorCondition>(
        options.mirror,
        client,
        cluster,
        { apiVersion: operatorConditionApiVersion, kind: 'OperatorCondition', namespace, name },
      );
      const refs: (ObjectRef & { name: string })[] = [
        { apiVersion: rbac, kind: 'Role', namespace, name },
        { apiVersion: rbac, kind: 'RoleBinding', namespace, name },
        ...(condition?.spec?.deployments ?? []).map((d) => ({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          namespace,
          name: d,
        })),
      ];
      let [role, roleBinding, ...deployments] = await Promise.all(
        refs.map((ref) =>
          getMirrored<KubeObject>(options.mirror, {
            cluster,
            kind: ref.kind,
            namespace,
            name: ref.name,
          }),
        ),
      );
      const mirrored = {
        Role: present([role]),
        RoleBinding: present([roleBinding]),
        Deployment: present(deployments),
      };
      if (!ownWrites.shownIn(cluster, namespace, mirrored)) {
        [role, roleBinding, ...deployments] = await Promise.all(refs.map((ref) => client.get(ref)));
        ownWrites.readFromApi(cluster, namespace);
      }
      return {
        namespace,
        name,
        now: work.now(),
        ...(condition === undefined ? {} : { condition }),
        ...(role === undefined ? {} : { role }),
        ...(roleBinding === undefined ? {} : { roleBinding }),
        deployments: present(deployments),
      };
    },
    decide: (snapshot) => ({ writes: decideOperatorCondition(snapshot) }),
    apply: (writes: Write[], work: ConditionWork) =>
      ownWrites.recording(
        { cluster: work.cluster, namespace: work.key.namespace },
        controlledKinds,
        async (observe) => {
          for (const write of writes)
            await executeWrites(
              work.client,
              [await rebasedOnApi(work.client, write)],
              installFieldManager,
              observe,
            );
        },
      ),
  };
}
