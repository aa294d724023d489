// The pods the simulated job controller creates, as kube 1.30's does: `<job>-<random>` owned by
// the Job, and for Indexed Jobs `<job>-<index>-<random>` with the completion index as annotation
// and label, hostname `<job>-<index>`, JOB_COMPLETION_INDEX in every container's environment and,
// with backoffLimitPerIndex, the failure counts of the index.
import { systemWrite, type ApiCore } from '../api/core.js';
import { isJsonObject, text, type JsonObject } from '../../shared/kube/json.js';
import {
  completionIndexKey,
  indexFailureCountKey,
  indexIgnoredFailureCountKey,
} from './job-indexes.js';
import { metadataOf, obj, ownerRef, recordEvent, tolerate } from './workload-objects.js';

/** The completion index of a pod to create, with the earlier failures of that index. */
export interface IndexedPod {
  index: number;
  /** Counted failures of the index so far (written only with backoffLimitPerIndex). */
  failures: number;
  /** Failures of the index the pod failure policy ignored. */
  ignoredFailures: number;
}

/** Environment variable carrying the completion index (from the pod's label). */
export const completionIndexEnv = 'JOB_COMPLETION_INDEX';

function withIndex(spec: JsonObject, jobName: string, index: number): void {
  if (typeof spec['hostname'] !== 'string' || spec['hostname'] === '')
    spec['hostname'] = `${jobName}-${index}`.slice(0, 63);
  for (const key of ['initContainers', 'containers']) {
    const containers = spec[key];
    if (!Array.isArray(containers)) continue;
    for (const container of containers.filter(isJsonObject)) {
      const env = Array.isArray(container['env']) ? container['env'] : [];
      if (env.some((e) => isJsonObject(e) && e['name'] === completionIndexEnv)) continue;
      const fieldPath = `metadata.labels['${completionIndexKey}']`;
      env.push({ name: completionIndexEnv, valueFrom: { fieldRef: { fieldPath } } });
      container['env'] = env;
    }
  }
}

/** Creates one pod of the Job (an Indexed Job's when `indexed` is given); undefined on a race. */
export function createJobPod(
  core: ApiCore,
  job: JsonObject,
  indexed: IndexedPod | undefined,
  perIndexLimit: boolean,
): JsonObject | undefined {
  const m = metadataOf(job);
  const name = text(m['name']);
  const namespace = text(m['namespace']);
  const template = obj(obj(job['spec'])['template']);
  const metadata: JsonObject = {
    ...structuredClone(obj(template['metadata'])),
    generateName: `${name}-`,
    namespace,
    ownerReferences: [ownerRef(job, 'Job', 'batch/v1')],
  };
  const spec = structuredClone(obj(template['spec']));
  if (indexed !== undefined) {
    const index = String(indexed.index);
    metadata['generateName'] = `${name}-${index}-`;
    const annotations: JsonObject = {
      ...obj(metadata['annotations']),
      [completionIndexKey]: index,
    };
    if (perIndexLimit) {
      annotations[indexFailureCountKey] = String(indexed.failures);
      if (indexed.ignoredFailures > 0)
        annotations[indexIgnoredFailureCountKey] = String(indexed.ignoredFailures);
    }
    metadata['annotations'] = annotations;
    metadata['labels'] = { ...obj(metadata['labels']), [completionIndexKey]: index };
    withIndex(spec, name, indexed.index);
  }
  const body: JsonObject = { apiVersion: 'v1', kind: 'Pod', metadata, spec };
  let created: JsonObject | undefined;
  tolerate(() => {
    created = core.create(core.typeOf('', 'pods'), namespace, body, systemWrite('job-controller'));
  });
  if (created !== undefined) {
    const message = `Created pod: ${text(metadataOf(created)['name'])}`;
    recordEvent(core, job, 'job-controller', 'SuccessfulCreate', message);
  }
  return created;
}
