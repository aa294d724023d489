// The Events of an InstallPlan: upstream's when a step's writes draw API warnings, and olmq's
// when the plan fails (upstream records none; `kubectl describe ip` then says why).
import type { KubeObject } from '../../../shared/kube/client.js';
import { coreEvent, type InvolvedObject } from '../../../shared/kube/events.js';
import type { ServedInstallPlan } from './types.js';

function involved(plan: ServedInstallPlan, fieldPath?: string): InvolvedObject {
  return {
    apiVersion: plan.apiVersion || 'operators.coreos.com/v1alpha1',
    kind: 'InstallPlan',
    namespace: plan.metadata.namespace,
    name: plan.metadata.name ?? '',
    uid: plan.metadata.uid,
    resourceVersion: plan.metadata.resourceVersion,
    fieldPath,
  };
}

/**
 * The Warning Event `InstallComponentFailed` (the reason of the plan's Installed=False
 * condition) when `plan` fails with `message`.
 */
export function planFailedEvent(plan: ServedInstallPlan, message: string, at: Date): KubeObject {
  return coreEvent(
    involved(plan),
    { type: 'Warning', reason: 'InstallComponentFailed', message },
    at,
  );
}

/**
 * Upstream's Warning Event `AppliedWithWarnings` for the API warnings (HTTP 299) that writing
 * step `index` of `plan` drew: on the InstallPlan, fieldPath status.plan[index].
 */
export function appliedWithWarningsEvent(
  plan: ServedInstallPlan,
  index: number,
  warnings: readonly string[],
  at: Date,
): KubeObject {
  const step = plan.status?.plan?.[index];
  const what = `${step?.resource.kind ?? ''} ${JSON.stringify(step?.resource.name ?? '')}`;
  const during =
    step?.resolving === undefined || step.resolving === ''
      ? 'operator installation'
      : `installation of operator ${JSON.stringify(step.resolving)}`;
  return coreEvent(
    involved(plan, `status.plan[${index}]`),
    {
      type: 'Warning',
      reason: 'AppliedWithWarnings',
      message: `${warnings.length} warning(s) generated during ${during} (${what}): ${warnings.join(', ')}`,
    },
    at,
  );
}
