// What the rbac function's definitions share: the OperatorGroup as read and written here, and
// the context every definition is built with (function.ts builds it once).
import type { Counter } from 'prom-client';
import type { MirrorSource } from '../../shared/bus/mirror-read.js';
import type { LazyMirrorView } from '../../shared/bus/mirror-view.js';
import type { KubeObject } from '../../shared/kube/client.js';
import type { OperatorGroupLike } from '../../shared/operator-group/index.js';

/** Field manager of the rbac function's writes. */
export const fieldManager = 'olmq-rbac';

/** An OperatorGroup as the rbac function reads and writes it. */
export interface OperatorGroupObject extends KubeObject, OperatorGroupLike {
  metadata: KubeObject['metadata'] & OperatorGroupLike['metadata'];
  status?: {
    namespaces?: string[];
    lastUpdated?: string;
    serviceAccountRef?: Record<string, unknown>;
    conditions?: GroupCondition[];
  };
}

/** A metav1.Condition of an OperatorGroup. */
export interface GroupCondition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime: string;
}

/** What every rbac definition is built with. */
export interface RbacContext {
  /** The object mirror, which loads read unless they must see the API. */
  mirror: MirrorSource;
  /** Every OperatorGroup of each cluster, live: most loads read them all (intersections). */
  groups: LazyMirrorView<OperatorGroupObject>;
  /** Every Namespace of each cluster, live: the groups' targets and labels are matched on them. */
  namespaces: LazyMirrorView<KubeObject>;
  /** `olmq_rbac_writes_total`: writes by object kind and operation. */
  written: Counter<'cluster' | 'kind' | 'op'>;
}
