// The gates a CSV passes before its phase is looked at, in upstream's order: copies are the
// copy-csv function's; a deleted CSV cleans up; the cleanup finalizer comes first; a CSV that
// failed for good waits for RBAC to change; then OperatorGroup membership and install modes.
// Each gate decides the pass (a move, or stay) or lets the CSV through. Pure.
import type { Write } from '../../../shared/kube/executor.js';
import { refOf } from '../kube-writes.js';
import { installModeProblem } from './checks.js';
import { move, stay, type CsvInPass } from './move.js';
import { conversionCrdsToReset } from './ownership.js';
import type { CsvNamespaceSnapshot, CsvWrites } from './types.js';

/** Finalizer that lets OLM remove what a CSV installed outside its namespace. */
export const csvCleanupFinalizer = 'operators.coreos.com/csv-cleanup';

/** A gate: the pass's answer for the CSV, or undefined to let it through. */
export type Gate = (c: CsvInPass) => CsvWrites | undefined;

const copied: Gate = (c) =>
  c.csv.metadata.labels?.['olm.copiedFrom'] !== undefined || c.csv.status?.reason === 'Copied'
    ? stay(c)
    : undefined;

const hasFinalizer = (c: CsvInPass): boolean =>
  (c.csv.metadata.finalizers ?? []).includes(csvCleanupFinalizer);

// Deletion: remove what lives outside the namespace (namespaced objects follow their owner
// reference), then let the CSV go. CRDs and CRs stay; only the conversion webhooks of a CSV
// nothing replaces are taken out of their CRDs (strategy None), as upstream.
const deleted: Gate = (c) => {
  const { csv } = c;
  if (csv.metadata.deletionTimestamp === undefined) return undefined;
  if (!hasFinalizer(c)) return stay(c);
  const owned = c.s.clusterRbac.filter(
    (o) =>
      o.metadata.labels?.['olm.owner'] === c.name &&
      o.metadata.labels['olm.owner.kind'] === 'ClusterServiceVersion',
  );
  const writes: Write[] = owned.map((o) => ({ op: 'delete', ref: refOf(o) }));
  for (const name of conversionCrdsToReset(csv, c.s.csvs)) {
    const crd = c.s.crds.get(name);
    if (crd === undefined || crd.spec.conversion?.strategy === 'None') continue;
    writes.push({
      op: 'update',
      object: { ...crd, spec: { ...crd.spec, conversion: { strategy: 'None' } } },
    });
  }
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
};

const finalizer: Gate = (c) => {
  if (hasFinalizer(c)) return undefined;
  const { csv } = c;
  const finalizers = [...(csv.metadata.finalizers ?? []), csvCleanupFinalizer];
  return {
    csv,
    writes: [{ op: 'update', object: { ...csv, metadata: { ...csv.metadata, finalizers } } }],
  };
};

// Moved back to Pending by RBAC changes only (the rbac-retry reconciler), as upstream.
const failedForGood: Gate = (c) =>
  c.csv.status?.reason === 'InstallComponentFailedNoRetry' ? stay(c) : undefined;

/** The gates before membership, in order. */
export const gates: readonly Gate[] = [copied, deleted, finalizer, failedForGood];

/** A CSV its OperatorGroup has taken in: the group and the namespaces it targets. */
export interface Membership {
  group: CsvNamespaceSnapshot['operatorGroups'][number];
  targets: readonly string[];
}

/**
 * OperatorGroup membership: one OperatorGroup in the namespace. The rbac function owns the
 * group's status.namespaces and its members' annotations; until it has written both for this
 * CSV, there is nothing to decide on. Then the CSV's install modes must support the targets.
 */
export function membership(c: CsvInPass): Membership | CsvWrites {
  const [group, ...others] = c.s.operatorGroups;
  if (group === undefined) {
    return move(c, {
      phase: 'Failed',
      reason: 'NoOperatorGroup',
      message: 'csv in namespace with no operatorgroups',
    });
  }
  if (others.length > 0) {
    return move(c, {
      phase: 'Failed',
      reason: 'TooManyOperatorGroups',
      message:
        "csv created in namespace with multiple operatorgroups, can't pick one automatically",
    });
  }
  const targets = group.status?.namespaces;
  if (targets === undefined) return stay(c);
  if (targets.length === 0) {
    return move(c, {
      phase: 'Failed',
      reason: 'NoTargetNamespaces',
      message: 'no targetNamespaces are matched operatorgroups namespace selection',
    });
  }
  const annotations = {
    'olm.operatorGroup': group.metadata.name ?? '',
    'olm.operatorNamespace': c.s.namespace,
    'olm.targetNamespaces': targets.join(','),
  };
  const current = c.csv.metadata.annotations ?? {};
  if (Object.entries(annotations).some(([k, v]) => current[k] !== v)) return stay(c);
  const modeProblem = installModeProblem(c.csv, targets);
  if (modeProblem !== undefined) return move(c, modeProblem);
  return { group, targets };
}
