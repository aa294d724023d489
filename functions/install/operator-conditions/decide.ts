// The OperatorCondition controller's decision (upstream's operator-condition controller): the
// condition's Role and RoleBinding (rbac.ts), OPERATOR_CONDITION_NAME in the listed deployments
// the CSV owns, and spec.conditions mirrored into status (status.ts). Pure.
import type { KubeObject } from '../../../shared/kube/client.js';
import type { Write } from '../../../shared/kube/executor.js';
import { roleBindingWrites, roleWrites } from './rbac.js';
import { mirroredStatus } from './status.js';
import { operatorConditionEnvVar, type OperatorConditionSnapshot } from './types.js';

interface ContainerLike {
  env?: { name: string; value?: string }[];
  [key: string]: unknown;
}

/** The containers of a Deployment with OPERATOR_CONDITION_NAME=`name`, or undefined when all have it. */
export function withConditionEnv(deployment: KubeObject, name: string): KubeObject | undefined {
  const spec = (deployment['spec'] ?? {}) as {
    template?: { spec?: { containers?: ContainerLike[] } };
  };
  const containers = spec.template?.spec?.containers ?? [];
  let changed = false;
  const next = containers.map((c) => {
    const env = c.env ?? [];
    const i = env.findIndex((e) => e.name === operatorConditionEnvVar);
    if (i >= 0 && env[i]?.value === name) return c;
    changed = true;
    const entry = { name: operatorConditionEnvVar, value: name };
    return { ...c, env: i >= 0 ? env.map((e, j) => (j === i ? entry : e)) : [...env, entry] };
  });
  if (!changed) return undefined;
  return {
    ...deployment,
    spec: {
      ...spec,
      template: { ...spec.template, spec: { ...spec.template?.spec, containers: next } },
    },
  };
}

/** Pure: the writes that bring one OperatorCondition's Role, RoleBinding, deployments and status up to date. */
export function decideOperatorCondition(s: OperatorConditionSnapshot): Write[] {
  const condition = s.condition;
  if (condition === undefined || condition.metadata.deletionTimestamp !== undefined) return [];
  const writes: Write[] = [
    ...roleWrites(condition, s.role),
    ...roleBindingWrites(condition, s.roleBinding),
  ];
  const listed = new Set(condition.spec?.deployments ?? []);
  for (const d of s.deployments) {
    if (!listed.has(d.metadata.name ?? '')) continue;
    // Only deployments of the CSV this condition belongs to (upstream checks the owner's name).
    const owner = (d.metadata.ownerReferences ?? []).find(
      (r) => r.kind === 'ClusterServiceVersion',
    );
    if (owner?.name !== s.name) continue;
    const updated = withConditionEnv(d, s.name);
    if (updated !== undefined) writes.push({ op: 'update', object: updated });
  }
  const status = mirroredStatus(condition, s.now);
  if (status !== undefined) writes.push({ op: 'updateStatus', object: { ...condition, status } });
  return writes;
}
