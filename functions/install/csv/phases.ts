// The CSV phase table (upstream's syncClusterServiceVersion transitions, spec §2.2): one small
// step per phase, each a move of the CSV or stay. The checks shared by the installed phases are
// in install-check.ts. Pure.
import type { RequirementStatus } from '../../../shared/api/clusterserviceversion.js';
import { CsvPhase, type CsvReason } from '../../../shared/api/codes.js';
import { certificateStatus } from '../certificates.js';
import {
  failForwardEnabled,
  lastInReplacementChain,
  replacementMapping,
} from '../../../shared/resolver/index.js';
import { upgradeBlocked } from '../operator-conditions/index.js';
import { deploymentNameProblem, webhookProblem } from './checks.js';
import { certificatesDue, installCheck, requirementsLost } from './install-check.js';
import { certificatesOf, move, stay, type CsvInPhase, type CsvWithStrategy } from './move.js';
import {
  apiServiceOwnerConflict,
  apiServiceOwnerConflictMessage,
  apiServiceResourceProblem,
} from './apiservices.js';
import {
  conversionWebhookProblem,
  crdOwnerConflict,
  crdOwnerConflictMessage,
} from './ownership.js';
import { requirementStatus } from './requirements.js';
import { installWrites } from './strategy.js';
import type { CsvWrites } from './types.js';

/** One phase's step. */
export type PhaseStep = (c: CsvInPhase) => CsvWrites;

const csvKind = { apiVersion: 'operators.coreos.com/v1alpha1', kind: 'ClusterServiceVersion' };

// Reasons of a Failed CSV that its OperatorGroup caused: the gates passed now, so it starts over.
const operatorGroupFailures = new Set<string>([
  'InvalidInstallModes',
  'NoTargetNamespaces',
  'UnsupportedOperatorGroup',
  'NoOperatorGroup',
  'TooManyOperatorGroups',
] satisfies CsvReason[]);

const invalidStrategy = (c: CsvInPhase, why: string): CsvWrites =>
  move(c, {
    phase: 'Failed',
    reason: 'InvalidInstallStrategy',
    message: `install strategy invalid: ${why}`,
  });

// A move that records the requirement rows too.
const withRows = (c: CsvInPhase, moved: CsvWrites, rows: RequirementStatus[]): CsvWrites => ({
  ...moved,
  status: { ...(moved.status ?? c.csv.status), requirementStatus: rows },
});

// The CSV this one replaces, while it has not stepped aside (Replacing or Deleting) yet.
function replacedInTheWay(c: CsvInPhase): boolean {
  const replaced = c.csv.spec?.replaces;
  const previous =
    replaced === undefined || replaced === c.name
      ? undefined
      : c.s.csvs.find((x) => x.metadata.name === replaced);
  return (
    previous !== undefined &&
    previous.status?.phase !== 'Replacing' &&
    previous.status?.phase !== 'Deleting'
  );
}

// None: a new CSV.
const none: PhaseStep = (c) =>
  move(c, {
    phase: 'Pending',
    reason: 'RequirementsUnknown',
    message: 'requirements not yet checked',
  });

// Pending: the upgrade gate, the strategy, the requirements, webhook descriptions, and the CSV
// it replaces stepping aside; then InstallReady.
const pending: PhaseStep = (c) => {
  const blocked = upgradeBlocked(c.csv, c.s.csvs, c.s.operatorConditions);
  if (blocked !== undefined) {
    return move(c, {
      phase: 'Pending',
      reason: 'OperatorConditionNotUpgradeable',
      message: `operator is not upgradeable: ${blocked}`,
    });
  }
  if ('invalid' in c.strategy) return invalidStrategy(c, c.strategy.invalid);
  const v: CsvWithStrategy = { ...c, strategy: c.strategy };
  const { rows, met } = requirementStatus(c.csv, v.strategy, c.s);
  if (!met) {
    const moved = move(c, {
      phase: 'Pending',
      reason: 'RequirementsNotMet',
      message: "one or more requirements couldn't be found",
    });
    return withRows(c, moved, rows);
  }
  const webhook = webhookProblem(c.csv);
  if (webhook !== undefined) {
    return move(c, { phase: 'Failed', reason: 'InvalidWebhookDescription', message: webhook });
  }
  if (crdOwnerConflict(c.csv, c.s.csvs)) {
    return move(c, { phase: 'Failed', reason: 'OwnerConflict', message: crdOwnerConflictMessage });
  }
  if (apiServiceOwnerConflict(c)) {
    return move(c, {
      phase: 'Failed',
      reason: 'OwnerConflict',
      message: apiServiceOwnerConflictMessage,
    });
  }
  if (replacedInTheWay(c)) return stay(c); // the replaced CSV must step aside first
  const moved = move(c, {
    phase: 'InstallReady',
    reason: 'AllRequirementsMet',
    message: 'all requirements found, attempting install',
  });
  return withRows(c, moved, rows);
};

// InstallReady: write the strategy's objects (apply records their failure), then Installing.
const installReady: PhaseStep = (c) => {
  if ('invalid' in c.strategy) return invalidStrategy(c, c.strategy.invalid);
  const v: CsvWithStrategy = { ...c, strategy: c.strategy };
  const mismatch = deploymentNameProblem(c.csv, v.strategy) ?? conversionWebhookProblem(c.csv);
  if (mismatch !== undefined) {
    return move(c, {
      phase: 'Failed',
      reason: 'InstallComponentFailed',
      message: `install strategy failed: ${mismatch}`,
    });
  }
  const moved = move(c, {
    phase: 'Installing',
    reason: 'InstallSucceeded',
    message: 'waiting for install components to report healthy',
  });
  const certs = certificateStatus(
    certificatesOf(c),
    c.s.now,
    c.csv.status?.certsRotateAt !== undefined,
  );
  const status =
    certs === undefined ? moved.status : { ...(moved.status ?? c.csv.status), ...certs };
  return {
    ...moved,
    ...(status === undefined ? {} : { status }),
    writes: installWrites(c.csv, v.strategy, c.s, c.group, c.targets),
    onFailure: 'installStrategy',
  };
};

// Installing: wait for health (the install check).
const installing: PhaseStep = (c) => {
  if ('invalid' in c.strategy) return stay(c);
  const v: CsvWithStrategy = { ...c, strategy: c.strategy };
  return installCheck(v, { phase: 'Installing', reason: 'InstallWaiting' });
};

// Succeeded: a replacement takes over; else certificates, requirements and health are watched.
const succeeded: PhaseStep = (c) => {
  if (c.replacement !== undefined) {
    return move(
      c,
      {
        phase: 'Replacing',
        reason: 'BeingReplaced',
        message: `being replaced by csv: ${c.replacement.metadata.name ?? ''}`,
      },
      { upgrade: true },
    );
  }
  if ('invalid' in c.strategy) return stay(c);
  const v: CsvWithStrategy = { ...c, strategy: c.strategy };
  const resources = apiServiceResourceProblem(c);
  if (resources !== undefined) {
    return move(c, {
      phase: 'Failed',
      reason: 'APIServiceResourceIssue',
      message: resources.message,
    });
  }
  return (
    certificatesDue(v, 'CSV owns resources that require a cert refresh') ??
    requirementsLost(v, {
      phase: 'Failed',
      reason: 'RequirementsNotMet',
      message: 'requirements no longer met',
    }) ??
    installCheck(v, { phase: 'Failed', reason: 'ComponentUnhealthy' })
  );
};

// Failed: starts over once its OperatorGroup is fine; bad CSV content stays Failed until the
// CSV changes (reinstalling cannot help); else requirements, certificates and health decide.
const failed: PhaseStep = (c) => {
  // Failing forward (the group's TechPreviewUnsafeFailForward), a replacement takes over a
  // Failed CSV as it would a Succeeded one.
  if (c.replacement !== undefined && failForwardEnabled([c.group])) {
    return move(
      c,
      {
        phase: 'Replacing',
        reason: 'BeingReplaced',
        message: `Fail Forward is enabled, allowing Failed csv to be replaced by csv: ${c.replacement.metadata.name ?? ''}`,
      },
      { upgrade: true },
    );
  }
  if (operatorGroupFailures.has(c.reason)) {
    return move(c, {
      phase: 'Pending',
      reason: 'RequirementsUnknown',
      message: 'InstallModes now support target namespaces',
    });
  }
  if ('invalid' in c.strategy) return stay(c);
  const v: CsvWithStrategy = { ...c, strategy: c.strategy };
  if (
    webhookProblem(c.csv) !== undefined ||
    deploymentNameProblem(c.csv, v.strategy) !== undefined ||
    conversionWebhookProblem(c.csv) !== undefined
  )
    return stay(c);
  // Upstream reinstalls and fails again, round and round; olmq waits for the other owner to go.
  if (c.reason === 'OwnerConflict' && crdOwnerConflict(c.csv, c.s.csvs)) return stay(c);
  const lost = requirementsLost(v, {
    phase: 'Pending',
    reason: 'RequirementsNotMet',
    message: 'requirements not met',
  });
  if (lost !== undefined) return lost;
  // Missing APIService objects are reinstalled; an APIService it cannot adopt keeps it Failed.
  const resources = apiServiceResourceProblem(c);
  if (resources !== undefined) {
    return resources.actionable
      ? move(c, {
          phase: 'Pending',
          reason: 'APIServiceResourcesNeedReinstall',
          message: resources.message,
        })
      : stay(c);
  }
  return (
    certificatesDue(v, 'owned APIServices need cert refresh') ??
    installCheck(v, { phase: 'Pending', reason: 'NeedsReinstall' })
  );
};

// Replacing: leaf first (the CSV this one replaced goes before it), then Deleting once the
// replacement Succeeded.
const replacing: PhaseStep = (c) => {
  const replaced = c.csv.spec?.replaces;
  if (
    replaced !== undefined &&
    replaced !== c.name &&
    c.s.csvs.some((x) => x.metadata.name === replaced)
  ) {
    return stay(c);
  }
  // Failing forward, the chain may hold failed CSVs: its last CSV is the one that must succeed.
  const next =
    c.replacement !== undefined && failForwardEnabled([c.group])
      ? lastInReplacementChain(c.replacement, replacementMapping(c.s.csvs))
      : c.replacement;
  if (next?.status?.phase !== 'Succeeded') return stay(c);
  return move(c, {
    phase: 'Deleting',
    reason: 'Replaced',
    message: 'has been replaced by a newer ClusterServiceVersion that has successfully installed.',
  });
};

// Deleting: the CSV goes (this one, not a newer one of its name: the ledger of own writes then
// tells the new one from the deleted one).
const deleting: PhaseStep = (c) => ({
  csv: c.csv,
  writes: [
    {
      op: 'delete',
      ref: { ...csvKind, namespace: c.s.namespace, name: c.name },
      ...(c.csv.metadata.uid === undefined ? {} : { preconditions: { uid: c.csv.metadata.uid } }),
    },
  ],
});

/** The step of each phase. */
export const phaseSteps: Readonly<Record<CsvPhase, PhaseStep>> = {
  [CsvPhase.None]: none,
  [CsvPhase.Pending]: pending,
  [CsvPhase.InstallReady]: installReady,
  [CsvPhase.Installing]: installing,
  [CsvPhase.Succeeded]: succeeded,
  [CsvPhase.Failed]: failed,
  [CsvPhase.Replacing]: replacing,
  [CsvPhase.Deleting]: deleting,
  [CsvPhase.Unknown]: stay,
};
