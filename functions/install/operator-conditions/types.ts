// The operator-conditions room's contract: OperatorConditions as its decisions read them, and
// what one controller pass reads.
import type { KubeObject } from '../../../shared/kube/client.js';

/** The OperatorCondition version olmq writes (upstream's storage version). */
export const operatorConditionApiVersion = 'operators.coreos.com/v2';
/** The environment variable naming an operator's OperatorCondition. */
export const operatorConditionEnvVar = 'OPERATOR_CONDITION_NAME';
/** The condition type OLM reads. */
export const upgradeableCondition = 'Upgradeable';

/** A metav1.Condition as OperatorConditions carry them. */
export interface ConditionEntry {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

/** An OperatorCondition as the decisions read it. */
export interface OperatorConditionObject extends KubeObject {
  spec?: {
    serviceAccounts?: string[];
    deployments?: string[];
    overrides?: ConditionEntry[];
    conditions?: ConditionEntry[];
  };
  status?: { conditions?: ConditionEntry[] };
}

/** What one OperatorCondition pass reads: the condition of one name, and what hangs off it. */
export interface OperatorConditionSnapshot {
  namespace: string;
  name: string;
  now: Date;
  condition?: OperatorConditionObject;
  role?: KubeObject;
  roleBinding?: KubeObject;
  /** The deployments the condition lists that exist. */
  deployments: KubeObject[];
}
