// A channel's graph as operator-registry validates it: the head, the replaces chain from it,
// stranded entries, dangling edges; and the upgrade edges the index precomputes.
import semver from 'semver';
import {
  channelEdges,
  skipRangeOptions,
  type CatalogChannel,
  type CatalogChannelEntry,
} from './model.js';
import { CatalogWarningCode as W } from './problems.js';
import {
  compareText,
  compareVersionsDesc,
  type DraftChannel,
  type DraftPackage,
  type WarningSink,
} from './draft.js';

/**
 * Finishes a channel: picks its head, orders its entries, reports graph irregularities and
 * computes its upgrade edges. `rangeMatches` caches skipRange matches across the package.
 */
export function finishChannel(
  pkg: DraftPackage,
  draft: DraftChannel,
  rangeMatches: Map<string, string[] | null>,
  warnings: WarningSink,
): CatalogChannel {
  const where = { package: pkg.name, channel: draft.name, origin: draft.origin };
  const byName = new Map(draft.entries.map((e) => [e.name, e]));
  const incoming = new Set<string>();
  const skipped = new Set<string>();
  for (const e of draft.entries) {
    if (e.replaces !== null) incoming.add(e.replaces);
    for (const s of e.skips) {
      incoming.add(s);
      skipped.add(s);
    }
  }
  const candidates = draft.entries.filter((e) => !incoming.has(e.name));
  let head: CatalogChannelEntry | undefined;
  if (candidates.length === 0) {
    warnings.add(
      W.ChannelNoHead,
      `channel "${draft.name}": no channel head found in graph (every entry is replaced or skipped by another); kept without a head, so it cannot be subscribed to`,
      where,
    );
  } else {
    candidates.sort((a, b) =>
      compareVersionsDesc(pkg.bundles.get(a.name), pkg.bundles.get(b.name)),
    );
    head = candidates[0];
    if (candidates.length > 1) {
      warnings.add(
        W.ChannelMultipleHeads,
        `channel "${draft.name}": multiple channel heads found in graph: ${candidates
          .map((c) => c.name)
          .sort(compareText)
          .join(', ')}; using the highest version, ${head?.name ?? ''}`,
        where,
      );
    }
  }

  // The replaces chain from the head, as operator-registry validates it.
  const chain: CatalogChannelEntry[] = [];
  const onChain = new Set<string>();
  for (let cur = head; cur !== undefined;) {
    chain.push(cur);
    onChain.add(cur.name);
    const next = cur.replaces;
    if (next === null || skipped.has(next)) break;
    if (onChain.has(next)) {
      warnings.add(
        W.ChannelReplacesCycle,
        `channel "${draft.name}": detected cycle in replaces chain of upgrade graph: ${[...chain.map((c) => c.name), next].join(' -> ')}`,
        where,
      );
      break;
    }
    cur = byName.get(next);
  }
  if (head !== undefined) {
    const stranded = draft.entries
      .filter((e) => !onChain.has(e.name) && !skipped.has(e.name))
      .map((e) => e.name)
      .sort(compareText);
    if (stranded.length > 0) {
      warnings.add(
        W.ChannelStrandedEntries,
        `channel "${draft.name}" contains one or more stranded bundles: ${stranded.join(', ')} (not on the replaces chain from the head, not skipped); kept`,
        where,
      );
    }
  }

  for (const e of draft.entries) {
    const at = { ...where, bundle: e.name };
    if (e.replaces !== null && !byName.has(e.replaces)) {
      const known = pkg.bundles.has(e.replaces) ? '' : ' nor a bundle of the package';
      warnings.add(
        W.ReplacesNotInChannel,
        `channel "${draft.name}": "${e.name}" replaces "${e.replaces}", which is not an entry of the channel${known}; the edge only serves installs of that exact CSV`,
        at,
      );
    }
    const missing = e.skips.filter((s) => !byName.has(s));
    if (missing.length > 0) {
      warnings.add(
        W.SkipsNotInChannel,
        `channel "${draft.name}": "${e.name}" skips ${missing.map((s) => `"${s}"`).join(', ')}, not entries of the channel; the edges only serve installs of those exact CSVs`,
        at,
      );
    }
    const bundle = pkg.bundles.get(e.name);
    const csvRange = bundle?.csv?.skipRange ?? null;
    if (e.skipRange !== null && csvRange !== null && csvRange !== e.skipRange) {
      warnings.add(
        W.SkipRangeMismatch,
        `channel "${draft.name}": entry "${e.name}" has skipRange "${e.skipRange}" but its CSV says "${csvRange}"; using the channel entry's`,
        at,
      );
    }
  }

  const rangeFroms = new Map<string, readonly string[]>();
  for (const e of draft.entries) {
    if (e.skipRange === null) continue;
    let matches = rangeMatches.get(e.skipRange);
    if (matches === undefined) {
      matches = bundlesInRange(pkg, e.skipRange);
      rangeMatches.set(e.skipRange, matches);
      if (matches === null) {
        warnings.add(
          W.SkipRangeInvalid,
          `skipRange "${e.skipRange}" of "${e.name}" is not a valid semver range; it yields no upgrade edges`,
          { ...where, bundle: e.name },
        );
      }
    }
    if (matches !== null && matches.length > 0) rangeFroms.set(e.name, matches);
  }

  const rest = draft.entries
    .filter((e) => !onChain.has(e.name))
    .sort((a, b) => compareVersionsDesc(pkg.bundles.get(a.name), pkg.bundles.get(b.name)));
  const entries = [...chain, ...rest];
  return {
    package: pkg.name,
    name: draft.name,
    head: head?.name ?? null,
    entries,
    edges: channelEdges(entries, rangeFroms),
    deprecation: draft.deprecation,
  };
}

// Names of the package's bundles whose version is in `range`, or null for an invalid range.
function bundlesInRange(pkg: DraftPackage, range: string): string[] | null {
  let parsed: semver.Range;
  try {
    parsed = new semver.Range(range, skipRangeOptions);
  } catch {
    return null;
  }
  const out: string[] = [];
  for (const b of pkg.bundles.values())
    if (b.parsed !== null && parsed.test(b.parsed)) out.push(b.name);
  return out.sort(compareText);
}
