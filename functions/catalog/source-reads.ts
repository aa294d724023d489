// When a CatalogSource's content must be read again, what identifies the content it serves,
// and the status message that sums up a build's warnings.
import type { CatalogSource } from '../../shared/api/catalogsource.js';
import type { CatalogWarning } from '../../shared/catalog/index.js';
import type { CatalogIndexRecord } from '../../shared/handoff/index.js';
import type { KubeObject } from '../../shared/kube/client.js';
import { pollSettingOf, type SourceKind } from './spec.js';
import type { CatalogTiming, SyncRecord } from './types.js';

const maxMessage = 1024;

/** The status message for a catalog built with warnings ('' without). */
export function summarizeWarnings(warnings: readonly CatalogWarning[]): string {
  if (warnings.length === 0) return '';
  const counts = new Map<string, number>();
  for (const w of warnings) counts.set(w.code, (counts.get(w.code) ?? 0) + 1);
  const byCode = [...counts]
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
    .map(([code, n]) => `${code} ×${n}`)
    .join(', ');
  const first = warnings[0]?.message ?? '';
  const text = `catalog loaded with ${warnings.length} warning${warnings.length === 1 ? '' : 's'} (${byCode}); first: ${first}`;
  return text.length > maxMessage ? `${text.slice(0, maxMessage - 1)}…` : text;
}

/** The identity of what a source serves now: a change of it means the content must be read again. */
export function sourceVersionOf(
  kind: SourceKind,
  spec: CatalogSource['spec'],
  observed: { configMap?: KubeObject; servingPod?: KubeObject },
): string {
  switch (kind) {
    case 'configmap':
      return `configmap:${observed.configMap?.metadata.uid ?? ''}@${observed.configMap?.metadata.resourceVersion ?? ''}`;
    case 'grpc-address':
      return `grpc:${spec.address ?? ''}`;
    case 'grpc-image':
      return `image:${spec.image ?? ''}@${observed.servingPod?.metadata.uid ?? ''}`;
    case 'image':
      // The digest is only known after asking the registry (image-source.ts).
      return `image:${spec.image ?? ''}@`;
  }
}

/** How often a source is read again without being asked (undefined: only when it changes). */
export function rereadIntervalMs(
  kind: SourceKind,
  spec: CatalogSource['spec'],
  timing: CatalogTiming,
): number | undefined {
  if (kind === 'configmap') return undefined;
  return pollSettingOf(spec)?.intervalMs ?? timing.resyncMs;
}

/**
 * Whether the source must be read this round: it changed since the served index was built,
 * nothing is served yet, the last attempt failed, or a poll/resync is due.
 */
export function readNeeded(input: {
  version: string;
  sync: SyncRecord | undefined;
  record: CatalogIndexRecord | undefined;
  observedState: string | undefined;
  now: Date;
  intervalMs: number | undefined;
}): boolean {
  const { sync, record } = input;
  if (sync === undefined || sync.sourceVersion !== input.version) return true;
  if (record === undefined || record.digest !== sync.digest) return true;
  if (input.observedState !== 'READY') return true;
  if (input.intervalMs === undefined) return false;
  return input.now.getTime() - Date.parse(sync.fetchedAt) >= input.intervalMs;
}
