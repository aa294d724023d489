// Who owns a CSV's APIs (upstream's crdOwnerConflicts and its replacement chain) and what a
// CSV's conversion webhooks may touch (upstream's createOrUpdateConversionWebhook checks). Pure.
import type { Csv } from '../csv-status.js';

/** Upstream's message for a CRD another CSV of the namespace owns. */
export const crdOwnerConflictMessage = 'conflicting CRD owner in namespace';

const copiedOf = (csv: Csv): boolean => csv.metadata.labels?.['olm.copiedFrom'] !== undefined;

/**
 * The names of the CSVs in `csv`'s replacement chain: itself, the CSVs replacing it (newer)
 * and the CSVs it replaces (older), as far as they are in the namespace; cycles end the walk.
 */
export function replacementChain(csv: Csv, csvs: readonly Csv[]): Set<string> {
  const byName = new Map(csvs.map((c) => [c.metadata.name ?? '', c] as const));
  const chain = new Set<string>([csv.metadata.name ?? '']);
  let current = csv.metadata.name ?? '';
  for (;;) {
    const newer = csvs.find((c) => c.spec?.replaces === current)?.metadata.name;
    if (newer === undefined || chain.has(newer)) break;
    chain.add(newer);
    current = newer;
  }
  let older = csv.spec?.replaces;
  while (older !== undefined && older !== '' && byName.has(older) && !chain.has(older)) {
    chain.add(older);
    older = byName.get(older)?.spec?.replaces;
  }
  return chain;
}

/**
 * Whether a CSV of the namespace outside `csv`'s replacement chain (copies aside) owns one of
 * the CRDs `csv` owns.
 */
export function crdOwnerConflict(csv: Csv, csvs: readonly Csv[]): boolean {
  const owned = new Set((csv.spec?.customresourcedefinitions?.owned ?? []).map((d) => d.name));
  if (owned.size === 0) return false;
  const chain = replacementChain(csv, csvs);
  return csvs.some(
    (other) =>
      !copiedOf(other) &&
      !chain.has(other.metadata.name ?? '') &&
      (other.spec?.customresourcedefinitions?.owned ?? []).some((d) => owned.has(d.name)),
  );
}

// Upstream's isSingletonOperator: AllNamespaces supported, every other mode not.
function allNamespacesOnly(csv: Csv): boolean {
  const modes = csv.spec?.installModes ?? [];
  return modes.every((m) => (m.type === 'AllNamespaces') === m.supported);
}

/**
 * Upstream's checks of a CSV's conversion webhooks before they are written, worded as its
 * installer's errors: the CSV supports AllNamespaces only, each names CRDs, and owns them.
 */
export function conversionWebhookProblem(csv: Csv): string | undefined {
  const conversions = (csv.spec?.webhookdefinitions ?? []).filter(
    (w) => w.type === 'ConversionWebhook',
  );
  if (conversions.length === 0) return undefined;
  if (!allNamespacesOnly(csv)) {
    return 'unable to manage conversion webhook: CSVs with conversion webhooks must support only AllNamespaces';
  }
  const owned = new Set((csv.spec?.customresourcedefinitions?.owned ?? []).map((d) => d.name));
  for (const hook of conversions) {
    const crds = hook.conversionCRDs ?? [];
    if (crds.length === 0) {
      return 'unable to manager conversion webhook: conversion webhook must have at least one CRD specified';
    }
    const foreign = crds.find((name) => !owned.has(name));
    if (foreign !== undefined) return `csv ${csv.metadata.name ?? ''} does not own CRD ${foreign}`;
  }
  return undefined;
}

/**
 * The CRDs whose conversion goes back to `None` when `csv` is deleted: those of its conversion
 * webhooks, unless a CSV of the namespace replaces it (the upgrade keeps converting).
 */
export function conversionCrdsToReset(csv: Csv, csvs: readonly Csv[]): string[] {
  const name = csv.metadata.name ?? '';
  if (csvs.some((c) => c.spec?.replaces === name)) return [];
  return [
    ...new Set(
      (csv.spec?.webhookdefinitions ?? [])
        .filter((w) => w.type === 'ConversionWebhook')
        .flatMap((w) => w.conversionCRDs ?? []),
    ),
  ];
}
