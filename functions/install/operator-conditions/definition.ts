// The OperatorCondition controller of the install function (upstream's operator-condition
// controller; the generator runs in the CSV namespace pass): one work item per OperatorCondition.
// load reads the condition, its Role and RoleBinding and the deployments it lists from the API;
// decide is decide.ts; apply writes in order. Its clients and clock are chosen here.
import type { KubeClient, KubeObject } from '../../../shared/kube/client.js';
import { executeWrites, type Write } from '../../../shared/kube/executor.js';
import type {
  FunctionDefinition,
  ObjectChange,
  Trigger,
  WorkContext,
} from '../../../shared/runtime/function-host.js';
import { installFieldManager } from '../kube-writes.js';
import { decideOperatorCondition, withConditionEnv } from './decide.js';
import { roleAsWanted } from './rbac.js';
import {
  operatorConditionApiVersion,
  type ServedOperatorCondition,
  type OperatorConditionSnapshot,
} from './types.js';

const objectOf = (change: ObjectChange): KubeObject | undefined =>
  (change.object ?? undefined) as KubeObject | undefined;

const namespaced = (change: ObjectChange): boolean =>
  change.ref.namespace !== '' && change.ref.namespace !== '-';

const conditionTrigger: Trigger = {
  kind: 'OperatorCondition',
  workKeys: (c) => (namespaced(c) ? [[c.ref.namespace, c.ref.name]] : []),
};

// Roles and RoleBindings an OperatorCondition controls (deleted ones by their own name, which
// is the condition's). A Role as the condition wants it (rules and owner follow from its name)
// needs no pass: that is every Role event OLM's own writes cause.
const byController = (kind: 'Role' | 'RoleBinding'): Trigger => ({
  kind,
  workKeys: (c) => {
    if (!namespaced(c)) return [];
    const object = objectOf(c);
    if (object === undefined) return [[c.ref.namespace, c.ref.name]];
    const owner = (object.metadata.ownerReferences ?? []).find(
      (r) => r.controller === true && r.kind === 'OperatorCondition',
    );
    if (owner === undefined) return [];
    if (kind === 'Role' && owner.name === c.ref.name && roleAsWanted(object)) return [];
    return [[c.ref.namespace, owner.name]];
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
    return [[c.ref.namespace, owner.name]];
  },
};

/** The OperatorCondition function over `clients` (by cluster id). */
export function operatorConditionFunction(options: {
  clients: ReadonlyMap<string, KubeClient>;
  now?: () => Date;
}): FunctionDefinition<OperatorConditionSnapshot, Write[]> {
  const now = options.now ?? (() => new Date());
  const clientOf = (cluster: string): KubeClient => {
    const client = options.clients.get(cluster);
    if (client === undefined) throw new Error(`no client for cluster ${cluster}`);
    return client;
  };
  return {
    name: 'install-operator-condition',
    triggers: [
      conditionTrigger,
      byController('Role'),
      byController('RoleBinding'),
      deploymentTrigger,
    ],
    async load(work: WorkContext): Promise<OperatorConditionSnapshot> {
      const [namespace = '', name = ''] = work.key;
      const client = clientOf(work.cluster);
      const rbac = 'rbac.authorization.k8s.io/v1';
      const [condition, role, roleBinding] = await Promise.all([
        client.get<ServedOperatorCondition>({
          apiVersion: operatorConditionApiVersion,
          kind: 'OperatorCondition',
          namespace,
          name,
        }),
        client.get({ apiVersion: rbac, kind: 'Role', namespace, name }),
        client.get({ apiVersion: rbac, kind: 'RoleBinding', namespace, name }),
      ]);
      const deployments = await Promise.all(
        (condition?.spec?.deployments ?? []).map((d) =>
          client.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace, name: d }),
        ),
      );
      return {
        namespace,
        name,
        now: now(),
        ...(condition === undefined ? {} : { condition }),
        ...(role === undefined ? {} : { role }),
        ...(roleBinding === undefined ? {} : { roleBinding }),
        deployments: deployments.filter((d): d is KubeObject => d !== undefined),
      };
    },
    decide: (snapshot) => ({ writes: decideOperatorCondition(snapshot) }),
    async apply(writes: Write[], work: WorkContext): Promise<void> {
      await executeWrites(clientOf(work.cluster), writes, installFieldManager);
    },
  };
}
