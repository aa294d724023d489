// Upstream's safety checks before a plan updates an existing CRD: no stored version may be
// dropped, and existing custom resources must stay valid under the new schema.
import type { KubeObject } from '../../../shared/kube/client.js';
import type { JsonObject, JsonValue } from '../../../shared/kube/json.js';
// kube-apiserver's CRD schema validation in TypeScript (shared with the devcluster): the same
// rules upstream OLM runs on existing CRs before a CRD update.
import { formatCause, validateAgainstSchema } from '../../../shared/kube/schema/index.js';
import { asCrd } from '../crds.js';

/** Upstream's refusal to drop a stored version: the message, or undefined when safe. */
export function crdStoredVersionProblem(
  existing: KubeObject,
  next: KubeObject,
): string | undefined {
  const stored = asCrd(existing).status?.storedVersions ?? [];
  const kept = new Set((asCrd(next).spec?.versions ?? []).map((v) => v.name));
  const dropped = stored.find((v) => !kept.has(v));
  if (dropped === undefined) return undefined;
  return `risk of data loss updating "${existing.metadata.name ?? ''}": new CRD removes version ${dropped} that is listed as a stored version on the existing CRD`;
}

/** Versions served by both the existing and the new CRD: their CRs must stay valid. */
export function versionsServedBeforeAndAfter(existing: KubeObject, next: KubeObject): string[] {
  const served = (crd: KubeObject): Set<string> =>
    new Set((asCrd(crd).spec?.versions ?? []).filter((v) => v.served !== false).map((v) => v.name));
  const before = served(existing);
  return [...served(next)].filter((v) => before.has(v));
}

/**
 * Upstream's check that existing custom resources validate against the new CRD's schema
 * (skipped when the new CRD converts through a webhook); the message names the CR and version.
 */
export function customResourceProblem(
  next: KubeObject,
  existing: readonly { version: string; items: readonly KubeObject[] }[],
): string | undefined {
  const spec = asCrd(next).spec ?? {};
  if (spec.conversion?.['strategy'] === 'Webhook') return undefined;
  for (const { version, items } of existing) {
    const schema = spec.versions?.find((v) => v.name === version)?.schema?.openAPIV3Schema;
    if (schema === undefined || schema === null || typeof schema !== 'object') continue;
    for (const item of items) {
      // The validator takes JSON: a CR and a CRD schema as read from the API are JSON.
      const causes = validateAgainstSchema(item as unknown as JsonValue, schema as JsonObject);
      if (causes.length === 0) continue;
      const name = item.metadata.namespace
        ? `${item.metadata.namespace}/${item.metadata.name ?? ''}`
        : (item.metadata.name ?? '');
      return `error validating existing CRs against new CRD's schema for "${next.metadata.name ?? ''}": error validating ${spec.group ?? ''}/${version}, Kind=${spec.names?.kind ?? ''} "${name}": updated validation is too restrictive: ${causes.map(formatCause).join(', ')}`;
    }
  }
  return undefined;
}
