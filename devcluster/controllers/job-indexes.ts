// Completion indexes of Indexed Jobs, as kube 1.30's job controller keeps them
// (pkg/controller/job/indexed_job_utils.go): the index annotation and label on each pod, the
// per-index failure count, and index sets written "0-2,4" in status.completedIndexes and
// status.failedIndexes.
import type { JsonObject } from '../../shared/kube/json.js';
import { metadataOf, obj } from './workload-objects.js';

/** Annotation and label with a pod's completion index. */
export const completionIndexKey = 'batch.kubernetes.io/job-completion-index';

/** Annotation counting the earlier failures of a pod's index (backoffLimitPerIndex). */
export const indexFailureCountKey = 'batch.kubernetes.io/job-index-failure-count';

/** Annotation counting the earlier failures of a pod's index that the policy ignored. */
export const indexIgnoredFailureCountKey = 'batch.kubernetes.io/job-index-ignored-failure-count';

/** Parses an index set ("0-2,4"); indexes at or above `limit` and malformed parts are dropped. */
export function parseIndexes(value: unknown, limit: number): Set<number> {
  const indexes = new Set<number>();
  if (typeof value !== 'string' || value === '') return indexes;
  for (const part of value.split(',')) {
    const [first, last = first] = part.split('-').map((n) => Number.parseInt(n, 10));
    if (first === undefined || last === undefined || Number.isNaN(first) || Number.isNaN(last))
      continue;
    for (let i = first; i <= last && i < limit; i++) indexes.add(i);
  }
  return indexes;
}

/** Writes an index set as kube does: ascending, runs of consecutive indexes as "first-last". */
export function formatIndexes(indexes: Iterable<number>): string {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === (sorted[j] ?? 0) + 1) j++;
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** A pod's completion index (annotation), or undefined when it has none or a bad one. */
export function indexOf(pod: JsonObject): number | undefined {
  const value = obj(metadataOf(pod)['annotations'])[completionIndexKey];
  if (typeof value !== 'string' || !/^(0|[1-9]\d*)$/.test(value)) return undefined;
  return Number(value);
}
