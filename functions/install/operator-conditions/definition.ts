// The OperatorCondition controller of the install function (upstream's operator-condition
// controller; the generator runs in the CSV namespace pass): one work item per OperatorCondition.
// load reads the condition, its Role and RoleBinding and the deployments it lists from the
// watcher's mirror (from the API when the mirror lacks one: not mirrored, or not yet);
// decide is decide.ts; apply writes in order, updates rebased on the API object (../mirrored.ts)
// so that nothing the watcher trims is wiped. Its clients and clock are chosen here.
import type { MirrorSource } from '../../../shared/bus/mirror-read.js';
import type { KubeObject, ObjectRef } from '../../../shared/kube/client.js';
import { executeWrites, type Write } from '../../../shared/kube/executor.js';
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

/** The OperatorCondition definition; each reconcile uses the host's client and clock. */
export function operatorConditionFunction(options: {
  mirror: MirrorSource;
}): FunctionDefinition<NamespacedName, OperatorConditionSnapshot, Write[]> {
  return {
    key: operatorConditionKey,
    triggers: [
      conditionTrigger,
      byController('Role'),
      byController('RoleBinding'),
      deploymentTrigger,
    ],
    async load(work: ConditionWork): Promise<OperatorConditionSnapshot> {
      const { namespace, name } = work.key;
      const read = <T extends KubeObject>(ref: ObjectRef & { name: string }) =>
        mirroredOrApi<T>(options.mirror, work.client, work.cluster, ref);
      const rbac = 'rbac.authorization.k8s.io/v1';
      const [condition, role, roleBinding] = await Promise.all([
        read<ServedOperatorCondition>({
          apiVersion: operatorConditionApiVersion,
          kind: 'OperatorCondition',
          namespace,
          name,
        }),
        read({ apiVersion: rbac, kind: 'Role', namespace, name }),
        read({ apiVersion: rbac, kind: 'RoleBinding', namespace, name }),
      ]);
      const deployments = await Promise.all(
        (condition?.spec?.deployments ?? []).map((d) =>
          read({ apiVersion: 'apps/v1', kind: 'Deployment', namespace, name: d }),
        ),
      );
      return {
        namespace,
        name,
        now: work.now(),
        ...(condition === undefined ? {} : { condition }),
        ...(role === undefined ? {} : { role }),
        ...(roleBinding === undefined ? {} : { roleBinding }),
        deployments: deployments.filter((d): d is KubeObject => d !== undefined),
      };
    },
    decide: (snapshot) => ({ writes: decideOperatorCondition(snapshot) }),
    async apply(writes: Write[], work: ConditionWork): Promise<void> {
      for (const write of writes)
        await executeWrites(
          work.client,
          [await rebasedOnApi(work.client, write)],
          installFieldManager,
        );
    },
  };
}
