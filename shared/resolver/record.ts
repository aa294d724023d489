// The handoff from the resolve function to the plan function: a namespace's latest resolution,
// put into the object mirror as the pseudo-kind `Resolution` (name = the namespace), so the plan
// function triggers on it like on any mirrored kind. The record carries no timestamps: the same
// resolution is the same record, and an unchanged record is never rewritten, so nothing loops.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Resolution, ResolvedBundle } from './model.js';

/** Kind of resolution records in the object mirror. */
export const resolutionKind = 'Resolution';

const catalogRefSchema = z.object({ name: z.string(), namespace: z.string() });

/** One bundle of a recorded resolution, with what the plan needs to find its manifests. */
export const RecordedBundleSchema = z.object({
  package: z.string(),
  name: z.string(),
  version: z.string(),
  catalog: catalogRefSchema,
  /** Digest of the catalog index the bundle was resolved from (its manifests are stored under it). */
  catalogDigest: z.string().nullable(),
  channel: z.string().nullable(),
  subscription: z.string().nullable(),
  action: z.enum(['install', 'upgrade', 'keep']),
  /** The installed CSV this bundle upgrades, or null. */
  replaces: z.string().nullable(),
  /**
   * The replaces edge the bundle declares in its channel of the catalog, or null: what upstream
   * writes into spec.replaces when the bundle upgrades nothing. Absent in records written before.
   */
  channelReplaces: z.string().nullable().optional(),
  /** Properties for the CSV's operatorframework.io/properties annotation. */
  properties: z.array(z.object({ type: z.string(), value: z.unknown() })),
  /** Names of other bundles of this resolution this one depends on. */
  requires: z.array(z.string()),
});
export type RecordedBundle = z.infer<typeof RecordedBundleSchema>;

/** A namespace's latest resolution. */
export const ResolutionRecordSchema = z.object({
  namespace: z.string(),
  status: z.enum(['resolved', 'unsatisfiable']),
  bundles: z.array(RecordedBundleSchema),
  problems: z.array(
    z.object({ subscription: z.string().nullable(), code: z.string(), message: z.string() }),
  ),
});
export type ResolutionRecord = z.infer<typeof ResolutionRecordSchema>;

function apiKey(a: { group: string; version: string; kind: string }): string {
  return `${a.group}/${a.version}/${a.kind}`;
}

/**
 * Which bundles of the resolution each bundle depends on: those providing an API it requires
 * (olm.gvk.required, required CRDs) or belonging to a package it requires.
 */
function dependenciesAmong(bundles: readonly ResolvedBundle[]): Map<string, string[]> {
  const byApi = new Map<string, string>();
  const byPackage = new Map<string, string>();
  for (const b of bundles) {
    byPackage.set(b.package, b.name);
    for (const api of b.bundle?.providedApis ?? []) byApi.set(apiKey(api), b.name);
  }
  const out = new Map<string, string[]>();
  for (const b of bundles) {
    const needs = new Set<string>();
    for (const api of b.bundle?.requiredApis ?? []) {
      const provider = byApi.get(apiKey(api));
      if (provider !== undefined) needs.add(provider);
    }
    for (const d of b.bundle?.dependencies ?? []) {
      const provider =
        d.type === 'olm.package'
          ? byPackage.get(d.packageName)
          : d.type === 'olm.gvk'
            ? byApi.get(apiKey(d))
            : undefined;
      if (provider !== undefined) needs.add(provider);
    }
    needs.delete(b.name);
    out.set(b.name, [...needs].sort());
  }
  return out;
}

/**
 * The record of `resolution`; `digestOf` names the index each catalog was resolved from,
 * `channelReplacesOf` the replaces edge of a bundle's channel entry (default: the bundle's).
 */
export function recordResolution(
  namespace: string,
  resolution: Resolution,
  digestOf: (catalog: { name: string; namespace: string }) => string | null,
  propertiesOf: (bundle: ResolvedBundle) => RecordedBundle['properties'],
  channelReplacesOf: (bundle: ResolvedBundle) => string | null = (b) => b.bundle?.replaces ?? null,
): ResolutionRecord {
  const requires = dependenciesAmong(resolution.bundles);
  return {
    namespace,
    status: resolution.status,
    bundles: resolution.bundles.map((b) => ({
      package: b.package,
      name: b.name,
      version: b.version,
      catalog: { name: b.catalog.name, namespace: b.catalog.namespace },
      catalogDigest: digestOf(b.catalog),
      channel: b.channel,
      subscription: b.subscription,
      action: b.action,
      replaces: b.replaces,
      channelReplaces: channelReplacesOf(b),
      properties: propertiesOf(b),
      requires: requires.get(b.name) ?? [],
    })),
    problems: resolution.problems.map((p) => ({
      subscription: p.subscription,
      code: p.code,
      message: p.message,
    })),
  };
}

/** A short stable hash of text, base36, for deterministic object names. */
export function shortHash(text: string, length = 5): string {
  const hex = createHash('sha256').update(text).digest('hex');
  return BigInt(`0x${hex.slice(0, 16)}`)
    .toString(36)
    .padStart(length, '0')
    .slice(-length);
}
