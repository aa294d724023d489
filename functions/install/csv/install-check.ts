// The checks an installed CSV goes through (Installing, Succeeded, Failed): certificates due for
// rotation, requirements lost, and the health of what the strategy installed (upstream's
// install check) with the move each outcome leads to. Each check is a move, or undefined to
// let the next one decide. Pure.
import type { CsvPhase, CsvReason } from '../../../shared/api/codes.js';
import { apiServicesAvailable } from './apiservices.js';
import { rotationDue } from '../certificates.js';
import type { Transition } from '../csv-status.js';
import { deploymentHealth, type DeploymentHealth } from './deployments.js';
import { certificatesOf, move, type CsvWithStrategy } from './move.js';
import { requirementStatus } from './requirements.js';
import { intendedDeployments } from './strategy.js';
import type { CsvWrites } from './types.js';
import { webhooksInstalled } from './webhooks.js';

/** How long Installing may wait for health before the CSV Failed (upstream: 5 minutes). */
export const installTimeoutMs = 5 * 60_000;

/** Pending/NeedsCertRotation with `message` when a serving certificate was issued anew. */
export function certificatesDue(c: CsvWithStrategy, message: string): CsvWrites | undefined {
  return rotationDue(certificatesOf(c))
    ? move(c, { phase: 'Pending', reason: 'NeedsCertRotation', message })
    : undefined;
}

/** The move `t` when the CSV's requirements are no longer met. */
export function requirementsLost(c: CsvWithStrategy, t: Transition): CsvWrites | undefined {
  const { met } = requirementStatus(c.csv, c.strategy, c.s);
  return met ? undefined : move(c, t);
}

/** A health problem; `bare` messages are upstream's own, not an install error's ("installing: …"). */
type HealthProblem = DeploymentHealth & { bare?: true };

// The first thing keeping the install from healthy: a strategy deployment to reinstall
// (missing, drifted) or past its progress deadline — a reinstall writes the APIServices too —,
// else an owned APIService missing or not Available (upstream checks them before the strategy),
// else a deployment not ready, else an admission webhook without its configuration.
function healthProblem(c: CsvWithStrategy): HealthProblem | undefined {
  let deploymentProblem: DeploymentHealth | undefined;
  for (const d of intendedDeployments(c.csv, c.strategy, c.s)) {
    const existing = c.s.deployments.find((x) => x.metadata.name === d.metadata.name);
    deploymentProblem = deploymentHealth(d, existing);
    if (deploymentProblem !== undefined) break;
  }
  const first =
    deploymentProblem?.reinstall === true ||
    deploymentProblem?.message.includes('exceeded its progress deadline') === true;
  if (!first && !apiServicesAvailable(c)) {
    return { reinstall: false, message: 'apiServices not installed', bare: true };
  }
  if (deploymentProblem !== undefined) return deploymentProblem;
  const configurations = c.s.webhookConfigurations.filter(
    (w) => w.metadata.labels?.['olm.owner'] === c.name,
  );
  if (!webhooksInstalled(c.csv, configurations)) {
    return { reinstall: c.phase !== 'Installing', message: 'webhooks not installed' };
  }
  return undefined;
}

/**
 * Upstream's install check: Succeeded when healthy; else back to InstallReady when the install
 * must be redone, Failed when Installing timed out or a deployment exceeded its progress
 * deadline, and otherwise `unhealthy` (upstream's requeue phase and reason per phase).
 */
export function installCheck(
  c: CsvWithStrategy,
  unhealthy: { phase: CsvPhase; reason: CsvReason },
): CsvWrites {
  const problem = healthProblem(c);
  if (problem === undefined) {
    return move(c, {
      phase: 'Succeeded',
      reason: 'InstallSucceeded',
      message: 'install strategy completed with no errors',
    });
  }
  const message = problem.bare === true ? problem.message : `installing: ${problem.message}`;
  if (problem.reinstall)
    return move(c, { phase: 'InstallReady', reason: unhealthy.reason, message });
  if (c.phase === 'Installing') {
    const since = Date.parse(c.csv.status?.lastTransitionTime ?? c.s.now.toISOString());
    if (c.s.now.getTime() - since >= installTimeoutMs) {
      return move(c, { phase: 'Failed', reason: 'InstallCheckFailed', message: 'install timeout' });
    }
  }
  if (problem.message.includes('exceeded its progress deadline')) {
    return move(c, {
      phase: 'Failed',
      reason: 'InstallCheckFailed',
      message: `install failed: ${problem.message}`,
    });
  }
  return move(c, { ...unhealthy, message });
}
