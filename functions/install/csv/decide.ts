// The ClusterServiceVersion state machine (upstream's olm-operator syncClusterServiceVersion),
// as a pure decision per CSV: the gate (finalizer, OperatorGroup membership, install modes),
// then the phase table of ../shared/spec/olm-behavior.md §2.2 with requirement checks (§2.4),
// the deployment install strategy (§3.1) and its health check (§2.3).
import type { KubeObject } from '../../../shared/kube/client.js';
import type { Write } from '../../../shared/kube/executor.js';
import { rotationDue, rotationWakeMs, certificateStatus } from '../certificates.js';
import { transitioned, type CsvObject, type Transition } from '../csv-status.js';
import { refOf } from '../kube-writes.js';
import { generatorWrites, upgradeBlocked } from '../operator-conditions/index.js';
import { deploymentNameProblem, installModeProblem, webhookProblem } from './checks.js';
import { deploymentHealth } from './deployments.js';
import { csvPhaseEvent } from './events.js';
import { requirementStatus } from './requirements.js';
import {
  certifiedWritesOf,
  deploymentWrite,
  intendedDeployments,
  ownedBy,
  strategyOf,
} from './strategy.js';
import type { CsvNamespaceSnapshot, CsvNamespaceWrites, CsvWrites } from './types.js';
import { webhooksInstalled } from './webhooks.js';

/** Finalizer that lets OLM remove what a CSV installed outside its namespace. */
export const csvCleanupFinalizer = 'operators.coreos.com/csv-cleanup';
/** How long Installing may wait for health before the CSV Failed (upstream: 5 minutes). */
export const installTimeoutMs = 5 * 60_000;
/** How soon a CSV waiting on something it cannot watch is looked at again. */
export const csvRequeueMs = 2_000;

const ogFailureReasons = new Set([
  'InvalidInstallModes',
  'NoTargetNamespaces',
  'UnsupportedOperatorGroup',
  'NoOperatorGroup',
  'TooManyOperatorGroups',
]);

const csvKind = { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion' };

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
