// What a failed step write means for the plan: the error it records, in upstream's words.
import type { KubeObject } from '../../../shared/kube/client.js';
import { isNotFound, KubeApiError } from '../../../shared/kube/errors.js';
import { OwnershipConflictError } from '../../../shared/kube/executor.js';
import type { PlanError } from './types.js';

/** Upstream's message when a step's kind is not served by the cluster. */
export function resourceNotFoundMessage(kind: string, name: string, apiVersion: string): string {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const gvk = `${group ?? ''}/${version ?? ''}, Kind=${kind}`;
  return `api-server resource not found installing ${kind} ${name}: GroupVersionKind ${gvk} not found on the cluster. This API may have been deprecated and removed, see https://kubernetes.io/docs/reference/using-api/deprecation-guide/ for more information.`;
}

/** Turns a failed step write into the error the plan records (upstream's wording). */
export function planErrorOf(
  error: unknown,
  write: { step: number; object?: KubeObject },
): PlanError {
  if (error instanceof KubeApiError) {
    if (error.reason === 'Forbidden')
      return { message: error.message, forbidden: true, step: write.step };
    if (isNotFound(error) && write.object !== undefined) {
      const o = write.object;
      return {
        message: resourceNotFoundMessage(o.kind, o.metadata.name ?? '', o.apiVersion),
        forbidden: false,
        step: write.step,
      };
    }
    return { message: error.message, forbidden: false, step: write.step };
  }
  if (error instanceof OwnershipConflictError)
    return { message: error.message, forbidden: false, step: write.step };
  throw error; // not a Kubernetes answer: let the host retry with backoff
}
