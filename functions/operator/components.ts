// The Operator object (upstream's OperatorReconciler), decided for one name: its status lists
// every component (objects labelled `operators.coreos.com/<name>`) with the component's status
// conditions; a missing Operator is created while any component exists (so deleting an
// Operator whose components remain brings it back), and one whose components are gone stays,
// with no refs, until someone deletes it.
import type { Operator, OperatorStatus, RichReference } from '../../shared/api/index.js';
import type { KubeObject } from '../../shared/kube/client.js';
import type { Write } from '../../shared/kube/executor.js';
import { canonicalJson } from '../../shared/kube/json.js';
import { componentLabelKey } from '../../shared/api/component-labels.js';

/** What one Operator's reconcile reads. */
export interface OperatorSnapshot {
  name: string;
  /** The Operator, fresh from the API; undefined when absent. */
  operator: Operator | undefined;
  /** Every object labelled as one of its components. */
  components: readonly KubeObject[];
}

/**
 * What the decision writes: the Operator's status, or its creation and then the status to
 * write on the object the create answered with (a create cannot set a status).
 */
export interface OperatorDecision {
  writes: Write[];
  statusOfCreated?: OperatorStatus;
}

const conditionFields = [
  'type',
  'status',
  'reason',
  'message',
  'lastUpdateTime',
  'lastTransitionTime',
] as const;

type Condition = NonNullable<RichReference['conditions']>[number];

function pick(source: Record<string, unknown>): Condition | undefined {
  const out: Record<string, string> = {};
  for (const f of conditionFields) {
    const v = source[f];
    if (typeof v === 'string' && v !== '') out[f] = v;
  }
  if (out['type'] === undefined) return undefined;
  out['status'] ??= '';
  return out as unknown as Condition;
}

/**
 * A component's conditions: a CSV's phase as one True condition (with its reason, message and
 * times), any other kind's `status.conditions`.
 */
export function componentConditions(object: KubeObject): Condition[] | undefined {
  const status = object['status'] as Record<string, unknown> | undefined;
  if (status === undefined) return undefined;
  if (object.kind === 'ClusterServiceVersion') {
    const c = pick({ ...status, type: status['phase'], status: 'True' });
    return c === undefined ? undefined : [c];
  }
  const list = status['conditions'];
  if (!Array.isArray(list)) return undefined;
  return list.flatMap((c) => {
    const p = pick(c as Record<string, unknown>);
    return p === undefined ? [] : [p];
  });
}

/** A component as the Operator's status lists it. */
export function componentRef(object: KubeObject): RichReference {
  const ref: RichReference = { apiVersion: object.apiVersion, kind: object.kind };
  if (object.metadata.name !== undefined) ref.name = object.metadata.name;
  if (object.metadata.namespace !== undefined && object.metadata.namespace !== '')
    ref.namespace = object.metadata.namespace;
  const conditions = componentConditions(object);
  if (conditions !== undefined && conditions.length > 0) ref.conditions = conditions;
  return ref;
}

// Upstream's order: kind, apiVersion, namespace, name.
const order = (a: RichReference, b: RichReference): number =>
  cmp(a.kind, b.kind) ||
  cmp(a.apiVersion, b.apiVersion) ||
  cmp(a.namespace, b.namespace) ||
  cmp(a.name, b.name);
const cmp = (a: string | undefined, b: string | undefined): number =>
  (a ?? '') < (b ?? '') ? -1 : (a ?? '') > (b ?? '') ? 1 : 0;

/** The status of the Operator `name` with these components. */
export function operatorStatus(name: string, components: readonly KubeObject[]): OperatorStatus {
  const refs = components.map(componentRef).sort(order);
  return {
    components: {
      labelSelector: { matchExpressions: [{ key: componentLabelKey(name), operator: 'Exists' }] },
      ...(refs.length === 0 ? {} : { refs }),
    },
  };
}

/** Creates the Operator while it has components, and keeps its status current. */
export function decideOperator(s: OperatorSnapshot): OperatorDecision {
  const status = operatorStatus(s.name, s.components);
  if (s.operator === undefined) {
    if (s.components.length === 0) return { writes: [] };
    const operator: KubeObject = {
      apiVersion: 'operators.coreos.com/v1',
      kind: 'Operator',
      metadata: { name: s.name },
      spec: {},
    };
    return { writes: [{ op: 'create', object: operator }], statusOfCreated: status };
  }
  if (canonicalJson(s.operator.status ?? {}) === canonicalJson(status)) return { writes: [] };
  const object = { ...s.operator, apiVersion: 'operators.coreos.com/v1', kind: 'Operator', status };
  return { writes: [{ op: 'updateStatus', object: object as KubeObject }] };
}
