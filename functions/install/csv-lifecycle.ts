// The ClusterServiceVersion state machine (upstream's olm-operator syncClusterServiceVersion),
// as a pure decision per CSV: the gate (finalizer, OperatorGroup membership, install modes),
// then the phase table of ../shared/spec/olm-behavior.md §2.2 with requirement checks (§2.4),
// the deployment install strategy (§3.1) and its health check (§2.3).
import type { RequirementStatus } from '../../shared/api/clusterserviceversion.js';
import type { CsvPhase, CsvReason } from '../../shared/api/codes.js';
import type { KubeObject, ObjectRef } from '../../shared/kube/client.js';
import type { Write } from '../../shared/kube/executor.js';
import { crdServed } from './plan-execution.js';
import { csvPhaseEvent } from './csv-events.js';
import {
  deploymentFor,
  deploymentHealth,
  type StrategyDeployment,
  type SubscriptionConfig,
} from './deployments.js';
import {
  certificateStatus,
  rotationDue,
  rotationWakeMs,
  type ServingCertificate,
} from './certificates.js';
import { generatorWrites, upgradeBlocked } from './operator-conditions.js';
import {
  certifiedDeployments,
  certifiedWrites,
  existingKey,
  serviceNameOf,
  webhooksInstalled,
  withCertificate,
} from './webhooks.js';

/** Finalizer that lets OLM remove what a CSV installed outside its namespace. */
export const csvCleanupFinalizer = 'operators.coreos.com/csv-cleanup';
/** How long Installing may wait for health before the CSV Failed (upstream: 5 minutes). */
export const installTimeoutMs = 5 * 60_000;
/** How soon a CSV waiting on something it cannot watch is looked at again. */
export const csvRequeueMs = 2_000;
/** Phase history kept in status.conditions. */
const maxConditions = 20;

/** A CSV as the decision reads it. */
export interface CsvObject extends KubeObject {
  spec?: Record<string, unknown>;
  status?: {
    phase?: string;
    reason?: string;
    message?: string;
    lastUpdateTime?: string;
    lastTransitionTime?: string;
    conditions?: Record<string, unknown>[];
    requirementStatus?: RequirementStatus[];
    [key: string]: unknown;
  };
}

/** Everything in one namespace the CSV decisions read. */
export interface CsvNamespaceSnapshot {
  namespace: string;
  now: Date;
  csvs: CsvObject[];
  operatorGroups: KubeObject[];
  /** CRDs named by the CSVs' owned/required lists, by name. */
  crds: ReadonlyMap<string, KubeObject>;
  serviceAccounts: KubeObject[];
  deployments: KubeObject[];
  subscriptions: KubeObject[];
  /** Cluster-scoped RBAC labelled as owned by a CSV of this namespace (for cleanup). */
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
  operatorConditions?: ReadonlyMap<string, KubeObject>;
}

/** What happens to one CSV in this pass. */
export interface CsvWrites {
  csv: CsvObject;
  /** Object writes (deployments, CSV metadata, cleanup), in order. */
  writes: Write[];
  /** The status to record after the writes succeed. */
  status?: CsvObject['status'];
  /** When the writes fail: the phase/reason that records it (install strategy failures). */
  onFailure?: 'installStrategy';
  /** A CSV that started being replaced (csv_upgrade_count). */
  upgrade?: boolean;
  /** The CSV with the status this pass's earlier moves gave it (when moves were chained). */
  chained?: CsvObject;
  /**
   * The Events of this pass's phase writes (csv-events.ts), recorded after the status. A move
   * with onFailure gets its Event in apply, which alone knows which status was written.
   */
  events?: KubeObject[];
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

interface Transition {
  phase: CsvPhase;
  reason: CsvReason;
  message: string;
}

/** The CSV status after a move to `t` (phase history appended only when phase or reason changes). */
export function transitioned(csv: CsvObject, t: Transition, now: Date): CsvObject['status'] {
  const status = { ...(csv.status ?? {}) };
  const at = now.toISOString();
  const changed = status.phase !== t.phase || status.reason !== t.reason;
  if (!changed && status.message === t.message) return csv.status;
  const next = {
    ...status,
    phase: t.phase,
    reason: t.reason,
    message: t.message,
    lastUpdateTime: at,
  };
  if (status.phase !== t.phase || status.lastTransitionTime === undefined)
    next.lastTransitionTime = at;
  if (changed) {
    const entry = {
      phase: t.phase,
      reason: t.reason,
      message: t.message,
      lastUpdateTime: at,
      lastTransitionTime: at,
    };
    next.conditions = [...(status.conditions ?? []), entry].slice(-maxConditions);
  }
  return next;
}

const ownedCrds = (csv: CsvObject): { name: string; version?: string }[] =>
  (
    csv.spec?.['customresourcedefinitions'] as
      { owned?: { name: string; version?: string }[] } | undefined
  )?.owned ?? [];
const requiredCrds = (csv: CsvObject): { name: string; version?: string }[] =>
  (
    csv.spec?.['customresourcedefinitions'] as
      { required?: { name: string; version?: string }[] } | undefined
  )?.required ?? [];

/** Names of every CRD the CSVs own or require. */
export function crdNamesOf(csvs: readonly CsvObject[]): string[] {
  return [
    ...new Set(csvs.flatMap((c) => [...ownedCrds(c), ...requiredCrds(c)].map((d) => d.name))),
  ];
}

interface Strategy {
  deployments: StrategyDeployment[];
  permissions: { serviceAccountName: string }[];
  clusterPermissions: { serviceAccountName: string }[];
}

/** The parsed deployment install strategy, or the reason it is invalid. */
export function strategyOf(csv: CsvObject): Strategy | { invalid: string } {
  const install = csv.spec?.['install'] as
    { strategy?: string; spec?: Record<string, unknown> } | undefined;
  if (install === undefined) return { invalid: 'missing install strategy' };
  if (install.strategy !== 'deployment') {
    return { invalid: `unsupported InstallStrategy type: ${String(install.strategy)}` };
  }
  const spec = install.spec;
  if (spec === undefined || !Array.isArray(spec['deployments'])) {
    return { invalid: 'install strategy has no deployments' };
  }
  const deployments = spec['deployments'] as StrategyDeployment[];
  for (const [i, d] of deployments.entries()) {
    if (typeof d.name !== 'string' || d.name === '')
      return { invalid: `deployments[${i}] has no name` };
    if (typeof d.spec !== 'object' || d.spec === null)
      return { invalid: `deployment ${d.name} has no spec` };
  }
  const list = (key: string): { serviceAccountName: string }[] =>
    Array.isArray(spec[key]) ? (spec[key] as { serviceAccountName: string }[]) : [];
  return {
    deployments,
    permissions: list('permissions'),
    clusterPermissions: list('clusterPermissions'),
  };
}

/** Upstream's requirement rows for CRDs and service accounts. */
export function requirementStatus(
  csv: CsvObject,
  strategy: Strategy,
  crds: ReadonlyMap<string, KubeObject>,
  serviceAccounts: readonly KubeObject[],
): { rows: RequirementStatus[]; met: boolean } {
  const rows: RequirementStatus[] = [];
  for (const d of [...ownedCrds(csv), ...requiredCrds(csv)]) {
    const row = {
      group: 'apiextensions.k8s.io',
      version: 'v1',
      kind: 'CustomResourceDefinition',
      name: d.name,
    };
    const crd = crds.get(d.name);
    if (crd === undefined) {
      rows.push({ ...row, status: 'NotPresent', message: 'CRD is not present' });
      continue;
    }
    const versions = ((
      crd['spec'] as { versions?: { name: string; served?: boolean }[] } | undefined
    )?.versions ?? []) as { name: string; served?: boolean }[];
    if (
      d.version !== undefined &&
      d.version !== '' &&
      !versions.some((v) => v.name === d.version && v.served !== false)
    ) {
      rows.push({ ...row, status: 'NotPresent', message: 'CRD version not served' });
      continue;
    }
    if (crdServed(crd)) {
      rows.push({
        ...row,
        status: 'Present',
        message: 'CRD is present and Established condition is true',
        ...(crd.metadata.uid === undefined ? {} : { uuid: crd.metadata.uid }),
      });
    } else {
      rows.push({
        ...row,
        status: 'PresentNotAvailable',
        message: 'CRD is present but the Established condition is False (not available)',
      });
    }
  }
  const accounts = [...strategy.permissions, ...strategy.clusterPermissions].map(
    (p) => p.serviceAccountName,
  );
  for (const name of [...new Set(accounts)]) {
    const row = { group: '', version: 'v1', kind: 'ServiceAccount', name };
    const sa = serviceAccounts.find((s) => s.metadata.name === name);
    if (sa === undefined) {
      rows.push({ ...row, status: 'NotPresent', message: 'Service account does not exist' });
      continue;
    }
    rows.push({
      ...row,
      status: 'Present',
      message: '',
      ...(sa.metadata.uid === undefined ? {} : { uuid: sa.metadata.uid }),
    });
  }
  return { rows, met: rows.every((r) => r.status === 'Present') };
}

interface WebhookRule {
  apiGroups?: string[];
  resources?: string[];
}

/** Upstream's webhook description checks: the message of the first problem, or undefined. */
export function webhookProblem(csv: CsvObject): string | undefined {
  const hooks = (csv.spec?.['webhookdefinitions'] ?? []) as {
    generateName?: string;
    rules?: WebhookRule[];
  }[];
  const names = new Set<string>();
  for (const hook of hooks) {
    if (names.has(hook.generateName ?? '')) return 'CSV contains repeated WebhookDescription name';
    names.add(hook.generateName ?? '');
    for (const rule of hook.rules ?? []) {
      const groups = rule.apiGroups ?? [];
      if (groups.includes('*')) return 'webhook rules cannot include all groups';
      if (groups.includes('operators.coreos.com'))
        return 'webhook rules cannot include the OLM group';
      if (
        groups.includes('admissionregistration.k8s.io') &&
        (rule.resources ?? []).some((r) =>
          [
            '*',
            'MutatingWebhookConfiguration',
            'ValidatingWebhookConfiguration',
            'mutatingwebhookconfigurations',
            'validatingwebhookconfigurations',
          ].includes(r),
        )
      ) {
        return 'webhook rules cannot include MutatingWebhookConfiguration or ValidatingWebhookConfiguration resources';
      }
    }
  }
  return undefined;
}

/** Upstream's install-mode check for an OperatorGroup's targets; the failure, or undefined. */
export function installModeProblem(
  csv: CsvObject,
  targets: readonly string[],
): Transition | undefined {
  const modes = (csv.spec?.['installModes'] ?? []) as { type: string; supported: boolean }[];
  const seen = new Set<string>();
  for (const m of modes) {
    if (seen.has(m.type)) {
      return {
        phase: 'Failed',
        reason: 'InvalidInstallModes',
        message: `detected duplicate install mode types: ${m.type}`,
      };
    }
    seen.add(m.type);
  }
  const supports = (type: string): boolean => modes.some((m) => m.type === type && m.supported);
  const own = csv.metadata.namespace ?? '';
  const fail = (mode: string, what: string): Transition => ({
    phase: 'Failed',
    reason: 'UnsupportedOperatorGroup',
    message: `${mode} InstallModeType not supported, cannot configure to watch ${what}`,
  });
  if (targets.length === 0) {
    return {
      phase: 'Failed',
      reason: 'UnsupportedOperatorGroup',
      message:
        'operatorgroup has invalid selected namespaces, cannot configure to watch zero namespaces',
    };
  }
  if (targets.length === 1) {
    const [only] = targets;
    if (only === own)
      return supports('OwnNamespace') ? undefined : fail('OwnNamespace', 'own namespace');
    if (only === '')
      return supports('AllNamespaces') ? undefined : fail('AllNamespaces', 'all namespaces');
    return supports('SingleNamespace') ? undefined : fail('SingleNamespace', 'one namespace');
  }
  if (targets.includes('')) {
    return {
      phase: 'Failed',
      reason: 'UnsupportedOperatorGroup',
      message:
        'operatorgroup has invalid selected namespaces, cannot configure to watch all namespaces and others',
    };
  }
  if (!supports('MultiNamespace')) return fail('MultiNamespace', `${targets.length} namespaces`);
  if (targets.includes(own) && !supports('OwnNamespace'))
    return fail('OwnNamespace', 'own namespace');
  return undefined;
}

/** A webhook or owned APIService naming a deployment the strategy does not define. */
export function deploymentNameProblem(csv: CsvObject, strategy: Strategy): string | undefined {
  const names = new Set(strategy.deployments.map((d) => d.name));
  const hooks = (csv.spec?.['webhookdefinitions'] ?? []) as {
    generateName?: string;
    deploymentName?: string;
  }[];
  for (const hook of hooks) {
    if (!names.has(hook.deploymentName ?? '')) {
      return `webhook ${hook.generateName ?? ''} names deployment "${hook.deploymentName ?? ''}", which the install strategy does not define`;
    }
  }
  const apis =
    (
      csv.spec?.['apiservicedefinitions'] as
        | { owned?: { name?: string; group?: string; version?: string; deploymentName?: string }[] }
        | undefined
    )?.owned ?? [];
  for (const api of apis) {
    if (!names.has(api.deploymentName ?? '')) {
      return `APIService ${api.version ?? ''}.${api.group ?? ''} names deployment "${api.deploymentName ?? ''}", which the install strategy does not define`;
    }
  }
  return undefined;
}

const ogFailureReasons = new Set([
  'InvalidInstallModes',
  'NoTargetNamespaces',
  'UnsupportedOperatorGroup',
  'NoOperatorGroup',
  'TooManyOperatorGroups',
]);

function refOf(object: KubeObject): ObjectRef {
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    namespace: object.metadata.namespace,
    name: object.metadata.name,
  };
}

const csvKind = { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion' };

/** The Subscription config of the subscription that installed `csv`. */
function configFor(
  csv: CsvObject,
  subscriptions: readonly KubeObject[],
): SubscriptionConfig | undefined {
  const sub = subscriptions.find(
    (s) =>
      (s['status'] as { installedCSV?: string } | undefined)?.installedCSV === csv.metadata.name,
  );
  return (sub?.['spec'] as { config?: SubscriptionConfig } | undefined)?.config;
}

/** The deployments `csv`'s strategy asks for. */
export function intendedDeployments(
  csv: CsvObject,
  strategy: Strategy,
  s: CsvNamespaceSnapshot,
): KubeObject[] {
  const config = configFor(csv, s.subscriptions);
  const certified = certifiedDeployments(csv);
  const certificates = s.certificates.get(csv.metadata.name ?? '');
  return strategy.deployments.map((entry) => {
    const uses = certified.get(entry.name);
    const cert = certificates?.get(entry.name);
    if (uses === undefined || cert === undefined) return deploymentFor({ csv, entry, config });
    const spec = withCertificate(
      entry.spec,
      uses,
      cert.caHash,
      `${serviceNameOf(entry.name)}-cert`,
    );
    return deploymentFor({ csv, entry: { ...entry, spec }, config });
  });
}

/** The webhook/APIService writes of `csv` (empty when it has none). */
function certifiedWritesOf(
  csv: CsvObject,
  strategy: Strategy,
  s: CsvNamespaceSnapshot,
  group: KubeObject,
  targets: string[],
): Write[] {
  if (certifiedDeployments(csv).size === 0) return [];
  const existing = new Map(s.existing);
  for (const [name, crd] of s.crds) {
    existing.set(existingKey('CustomResourceDefinition', undefined, name), crd);
  }
  return certifiedWrites({
    csv,
    namespace: s.namespace,
    deploymentSpecs: new Map(strategy.deployments.map((d) => [d.name, d.spec])),
    certificates: s.certificates.get(csv.metadata.name ?? '') ?? new Map(),
    existing,
    webhookConfigurations: s.webhookConfigurations.filter(
      (c) => c.metadata.labels?.['olm.owner'] === csv.metadata.name,
    ),
    operatorGroup: group,
    targets,
  });
}

function ownedBy(object: KubeObject, csv: CsvObject): boolean {
  return (object.metadata.ownerReferences ?? []).some(
    (r) => r.kind === 'ClusterServiceVersion' && r.uid === csv.metadata.uid,
  );
}

// Create or update one deployment: our content wins; foreign labels/annotations stay (e.g. a
// failure annotation someone put there), and the owner reference moves to this CSV.
function deploymentWrite(intended: KubeObject, existing: KubeObject | undefined): Write {
  if (existing === undefined) return { op: 'create', object: intended };
  return {
    op: 'update',
    object: {
      ...existing,
      metadata: {
        ...existing.metadata,
        labels: { ...existing.metadata.labels, ...intended.metadata.labels },
        annotations: { ...existing.metadata.annotations, ...intended.metadata.annotations },
        ownerReferences: intended.metadata.ownerReferences ?? [],
      },
      spec: intended['spec'],
    },
  };
}

/** Pure: one CSV's move in this pass. */
export function decideCsv(csv: CsvObject, s: CsvNamespaceSnapshot): CsvWrites {
  const none: CsvWrites = { csv, writes: [] };
  const name = csv.metadata.name ?? '';
  const labels = csv.metadata.labels ?? {};
  if (labels['olm.copiedFrom'] !== undefined || csv.status?.reason === 'Copied') return none;
  const move = (t: Transition, extra: Partial<CsvWrites> = {}): CsvWrites => {
    const status = transitioned(csv, t, s.now);
    return { csv, writes: [], ...(status === csv.status ? {} : { status }), ...extra };
  };

  // Deletion: remove what lives outside the namespace (namespaced objects follow their owner
  // reference), then let the CSV go. CRDs and CRs are never touched.
  if (csv.metadata.deletionTimestamp !== undefined) {
    if (!(csv.metadata.finalizers ?? []).includes(csvCleanupFinalizer)) return none;
    const owned = s.clusterRbac.filter(
      (o) =>
        o.metadata.labels?.['olm.owner'] === name &&
        o.metadata.labels['olm.owner.kind'] === 'ClusterServiceVersion',
    );
    const writes: Write[] = owned.map((o) => ({ op: 'delete', ref: refOf(o) }));
    writes.push({
      op: 'update',
      object: {
        ...csv,
        metadata: {
          ...csv.metadata,
          finalizers: (csv.metadata.finalizers ?? []).filter((f) => f !== csvCleanupFinalizer),
        },
      },
    });
    return { csv, writes };
  }
  if (!(csv.metadata.finalizers ?? []).includes(csvCleanupFinalizer)) {
    return {
      csv,
      writes: [
        {
          op: 'update',
          object: {
            ...csv,
            metadata: {
              ...csv.metadata,
              finalizers: [...(csv.metadata.finalizers ?? []), csvCleanupFinalizer],
            },
          },
        },
      ],
    };
  }
  // Moved back to Pending by RBAC changes only (rbac-retry.ts), as upstream.
  if (csv.status?.reason === 'InstallComponentFailedNoRetry') return none;

  // OperatorGroup membership.
  if (s.operatorGroups.length === 0) {
    return move({
      phase: 'Failed',
      reason: 'NoOperatorGroup',
      message: 'csv in namespace with no operatorgroups',
    });
  }
  if (s.operatorGroups.length > 1) {
    return move({
      phase: 'Failed',
      reason: 'TooManyOperatorGroups',
      message:
        "csv created in namespace with multiple operatorgroups, can't pick one automatically",
    });
  }
  // The rbac function owns the group's status.namespaces and its members' annotations: until
  // it has written both for this CSV, there is nothing to decide on.
  const group = s.operatorGroups[0] as KubeObject;
  const targets = (group['status'] as { namespaces?: string[] } | undefined)?.namespaces;
  if (targets === undefined) return none;
  if (targets.length === 0) {
    return move({
      phase: 'Failed',
      reason: 'NoTargetNamespaces',
      message: 'no targetNamespaces are matched operatorgroups namespace selection',
    });
  }
  const annotations = {
    'olm.operatorGroup': group.metadata.name ?? '',
    'olm.operatorNamespace': s.namespace,
    'olm.targetNamespaces': targets.join(','),
  };
  const current = csv.metadata.annotations ?? {};
  if (Object.entries(annotations).some(([k, v]) => current[k] !== v)) return none;
  const modeProblem = installModeProblem(csv, targets);
  if (modeProblem !== undefined) return move(modeProblem);

  const phase = csv.status?.phase ?? '';
  const reason = csv.status?.reason ?? '';
  const replacement = s.csvs.find(
    (c) =>
      c !== csv &&
      (c.spec?.['replaces'] as string | undefined) === name &&
      c.metadata.deletionTimestamp === undefined,
  );
  const strategy = strategyOf(csv);

  switch (phase) {
    case '':
      return move({
        phase: 'Pending',
        reason: 'RequirementsUnknown',
        message: 'requirements not yet checked',
      });
    case 'Pending': {
      const blocked = upgradeBlocked(csv, s.csvs, s.operatorConditions);
      if (blocked !== undefined) {
        return move({
          phase: 'Pending',
          reason: 'OperatorConditionNotUpgradeable',
          message: `operator is not upgradeable: ${blocked}`,
        });
      }
      if ('invalid' in strategy) {
        return move({
          phase: 'Failed',
          reason: 'InvalidInstallStrategy',
          message: `install strategy invalid: ${strategy.invalid}`,
        });
      }
      const { rows, met } = requirementStatus(csv, strategy, s.crds, s.serviceAccounts);
      if (!met) {
        const moved = move({
          phase: 'Pending',
          reason: 'RequirementsNotMet',
          message: "one or more requirements couldn't be found",
        });
        const status = { ...(moved.status ?? csv.status), requirementStatus: rows };
        return { ...moved, status };
      }
      const webhook = webhookProblem(csv);
      if (webhook !== undefined)
        return move({ phase: 'Failed', reason: 'InvalidWebhookDescription', message: webhook });
      const replaced = csv.spec?.['replaces'] as string | undefined;
      const previous =
        replaced === undefined || replaced === name
          ? undefined
          : s.csvs.find((c) => c.metadata.name === replaced);
      if (
        previous !== undefined &&
        previous.status?.phase !== 'Replacing' &&
        previous.status?.phase !== 'Deleting'
      ) {
        return { csv, writes: [] }; // the replaced CSV must step aside first
      }
      const moved = move({
        phase: 'InstallReady',
        reason: 'AllRequirementsMet',
        message: 'all requirements found, attempting install',
      });
      return { ...moved, status: { ...(moved.status ?? csv.status), requirementStatus: rows } };
    }
    case 'InstallReady': {
      if ('invalid' in strategy) {
        return move({
          phase: 'Failed',
          reason: 'InvalidInstallStrategy',
          message: `install strategy invalid: ${strategy.invalid}`,
        });
      }
      const mismatch = deploymentNameProblem(csv, strategy);
      if (mismatch !== undefined) {
        return move({
          phase: 'Failed',
          reason: 'InstallComponentFailed',
          message: `install strategy failed: ${mismatch}`,
        });
      }
      const intended = intendedDeployments(csv, strategy, s);
      const writes: Write[] = certifiedWritesOf(csv, strategy, s, group, targets);
      for (const d of intended) {
        writes.push(
          deploymentWrite(
            d,
            s.deployments.find((x) => x.metadata.name === d.metadata.name),
          ),
        );
      }
      // Deployments this CSV owned that its strategy no longer names (upgrades) go.
      for (const d of s.deployments) {
        if (ownedBy(d, csv) && !intended.some((i) => i.metadata.name === d.metadata.name)) {
          writes.push({ op: 'delete', ref: refOf(d) });
        }
      }
      const moved = move({
        phase: 'Installing',
        reason: 'InstallSucceeded',
        message: 'waiting for install components to report healthy',
      });
      const certs = certificateStatus(s.certificates.get(name), s.now);
      if (certs !== undefined) moved.status = { ...(moved.status ?? csv.status), ...certs };
      return { ...moved, writes, onFailure: 'installStrategy' };
    }
    case 'Installing':
    case 'Succeeded':
    case 'Failed': {
      if (phase === 'Failed' && ogFailureReasons.has(reason)) {
        return move({
          phase: 'Pending',
          reason: 'RequirementsUnknown',
          message: 'InstallModes now support target namespaces',
        });
      }
      if (phase === 'Succeeded' && replacement !== undefined) {
        return move(
          {
            phase: 'Replacing',
            reason: 'BeingReplaced',
            message: `being replaced by csv: ${replacement.metadata.name ?? ''}`,
          },
          { upgrade: true },
        );
      }
      if ('invalid' in strategy) return none;
      // Bad CSV content stays Failed until the CSV changes; reinstalling cannot help.
      if (
        phase === 'Failed' &&
        (webhookProblem(csv) !== undefined || deploymentNameProblem(csv, strategy) !== undefined)
      ) {
        return none;
      }
      const rotate = rotationDue(s.certificates.get(name));
      if (phase === 'Succeeded' && rotate) {
        return move({
          phase: 'Pending',
          reason: 'NeedsCertRotation',
          message: 'CSV owns resources that require a cert refresh',
        });
      }
      if (phase !== 'Installing') {
        const { met } = requirementStatus(csv, strategy, s.crds, s.serviceAccounts);
        if (!met) {
          return phase === 'Succeeded'
            ? move({
                phase: 'Failed',
                reason: 'RequirementsNotMet',
                message: 'requirements no longer met',
              })
            : move({
                phase: 'Pending',
                reason: 'RequirementsNotMet',
                message: 'requirements not met',
              });
        }
      }
      if (phase === 'Failed' && rotate) {
        return move({
          phase: 'Pending',
          reason: 'NeedsCertRotation',
          message: 'owned APIServices need cert refresh',
        });
      }
      const problems = intendedDeployments(csv, strategy, s).flatMap((d) => {
        const h = deploymentHealth(
          d,
          s.deployments.find((x) => x.metadata.name === d.metadata.name),
        );
        return h === undefined ? [] : [h];
      });
      if (
        !webhooksInstalled(
          csv,
          s.webhookConfigurations.filter((c) => c.metadata.labels?.['olm.owner'] === name),
        )
      ) {
        problems.push({ reinstall: phase !== 'Installing', message: 'webhooks not installed' });
      }
      const problem = problems[0];
      if (problem === undefined) {
        return move({
          phase: 'Succeeded',
          reason: 'InstallSucceeded',
          message: 'install strategy completed with no errors',
        });
      }
      // Upstream's requeue phase/reason per current phase.
      const requeue: Transition =
        phase === 'Installing'
          ? {
              phase: 'Installing',
              reason: 'InstallWaiting',
              message: `installing: ${problem.message}`,
            }
          : phase === 'Succeeded'
            ? {
                phase: 'Failed',
                reason: 'ComponentUnhealthy',
                message: `installing: ${problem.message}`,
              }
            : {
                phase: 'Pending',
                reason: 'NeedsReinstall',
                message: `installing: ${problem.message}`,
              };
      if (problem.reinstall) {
        return move({
          phase: 'InstallReady',
          reason: requeue.reason,
          message: `installing: ${problem.message}`,
        });
      }
      if (phase === 'Installing') {
        const since = Date.parse(csv.status?.lastTransitionTime ?? s.now.toISOString());
        if (s.now.getTime() - since >= installTimeoutMs) {
          return move({
            phase: 'Failed',
            reason: 'InstallCheckFailed',
            message: 'install timeout',
          });
        }
      }
      if (problem.message.includes('exceeded its progress deadline')) {
        return move({
          phase: 'Failed',
          reason: 'InstallCheckFailed',
          message: `install failed: ${problem.message}`,
        });
      }
      return move(requeue);
    }
    case 'Replacing': {
      const replaced = csv.spec?.['replaces'] as string | undefined;
      if (
        replaced !== undefined &&
        replaced !== name &&
        s.csvs.some((c) => c.metadata.name === replaced)
      ) {
        return none; // leaf first: the CSV this one replaced goes before it
      }
      if (replacement === undefined) return none;
      if (replacement.status?.phase !== 'Succeeded') return none;
      return move({
        phase: 'Deleting',
        reason: 'Replaced',
        message:
          'has been replaced by a newer ClusterServiceVersion that has successfully installed.',
      });
    }
    case 'Deleting':
      return { csv, writes: [{ op: 'delete', ref: { ...csvKind, namespace: s.namespace, name } }] };
    default:
      return none;
  }
}

/** Pure: every CSV's move in the namespace. */
export function decideNamespace(s: CsvNamespaceSnapshot): {
  writes: CsvNamespaceWrites;
  requeueAfterMs?: number;
} {
  // Moves that only change status are chained within one pass (each still recorded in the
  // phase history): a pass per hop would cost a round trip through the mirror each.
  const csvs = s.csvs.map((csv): CsvWrites => {
    let current = csv;
    const events: KubeObject[] = [];
    for (let hop = 0; ; hop++) {
      const d = decideCsv(current, s);
      const event = csvPhaseEvent(csv, current.status, d.status ?? current.status, s.now);
      const statusOnly = d.writes.length === 0 && d.status !== undefined && d.upgrade !== true;
      if (!statusOnly || hop >= 4 || d.status?.phase === current.status?.phase) {
        if (event !== undefined && d.onFailure === undefined) events.push(event);
        const withEvents = events.length === 0 ? {} : { events };
        if (current === csv) return { ...d, ...withEvents };
        // Written against the CSV as loaded; failures build on the chained status.
        return { ...d, csv, status: d.status ?? current.status, chained: current, ...withEvents };
      }
      if (event !== undefined) events.push(event);
      if (d.status !== undefined) current = { ...current, status: d.status };
    }
  });
  // Look again while something waits on what no trigger reports (deployment rollout, CRDs).
  const waiting = s.csvs.some((c) => {
    const phase = c.status?.phase ?? '';
    return (
      phase === 'Pending' ||
      phase === 'Installing' ||
      phase === 'InstallReady' ||
      phase === 'Replacing'
    );
  });
  // Installed serving certificates are looked at again when they are due for rotation.
  const wakes = s.csvs.flatMap((c) => {
    const phase = c.status?.phase;
    if (phase !== 'Succeeded' && phase !== 'Failed') return [];
    const ms = rotationWakeMs(s.certificates.get(c.metadata.name ?? ''), s.now);
    return ms === undefined ? [] : [ms];
  });
  const requeueAfterMs = Math.min(...(waiting ? [csvRequeueMs] : []), ...wakes);
  return {
    writes: {
      namespace: s.namespace,
      csvs,
      ...(s.scope === undefined ? {} : { scope: { serviceAccount: s.scope.serviceAccount } }),
      ...(s.operatorConditions === undefined
        ? {}
        : { operatorConditions: generatorWrites(s.csvs, s.operatorConditions) }),
    },
    ...(Number.isFinite(requeueAfterMs) ? { requeueAfterMs } : {}),
  };
}
