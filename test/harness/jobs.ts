// Reading Jobs and their pods back in tests: the pods a Job made, and the Job once it finished.
import type { BatchV1Api, CoreV1Api, V1Job, V1Pod } from '@kubernetes/client-node';
import { waitFor } from './wait.js';

/** The clients and namespace a Job test works in. */
export interface JobScope {
  batch: BatchV1Api;
  core: CoreV1Api;
  namespace: string;
}

/** The pods of Job `name`, by kube's job-name label. */
export async function jobPods(scope: JobScope, name: string): Promise<V1Pod[]> {
  const list = await scope.core.listNamespacedPod({
    namespace: scope.namespace,
    labelSelector: `batch.kubernetes.io/job-name=${name}`,
  });
  return list.items;
}

/** Job `name` once its condition `type` is True. */
export function jobFinished(
  scope: JobScope,
  name: string,
  type: 'Complete' | 'Failed',
): Promise<V1Job> {
  return waitFor(`job ${name} ${type}`, async () => {
    const read = await scope.batch.readNamespacedJobStatus({ name, namespace: scope.namespace });
    const done = read.status?.conditions?.some((c) => c.type === type && c.status === 'True');
    return done ? read : undefined;
  });
}
