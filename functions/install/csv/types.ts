// The csv room's contract: what one namespace pass of the CSV lifecycle reads and writes.
import type { Deployment, ServiceAccount } from '../../../shared/api/core.js';
import type { OperatorCondition, OperatorGroup, Subscription } from '../../../shared/api/index.js';
import type { KubeObject } from '../../../shared/kube/client.js';
import type { Write } from '../../../shared/kube/executor.js';
import type { Served } from '../../../shared/kube/served.js';
import type { ServingCertificate } from '../certificates.js';
import type { Crd } from '../crds.js';
import type { Csv, CsvStatus } from '../csv-status.js';
import type { RbacView } from './rule-check.js';

/** Everything in one namespace the CSV decisions read. */
export interface CsvNamespaceSnapshot {
  namespace: string;
  now: Date;
  csvs: Csv[];
  operatorGroups: Served<OperatorGroup>[];
  /** CRDs named by the CSVs' owned/required lists, by name. */
  crds: ReadonlyMap<string, Crd>;
  serviceAccounts: Served<ServiceAccount>[];
  deployments: Served<Deployment>[];
  subscriptions: Served<Subscription>[];
  /**
   * Objects outside the namespace labelled as owned by a CSV of it, read while one is being
   * deleted (for cleanup): cluster RBAC, webhook configurations, APIServices, kube-system
   * auth-reader RoleBindings.
   */
  clusterRbac: KubeObject[];
  /** Serving certificates per CSV name, per backing deployment (webhooks, APIServices). */
  certificates: ReadonlyMap<string, ReadonlyMap<string, ServingCertificate>>;
  /** Objects the webhook/APIService writes compare against, by existingKey(). */
  existing: ReadonlyMap<string, KubeObject>;
  /** Admission webhook configurations owned by CSVs of this namespace. */
  webhookConfigurations: KubeObject[];
  /** Scoped installs: the OperatorGroup's service account. */
  scope?: { serviceAccount: string };
  /** The namespace's OperatorConditions by name (the generator and the upgrade gate). */
  operatorConditions?: ReadonlyMap<string, Served<OperatorCondition>>;
  /** What the full requirement checks read, while a CSV of the namespace is new or Pending. */
  requirements?: RequirementsContext;
}

/** The cluster facts behind minKubeVersion, nativeAPIs and PolicyRule requirements. */
export interface RequirementsContext {
  /** The API server's gitVersion (GET /version); undefined when it could not be read. */
  serverVersion: string | undefined;
  /** Whether each native API a CSV names is served, by nativeApiKey(). */
  nativeApis: ReadonlyMap<string, boolean>;
  /** The namespace's Roles and RoleBindings and the cluster's ClusterRoles and bindings. */
  rbac: RbacView;
}

/** What happens to one CSV in this pass. */
export interface CsvWrites {
  csv: Csv;
  /** Object writes (deployments, CSV metadata, cleanup), in order. */
  writes: Write[];
  /** The status to record after the writes succeed. */
  status?: CsvStatus;
  /** When the writes fail: the phase/reason that records it (install strategy failures). */
  onFailure?: 'installStrategy';
  /** A CSV that started being replaced (csv_upgrade_count). */
  upgrade?: boolean;
  /** The CSV with the status this pass's earlier moves gave it (when moves were chained). */
  chained?: Csv;
  /**
   * The Events of this pass's phase writes (csv-events.ts), recorded after the status. A move
   * with onFailure gets its Event in apply, which alone knows which status was written.
   */
  events?: KubeObject[];
  /**
   * Deciding again on the statuses this pass writes changes nothing in the namespace: the
   * echo of this CSV's status write needs no pass (echoes.ts).
   */
  settled?: boolean;
}

/** The writes of one namespace pass. */
export interface CsvNamespaceWrites {
  namespace: string;
  /** Scoped installs write the strategy's objects as this service account. */
  scope?: { serviceAccount: string };
  csvs: CsvWrites[];
  /** The OperatorCondition generator's writes (one condition per CSV). */
  operatorConditions?: Write[];
}
