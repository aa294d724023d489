// The Event upstream records when a step's writes draw API warnings.
import type { KubeObject } from '../../../shared/kube/client.js';
import { coreEvent } from '../../../shared/kube/events.js';
import type { ServedInstallPlan } from './types.js';

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
    {
      apiVersion: plan.apiVersion || 'operators.coreos.com/v1alpha1',
      kind: 'InstallPlan',
      namespace: plan.metadata.namespace,
      name: plan.metadata.name ?? '',
      uid: plan.metadata.uid,
      resourceVersion: plan.metadata.resourceVersion,
      fieldPath: `status.plan[${index}]`,
    },
    {
      type: 'Warning',
      reason: 'AppliedWithWarnings',
      message: `${warnings.length} warning(s) generated during ${during} (${what}): ${warnings.join(', ')}`,
    },
    at,
  );
}
