// The install-plan room's contract: what one pass over an InstallPlan reads and what it writes.
import type { InstallPlan, InstallPlanStatus, Step } from '../../../shared/api/installplan.js';
import type { OperatorGroup, Subscription } from '../../../shared/api/index.js';
import type { KubeObject } from '../../../shared/kube/client.js';
import type { Write } from '../../../shared/kube/executor.js';
import type { Served } from '../../../shared/kube/served.js';

/** An InstallPlan as read from the API. */
export type ServedInstallPlan = Served<InstallPlan>;

/** What the plan decision reads. */
export interface PlanSnapshot {
  plan: ServedInstallPlan | undefined;
  now: Date;
  /** The cluster object each step names (by step index); absent entries were not read or do not exist. */
  existing: ReadonlyMap<number, KubeObject>;
  /** The CSVs the plan's steps resolve (by name), as they exist now. */
  csvs: ReadonlyMap<string, KubeObject>;
  /** The namespace's Subscriptions (mirrored): which of the CSVs they name, for their labels. */
  subscriptions: readonly Subscription[];
  /** The namespace's OperatorGroups (mirrored): a CSV is created a member of its only one. */
  operatorGroups: readonly Served<OperatorGroup>[];
  /** For CRD steps updating an existing CRD: its custom resources per version served before and after. */
  customResources?: ReadonlyMap<
    number,
    readonly { version: string; items: readonly KubeObject[] }[]
  >;
  /** Scoped install: the service account steps are written as, or an error finding it. */
  scope?: { serviceAccount: string } | { error: string };
}

/** One step write, the client it goes through, and the step status it leads to. */
export interface StepWrite {
  step: number;
  write: Write;
  /** Written as the OperatorGroup's service account (scoped installs). */
  scoped: boolean;
  status: Step['status'];
  /**
   * The CSV this pass creates that the write's owner reference points at: its uid is filled in
   * from that create's answer, so the CSV's objects are written in the same pass.
   */
  ownerCsv?: string;
}

/** The writes of a plan decision. */
export interface PlanWrites {
  /** The plan as loaded (its resourceVersion guards the status write). */
  plan: ServedInstallPlan | undefined;
  steps: StepWrite[];
  /** The status before any step write ran (phase transitions, status-only step changes). */
  status: InstallPlanStatus | undefined;
  /** An error found while deciding (bad manifest, unsafe CRD update): the pass fails with it. */
  error?: PlanError;
}

/** Why a pass could not finish. */
export interface PlanError {
  message: string;
  /** Forbidden errors (scoped installs) are retried for as long as it takes. */
  forbidden: boolean;
  /** The step that failed, to mark it. */
  step?: number;
  stepStatus?: Step['status'];
}

/** What happened when the step writes ran. */
export interface PlanOutcome {
  /** Step writes that succeeded, in order (a prefix of writes.steps). */
  succeeded: number;
  /** The error that stopped the pass, if any. */
  error?: PlanError;
}
