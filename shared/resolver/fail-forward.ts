// The OperatorGroup upgrade strategy TechPreviewUnsafeFailForward, as upstream's
// resolver/fail_forward.go reads it: a namespace fails forward when its one OperatorGroup asks
// for it; a CSV's replacement chain (each CSV to the one whose spec.replaces names it) then
// decides what resolution and the CSV lifecycle may step over. Pure.
import { codes, upgradeStrategyOf } from '../api/index.js';

/** What these rules read of a CSV. */
export interface ChainCsv {
  metadata: { name?: string | undefined };
  spec?: { replaces?: string | undefined } | undefined;
  status?: { phase?: string | undefined } | undefined;
}

/**
 * Whether the namespace with these OperatorGroups fails forward: exactly one group, asking for
 * TechPreviewUnsafeFailForward (upstream treats zero or several groups as an error; here they
 * mean Default, and the OperatorGroup checks report them).
 */
export function failForwardEnabled(
  operatorGroups: readonly { spec?: { upgradeStrategy?: unknown } | undefined }[],
): boolean {
  const [only] = operatorGroups;
  return (
    operatorGroups.length === 1 &&
    only !== undefined &&
    upgradeStrategyOf(only) === codes.UpgradeStrategyName.TechPreviewUnsafeFailForward
  );
}

/** Each CSV name to the CSV whose spec.replaces names it. */
export function replacementMapping<C extends ChainCsv>(csvs: readonly C[]): Map<string, C> {
  const byReplaced = new Map<string, C>();
  for (const csv of csvs) {
    const replaces = csv.spec?.replaces;
    if (replaces !== undefined && replaces !== '') byReplaced.set(replaces, csv);
  }
  return byReplaced;
}

/**
 * The last CSV of `csv`'s replacement chain, or undefined when the chain loops or (with
 * `phase`) a CSV before the last is not in that phase.
 */
export function lastInReplacementChain<C extends ChainCsv>(
  csv: C,
  mapping: ReadonlyMap<string, C>,
  phase?: string,
): C | undefined {
  const seen = new Set<string>();
  let current = csv;
  for (;;) {
    const name = current.metadata.name ?? '';
    const next = mapping.get(name);
    if (next === undefined) return current;
    if (seen.has(name)) return undefined;
    if (phase !== undefined && current.status?.phase !== phase) return undefined;
    seen.add(name);
    current = next;
  }
}

/**
 * The CSVs resolution leaves out when failing forward: Replacing CSVs whose chain, all
 * Replacing, ends in a Failed CSV (the failed upgrade's predecessors; the Failed CSV itself
 * stays, as the installed CSV a new bundle may replace).
 */
export function replacedByFailure(csvs: readonly ChainCsv[]): Set<string> {
  const mapping = replacementMapping(csvs);
  const out = new Set<string>();
  for (const csv of csvs) {
    if (csv.status?.phase !== codes.CsvPhase.Replacing) continue;
    const last = lastInReplacementChain(csv, mapping, codes.CsvPhase.Replacing);
    if (last?.status?.phase === codes.CsvPhase.Failed) out.add(csv.metadata.name ?? '');
  }
  return out;
}

/**
 * CSVs an upgrade in progress is replacing, which resolution leaves out with either strategy:
 * no Subscription names the CSV, and its replacement chain ends in a CSV that a Subscription
 * names (`referenced`: per Subscription its currentCSV once that exists, else its installedCSV)
 * and that has not Failed. The CSV lifecycle
 * deletes such a CSV once its replacement succeeds; counting it meanwhile as an operator
 * installed without a Subscription made each resolution in that window fail (upstream fails
 * the same way when it happens to resolve then). A failed upgrade keeps its predecessor in,
 * so `Default` still reports the conflict.
 */
export function replacedByUpgrade(
  csvs: readonly ChainCsv[],
  referenced: ReadonlySet<string>,
): Set<string> {
  const mapping = replacementMapping(csvs);
  const out = new Set<string>();
  for (const csv of csvs) {
    const name = csv.metadata.name ?? '';
    if (referenced.has(name)) continue;
    const last = lastInReplacementChain(csv, mapping);
    if (last === undefined || last === csv) continue;
    if (last.status?.phase === codes.CsvPhase.Failed) continue;
    if (referenced.has(last.metadata.name ?? '')) out.add(name);
  }
  return out;
}
