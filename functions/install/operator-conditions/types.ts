// The operator-conditions room's contract: OperatorConditions as its decisions read them, and
// what one controller pass reads.
import type { Condition, OperatorCondition } from '../../../shared/api/index.js';
import type { KubeObject } from '../../../shared/kube/client.js';
import type { Served } from '../../../shared/kube/served.js';

/** The OperatorCondition version olmq writes (upstream's storage version). */
export const operatorConditionApiVersion = 'operators.coreos.com/v2';
/** The environment variable naming an operator's OperatorCondition. */
export const operatorConditionEnvVar = 'OPERATOR_CONDITION_NAME';
/** The condition type OLM reads. */
export const upgradeableCondition = 'Upgradeable';

/** A metav1.Condition, as OperatorConditions carry them. */
export type ConditionEntry = Condition;

/** An OperatorCondition (v2) as read from the API. */
export type ServedOperatorCondition = Served<OperatorCondition>;

/** What one OperatorCondition pass reads: the condition of one name, and what hangs off it. */
export interface OperatorConditionSnapshot {
  namespace: string;
  name: string;
  now: Date;
  condition?: ServedOperatorCondition;
  role?: KubeObject;
  roleBinding?: KubeObject;
  /** The deployments the condition lists that exist. */
  deployments: KubeObject[];
}
